/**
 * The agent's `voicemail` setting through the API (validation, PATCH, export/import bundle) and
 * the machine-detection webhook's refusals, against the real API and PostgreSQL.
 */
import { startFakeTwilio, twilioSignature, type FakeTwilio } from '../fakes/twilio-server';
import { startHarness, type Harness } from '../support/harness';
import { defaultProviderEnv, FakePool } from '../support/speech-vendors';
import { configureTwilio } from '../support/telephony';

const ACCOUNT_SID = `AC${'9e'.repeat(16)}`;
const AUTH_TOKEN = 'voicemail-settings-auth-token-012';
let h: Harness;
let twilio: FakeTwilio;
const pool = new FakePool();

beforeAll(async () => {
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  h = await startHarness({ env: { ...(await defaultProviderEnv(pool)), TWILIO_API_BASE_URL: twilio.apiBaseUrl } });
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: '+15005550006' });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await Promise.all([twilio?.stop(), pool.stopAll()]);
});

describe('the agent setting voicemail', () => {
  it('defaults to null, validates, applies defaults and is replaced as a whole by PATCH', async () => {
    const plain = await h.request('POST', '/api/agents', { body: { name: 'vm-none', prompt: 'p' } });
    expect(plain.body.voicemail).toBeNull();

    const cases: Array<[unknown, RegExp]> = [
      [{ detect: true, action: 'leave_message' }, /^voicemail\.message: is required when action is leave_message/],
      [{ detect: true, action: 'voicemail' }, /^voicemail\.action: /],
      [{ detect: 'yes' }, /^voicemail\.detect: /],
      [{ detect: true, extra: 1 }, /voicemail/],
    ];
    for (const [voicemail, detail] of cases) {
      const res = await h.request('POST', '/api/agents', { body: { name: 'vm-bad', prompt: 'p', voicemail } });
      expect({ voicemail, status: res.status, detail: res.body.detail }).toEqual({ voicemail, status: 422, detail: expect.stringMatching(detail) });
    }

    const created = await h.request('POST', '/api/agents', { body: { name: 'vm-agent', prompt: 'p', voicemail: { detect: true } } });
    expect(created.status).toBe(201);
    expect(created.body.voicemail).toEqual({ detect: true, action: 'hang_up', message: null });
    const patched = await h.request('PATCH', `/api/agents/${created.body.id}`, { body: { voicemail: { action: 'leave_message', message: '  Hi {{first_name}}.  ' } } });
    expect(patched.status).toBe(200);
    expect(patched.body.voicemail).toEqual({ detect: true, action: 'leave_message', message: 'Hi {{first_name}}.' });
    const off = await h.request('PATCH', `/api/agents/${created.body.id}`, { body: { voicemail: null } });
    expect(off.body.voicemail).toBeNull();
  });

  it('travels in the export bundle and comes back on import', async () => {
    const agent = (await h.request('POST', '/api/agents', { body: { name: 'vm-export', prompt: 'p', voicemail: { detect: true, action: 'leave_message', message: 'Call us back.' } } })).body;
    const bundle = (await h.request('GET', `/api/agents/${agent.id}/export`)).body;
    expect(bundle.agent.voicemail).toEqual({ detect: true, action: 'leave_message', message: 'Call us back.' });
    bundle.agent.name = 'vm-imported';
    const imported = await h.request('POST', '/api/agents/import', { body: bundle });
    expect(imported.status).toBe(201);
    expect(imported.body.agent.voicemail).toEqual({ detect: true, action: 'leave_message', message: 'Call us back.' });
  });
});

describe('POST /telephony/{provider}/machine/{call_id}', () => {
  const url = (callId: string) => `${h.api.url}/telephony/twilio/machine/${callId}`;
  const post = (target: string, params: Record<string, string>, signature?: string) =>
    fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(signature ? { 'x-twilio-signature': signature } : {}) },
      body: new URLSearchParams(params).toString(),
    });

  it('refuses an unsigned or forged result (403) and accepts a signed one for an unknown call with 204', async () => {
    const callId = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
    const params = { CallSid: `CA${'1'.repeat(32)}`, AccountSid: ACCOUNT_SID, AnsweredBy: 'machine_start' };
    const unsigned = await post(url(callId), params);
    expect(unsigned.status).toBe(403);
    expect(await unsigned.json()).toEqual({ detail: 'Missing X-Twilio-Signature' });
    expect((await post(url(callId), params, twilioSignature('wrong-token', url(callId), params))).status).toBe(403);
    expect((await post(url(callId), params, twilioSignature(AUTH_TOKEN, url(callId), params))).status).toBe(204);
  });
});
