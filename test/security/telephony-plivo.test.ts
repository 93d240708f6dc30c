/**
 * Plivo's requests must prove they come from Plivo, and its streams must carry our per-call
 * credentials: forged, missing and replayed signatures on every /telephony/plivo/… route are
 * refused (403 {detail}, no call created), unauthenticated streams are closed and counted on the
 * gateway's /healthz, and a malformed message on a live stream is counted and ignored without
 * dropping the call. Real API, worker, Temporal and PostgreSQL; the gateway in its own process.
 */
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { MULAW_8K } from '../../src/audio/format';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { setLogLevel } from '../../src/shared/logger';
import { getFreePort } from '../../src/temporal/dev-server';
import { streamToken } from '../../src/gateway/stream/stream-token';
import { parseExtraHeaders } from '../../src/providers/telephony/plivo/media-messages';
import { plivoStreamCredentials, plivoStreamExtraHeaders } from '../../src/providers/telephony/plivo/stream-auth';
import { startFakeCartesia, type FakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { connectPlivoCaller } from '../fakes/plivo-caller';
import { plivoSignatureV3, startFakePlivo, type FakePlivo } from '../fakes/plivo-server';
import { createAgent, eventually } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { configurePlivo } from '../support/telephony';
import { killHard, spawnGatewayProcess } from '../support/worker-process-control';
import { speechFakesEnv } from '../support/voice-stack';

const AUTH_ID = 'MASECURITYTESTAUTHID';
const AUTH_TOKEN = 'plivo-security-test-token-0123456';
const OUR_NUMBER = '+918047491899';

let h: Harness;
let plivo: FakePlivo;
let deepgram: FakeDeepgram;
let cartesia: FakeCartesia;
let openai: FakeOpenAI;
let gateway: { child: ChildProcess; url: string };

beforeAll(async () => {
  setLogLevel('error');
  plivo = await startFakePlivo({ authId: AUTH_ID, authToken: AUTH_TOKEN });
  deepgram = await startFakeDeepgram({ apiKey: 'dg-key' });
  cartesia = await startFakeCartesia({ apiKey: 'ca-key' });
  openai = await startFakeOpenAI();
  const gatewayPort = await getFreePort();
  const vendors = speechFakesEnv(deepgram, cartesia, openai);
  h = await startHarness({ worker: true, env: { PLIVO_API_BASE_URL: plivo.apiBaseUrl, ...vendors, GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}` } });
  gateway = await spawnGatewayProcess(h, { ...vendors, GATEWAY_PORT: String(gatewayPort) });
  await configurePlivo(h, { authId: AUTH_ID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER });
  await createAgent(h.db, h.box, { name: 'guarded', greeting: 'Hello, this line is guarded.', pipeline_settings: { ...PIPELINE_DEFAULTS } });
}, 120_000);

afterAll(async () => {
  if (gateway) await killHard(gateway.child);
  await h?.stop();
  await Promise.all([plivo?.stop(), deepgram?.stop(), cartesia?.stop(), openai?.stop()]);
});

const callCount = async () => h.db.models.Call.count();
const streamStats = async () => ((await (await fetch(`${gateway.url.replace(/^ws/, 'http')}/healthz`)).json()) as any).streams?.plivo ?? {};

/** POSTs a form to the API as Plivo would, signed with `sign` (or not at all). */
async function post(path: string, params: Record<string, string>, sign: { token?: string; url?: string; nonce?: string; signature?: string; omitNonce?: boolean } | null) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (sign) {
    const nonce = sign.nonce ?? String(crypto.randomInt(1e9, 1e10));
    headers['x-plivo-signature-v3'] = sign.signature ?? plivoSignatureV3(sign.token ?? AUTH_TOKEN, 'POST', sign.url ?? `${h.api.url}${path}`, params, nonce);
    if (!sign.omitNonce) headers['x-plivo-signature-v3-nonce'] = nonce;
  }
  const res = await fetch(`${h.api.url}${path}`, { method: 'POST', headers, body: new URLSearchParams(params).toString() });
  const text = await res.text();
  return { status: res.status, body: (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

const inboundParams = () => ({ CallUUID: crypto.randomUUID(), From: '919812345678', To: OUR_NUMBER.slice(1), CallStatus: 'ringing', Direction: 'inbound', Event: 'StartApp' });

describe('Plivo webhook signatures', () => {
  it('refuses missing, forged, tampered, mis-addressed and nonce-less requests on every route, creating nothing', async () => {
    const before = await callCount();
    const id = crypto.randomUUID();
    const warm = `/telephony/plivo/warm/${id}`;
    const routes = [
      '/telephony/plivo/inbound/guarded',
      `/telephony/plivo/answer/${id}`,
      `/telephony/plivo/status/${id}`,
      '/telephony/plivo/status',
      // A warm transfer's callbacks (the hold URL also as the conference's waitSound).
      `${warm}/hold?audio=https%3A%2F%2Fa.example%2Ft.wav`,
      `${warm}/hold?audio=https%3A%2F%2Fa.example%2Ft.wav&wait=1`,
      `${warm}/answer`,
      `${warm}/events`,
      `${warm}/join`,
      `${warm}/return`,
    ];
    const refusals: Array<{ route: string; status: number; detail: string }> = [];
    for (const route of routes) {
      const params = inboundParams();
      const nonce = '123456789';
      const good = plivoSignatureV3(AUTH_TOKEN, 'POST', `${h.api.url}${route}`, params, nonce);
      const attempts = [
        await post(route, params, null),
        await post(route, params, { token: 'not-the-auth-token' }),
        await post(route, { ...params, From: '911111111111' }, { signature: good, nonce }),
        await post(route, params, { url: `https://attacker.example${route}` }),
        await post(route, params, { omitNonce: true }),
        await post(route, params, { signature: good, nonce: '987654321' }),
      ];
      for (const a of attempts) refusals.push({ route, status: a.status, detail: (a.body as { detail: string }).detail });
    }
    expect(refusals).toHaveLength(routes.length * 6);
    for (const r of refusals) expect(r.status).toBe(403);
    const details = refusals.slice(0, 6).map((r) => r.detail);
    expect(details).toEqual([
      'Missing X-Plivo-Signature-V3',
      'Invalid X-Plivo-Signature-V3',
      'Invalid X-Plivo-Signature-V3',
      'Invalid X-Plivo-Signature-V3',
      'Missing X-Plivo-Signature-V3-Nonce',
      'Invalid X-Plivo-Signature-V3',
    ]);
    expect(await callCount()).toBe(before);
  });

  it('accepts a correctly signed request, also when the header lists several signatures', async () => {
    const params = inboundParams();
    const nonce = '55501';
    const route = '/telephony/plivo/inbound/guarded';
    const good = plivoSignatureV3(AUTH_TOKEN, 'POST', `${h.api.url}${route}`, params, nonce);
    const old = plivoSignatureV3('previous-token', 'POST', `${h.api.url}${route}`, params, nonce);
    const res = await post(route, params, { signature: `${old},${good}`, nonce });
    expect(res.status).toBe(200);
    expect(res.body).toContain('<Stream');
    const { callId } = plivoStreamCredentials(parseExtraHeaders(/extraHeaders="([^"]+)"/.exec(res.body as string)![1]!))!;
    expect((await h.request('GET', `/api/calls/${callId}`)).body).toMatchObject({ provider: 'plivo', provider_call_sid: params.CallUUID, status: 'ringing' });
    await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
  });
});

