/**
 * Telephony requests an attacker can send, for every vendor with a fake: replayed webhooks
 * (idempotent by the provider's call id, also when replays race), webhooks without a call id or
 * with malformed fields (4xx `{detail}`, never a 500), forged or missing signatures (403, nothing
 * created), and media streams that do not authenticate (closed, counted on the gateway's /healthz).
 * Real API, worker, PostgreSQL, Temporal and media gateway; the vendor is its local fake.
 */
import { startGateway, type RunningGateway } from '../../src/gateway/server';
import { setLogLevel } from '../../src/shared/logger';
import { getFreePort } from '../../src/temporal/dev-server';
import { fakeTelephonyProviders, startFakeTelephony, type FakeTelephony } from '../fakes/telephony-fakes';
import { createAgent } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { defaultProviderEnv, FakePool } from '../support/speech-vendors';

const OUR_NUMBER = '+15005550006';
let sequence = 0;
/** A fresh provider call id, in a shape every vendor's ids have (letters and digits). */
const newProviderCallId = () => `CA${Date.now().toString(16)}${(++sequence).toString(16).padStart(6, '0')}${'0'.repeat(12)}`.slice(0, 34);

describe.each(fakeTelephonyProviders())('%s webhooks and streams under attack', (provider) => {
  let h: Harness;
  let phone: FakeTelephony;
  let gateway: RunningGateway;
  let inboundUrl: string;
  // The agent's default speech providers must be configured, or inbound calls get the apology.
  const speechFakes = new FakePool();

  beforeAll(async () => {
    setLogLevel('error');
    phone = await startFakeTelephony(provider);
    const gatewayPort = await getFreePort();
    const speechEnv = await defaultProviderEnv(speechFakes);
    h = await startHarness({ worker: true, env: { ...speechEnv, ...phone.env, GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}` } });
    gateway = await startGateway(
      h.gatewayDeps(),
      gatewayPort,
      '127.0.0.1',
    );
    const res = await h.request('PUT', '/api/settings/telephony', { body: { provider, public_base_url: h.api.url, ...phone.settings(OUR_NUMBER) } });
    expect(res.status).toBe(200);
    await createAgent(h.db, h.box, { name: 'front-desk' });
    inboundUrl = `${h.api.url}/telephony/${provider}/inbound/front-desk`;
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await h?.stop();
    await phone?.stop();
    await speechFakes.stopAll();
  });

  const callsWith = (providerCallId: string) => h.db.models.Call.count({ where: { provider, provider_call_sid: providerCallId } });
  const callCount = () => h.db.models.Call.count();
  const inbound = (fields: { providerCallId?: string; from?: string; to?: string }, auth?: 'valid' | 'forged' | 'none') =>
    phone.postWebhook(inboundUrl, { from: '+14155550111', to: OUR_NUMBER, ...fields }, auth);

  it('answers a replayed inbound webhook with the same document and creates no second call, also when replays race', async () => {
    const id = newProviderCallId();
    const first = await inbound({ providerCallId: id });
    const connect = phone.readConnect(first);
    expect(connect).not.toBeNull();
    const again = await inbound({ providerCallId: id });
    expect(again.body).toBe(first.body);
    expect(await callsWith(id)).toBe(1);

    const raced = newProviderCallId();
    const answers = await Promise.all(Array.from({ length: 6 }, () => inbound({ providerCallId: raced })));
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(phone.readConnect(answers[0]!)).not.toBeNull();
    expect(await callsWith(raced)).toBe(1);
  });

  it('refuses a webhook without the provider call id: 400 {detail}, nothing created', async () => {
    const before = await callCount();
    const res = await inbound({});
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({ detail: expect.stringMatching(/missing/) });
    expect(await callCount()).toBe(before);
  });

  it.each([
    ['a caller number that is not E.164', { from: '4155550111' }],
    ['a called number that is not E.164', { to: 'our number' }],
    ['an oversized number', { from: `+1${'5'.repeat(5000)}` }],
    ['a NUL byte in a number', { from: '+1415555\u00000111' }],
    ['an oversized call id', { providerCallId: 'C'.repeat(5000) }],
  ])('refuses %s with 422 {detail}, never a 500', async (_what, fields) => {
    const before = await callCount();
    const res = await inbound({ providerCallId: newProviderCallId(), ...fields });
    expect(res.status).toBe(422);
    expect(JSON.parse(res.body)).toEqual({ detail: expect.any(String) });
    expect(await callCount()).toBe(before);
  });

  it('answers 404 {detail} for a provider it does not know', async () => {
    const res = await fetch(`${h.api.url}/telephony/acme/inbound/front-desk`, { method: 'POST' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: expect.stringContaining('acme') });
  });

  // Only for vendors that sign; one that cannot (Exotel) authenticates its streams instead (below).
  if (fakeTelephonyProviders((f) => f.signsWebhooks).includes(provider)) it('refuses forged and unsigned webhooks with 403 {detail}, every one of them, creating nothing', async () => {
    const before = await callCount();
    const attempts = [
      ...Array.from({ length: 10 }, () => inbound({ providerCallId: newProviderCallId() }, 'forged')),
      ...Array.from({ length: 10 }, () => inbound({ providerCallId: newProviderCallId() }, 'none')),
      ...Array.from({ length: 5 }, () => phone.postWebhook(`${h.api.url}/telephony/${provider}/status`, { providerCallId: newProviderCallId(), status: 'completed' }, 'forged')),
    ];
    const answers = await Promise.all(attempts);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 403));
    for (const a of answers) expect(JSON.parse(a.body)).toEqual({ detail: expect.any(String) });
    expect(await callCount()).toBe(before);
  });

  it('closes media streams that do not authenticate, and counts them', async () => {
    const health = async () => (await (await fetch(`${gateway.url.replace('ws:', 'http:')}/healthz`)).json()) as any;
    const rejected = async () => (await health()).streams[provider]?.rejected ?? {};
    const before = await rejected();
    const live = phone.readConnect(await inbound({ providerCallId: newProviderCallId() }))!;
    const attempts = [
      { ...live, token: 'not-the-token' },
      { ...live, token: '' },
      { ...live, callId: '00000000-0000-4000-8000-000000000000' },
    ];
    for (const stream of attempts) {
      const caller = await phone.connectCaller(stream);
      expect((await caller.closed).code).toBe(1008);
    }
    const after = await rejected();
    expect((after.unauthenticated ?? 0) - (before.unauthenticated ?? 0)).toBe(3);
  });
});