describe('Plivo media streams', () => {
  const streamUrl = () => `${gateway.url}/media/plivo`;

  it('closes unauthenticated streams and counts them', async () => {
    const before = await streamStats();
    const callId = crypto.randomUUID();
    const attempts = [
      // No credentials at all.
      { extraHeaders: '' },
      // A token for another call.
      { extraHeaders: plivoStreamExtraHeaders(callId, streamToken('some-other-secret', callId)) },
      // A well-formed token that is simply made up.
      { extraHeaders: plivoStreamExtraHeaders(callId, crypto.randomBytes(32).toString('base64url')) },
    ];
    for (const a of attempts) {
      const caller = await connectPlivoCaller({ url: streamUrl(), format: MULAW_8K, ...a });
      const closed = await caller.closed;
      expect(closed).toMatchObject({ by: 'gateway', code: 1008 });
      expect(caller.played).toEqual([]);
    }
    const after = await eventually(async () => {
      const s = await streamStats();
      return (s.rejected?.unauthenticated ?? 0) - (before.rejected?.unauthenticated ?? 0) >= 3 ? s : null;
    }, 5000);
    expect(after.rejected.unauthenticated - (before.rejected?.unauthenticated ?? 0)).toBe(3);
  });

  it('closes a valid token for a call that does not exist, and counts it', async () => {
    const before = await streamStats();
    const callId = crypto.randomUUID();
    const secret = h.config.JWT_SECRET!;
    const caller = await connectPlivoCaller({ url: streamUrl(), format: MULAW_8K, extraHeaders: plivoStreamExtraHeaders(callId, streamToken(secret, callId)) });
    expect(await caller.closed).toMatchObject({ by: 'gateway', code: 1008 });
    await eventually(async () => ((await streamStats()).rejected?.unknown_or_finished_call ?? 0) > (before.rejected?.unknown_or_finished_call ?? 0), 5000);
  });

  it('counts and ignores malformed messages on a live call, which goes on', async () => {
    const fake = await plivo.simulateInbound({ answerUrl: `${h.api.url}/telephony/plivo/inbound/guarded`, from: '+919812345670', to: OUR_NUMBER });
    expect(fake.errors).toEqual([]);
    const caller = fake.caller! as Awaited<ReturnType<typeof connectPlivoCaller>>;
    await eventually(async () => caller.speechFrames().length > 5, 15_000, 50);
    const before = await streamStats();
    for (const garbage of ['not json', '{"event":"media","streamId":"x"}', '{"event":"playedStream"}', JSON.stringify({ event: 'media', streamId: caller.streamId, media: { payload: '!!' } })]) {
      caller.sendRaw(garbage);
    }
    const after = await eventually(async () => {
      const s = await streamStats();
      return s.invalid_messages - (before.invalid_messages ?? 0) >= 4 ? s : null;
    }, 5000);
    expect(after.invalid_messages - before.invalid_messages).toBe(4);
    // The call is still up: the stream open, the call in progress.
    await new Promise((r) => setTimeout(r, 500));
    expect(caller.isOpen).toBe(true);
    const { callId } = plivoStreamCredentials(parseExtraHeaders(fake.stream!.extraHeaders))!;
    expect((await h.request('GET', `/api/calls/${callId}`)).body.status).toBe('in_progress');
    await caller.hangup();
    await fake.ended;
  }, 60_000);
});
