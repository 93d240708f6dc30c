/**
 * POST /api/calls/outbound against the fake Twilio over real sockets: the API places the call
 * with the official SDK, the fake plays it (signed status callbacks, signed TwiML fetch, a
 * Media Streams connection to a stand-in gateway), and the call workflow on a real Temporal
 * worker moves the call record. Also max_concurrent, enforced through PostgreSQL.
 */
import { Op } from 'sequelize';
import { callWorkflowId, stateQuery } from '../../workflows/call-definitions';
import { startApi } from '../../src/api/server';
import { connectDatabase } from '../../src/db/database';
import { verifyStreamToken } from '../../src/gateway/stream/stream-token';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { createAgent, eventually } from '../support/fixtures';
import { configureTwilio } from '../support/telephony';
import { startHarness, type Harness } from '../support/harness';
import { defaultProviderEnv, FakePool } from '../support/speech-vendors';
import { startMediaStandIn, type MediaStandIn, STAND_IN_ENV } from '../support/media-stand-in';

const ACCOUNT_SID = `AC${'0f'.repeat(16)}`;
const AUTH_TOKEN = 'outbound-test-auth-token-0123456789';
const OUR_NUMBER = '+15005550006';
const CALLEE = '+14155550123';

let h: Harness;
let twilio: FakeTwilio;
let gateway: MediaStandIn;
// The agents' default providers must be configured, or calls are refused before dialling.
const speechFakes = new FakePool();
let speechEnv: Record<string, string>;

beforeAll(async () => {
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  gateway = await startMediaStandIn();
  speechEnv = await defaultProviderEnv(speechFakes);
  h = await startHarness({ env: { ...speechEnv, ...STAND_IN_ENV, TWILIO_API_BASE_URL: twilio.apiBaseUrl, GATEWAY_PUBLIC_URL: gateway.url }, worker: true });
  await createAgent(h.db, h.box, { name: 'sales-bot' });
  await createAgent(h.db, h.box, { name: 'support-bot' });
});
afterAll(async () => {
  await h?.stop();
  await twilio?.stop();
  await gateway?.stop();
  await speechFakes.stopAll();
});
beforeEach(async () => {
  twilio.setOutcome('answer');
  await configure();
});
afterEach(async () => {
  await endActiveCalls();
  await h.db.models.TelephonyEndpoint.destroy({ where: {} });
});

const configure = (fields: Record<string, unknown> = {}) =>
  configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, fields);

const dial = (body: Record<string, unknown>) => h.request('POST', '/api/calls/outbound', { body: { phone_number: CALLEE, agent_name: 'sales-bot', ...body } });

async function endActiveCalls() {
  const active = await h.db.models.Call.findAll({ where: { status: { [Op.in]: ['ringing', 'in_progress'] } }, attributes: ['id'] });
  await Promise.all(active.map((row) => h.request('POST', '/api/calls/end', { body: { call_id: row.get('id') } })));
}

async function getCall(callId: string) {
  const res = await h.request('GET', `/api/calls/${callId}`);
  expect(res.status).toBe(200);
  return res.body;
}

const waitForStatus = (callId: string, status: string, timeoutMs = 15_000) =>
  eventually(async () => {
    const call = await getCall(callId);
    return call.status === status && call;
  }, timeoutMs);

async function callEvents(callId: string) {
  const res = await h.request('GET', `/api/calls/${callId}/events`);
  return res.body as Array<{ event_type: string; data: any }>;
}

const workflowState = (callId: string) => h.temporal.workflow.getHandle(callWorkflowId(callId)).query(stateQuery);
const row = async (callId: string) => (await h.db.models.Call.findByPk(callId))!.get({ plain: true });
/** The fake's record of the call the API created for `callId`. */
const fakeCall = async (callId: string) => twilio.call((await row(callId)).provider_call_sid!)!;
const latestCallTo = async (phone: string) =>
  (await h.db.models.Call.findOne({ where: { phone_number: phone }, order: [['created_at', 'DESC']] }))!.get({ plain: true });

describe('placing a call', () => {
  it('dials through Twilio, connects the stream with a valid token, and follows the status callbacks to completed', async () => {
    const res = await dial({ custom_parameters: { name: 'Ada', order: 42 } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ status: 'initiated', call_id: expect.any(String), provider_response: { sid: expect.stringMatching(/^CA/), status: 'queued' } });
    const callId = res.body.call_id;
    expect((await row(callId)).provider_call_sid).toBe(res.body.provider_response.sid);

    // What Twilio was asked to do.
    const created = twilio.call(res.body.provider_response.sid)!;
    expect(created.to).toBe(CALLEE);
    expect(created.from).toBe(OUR_NUMBER);
    expect(created.params.Url).toBe(`${h.api.url}/telephony/twilio/answer/${callId}`);
    expect(created.params.StatusCallback).toBe(`${h.api.url}/telephony/twilio/status/${callId}`);
    expect(created.statusCallbackEvents.sort()).toEqual(['answered', 'completed', 'initiated', 'ringing']);

    // Answered: the TwiML fetch connects the audio stream to the gateway with call_id + token.
    const stream = await eventually(async () => gateway.streamFor(callId));
    expect(stream.path).toBe('/media/twilio');
    expect(stream.callSid).toBe(created.sid);
    expect(verifyStreamToken(h.config.JWT_SECRET!, callId, stream.customParameters.token)).toBe(true);
    // The workflow took the `answered` callback (the record follows once media flows).
    await eventually(async () => (await workflowState(callId)).status === 'in_progress');
    expect(await getCall(callId)).toMatchObject({ direction: 'outbound', phone_number: CALLEE, agent_name: 'sales-bot' });
    expect(created.callbacks.filter((c) => c.kind !== 'stream-status').every((c) => c.status >= 200 && c.status < 300)).toBe(true);

    // The callee hangs up: the stream closes and Twilio reports completed.
    gateway.hangup(callId);
    const done = await waitForStatus(callId, 'completed');
    expect(done.end_reason).toBe('user_ended');
    expect(done.end_time).not.toBeNull();
    expect(done.start_time).not.toBeNull();
    const providerStatuses = (await callEvents(callId)).filter((e) => e.event_type === 'call_status' && e.data.source === 'provider').map((e) => e.data.provider_status);
    expect(providerStatuses).toEqual(['initiated', 'ringing', 'in-progress', 'completed']);
    expect((await row(callId)).context).toEqual({ name: 'Ada', order: 42 });
  });

  it.each([
    ['no-answer', '+14155550201', 'no_answer'],
    ['busy', '+14155550202', 'no_answer'],
    ['failed', '+14155550203', 'failed'],
  ] as const)('a callee outcome %s ends the call %s', async (outcome, number, status) => {
    twilio.setOutcome(outcome, number);
    const res = await dial({ phone_number: number });
    expect(res.status).toBe(201);
    const call = await waitForStatus(res.body.call_id, status);
    expect(call.start_time).toBeNull();
    const events = await callEvents(res.body.call_id);
    expect(events.some((e) => e.event_type === 'call_status' && e.data.provider_status === outcome)).toBe(true);
  });

  it('accepts the spec alias provider_a', async () => {
    const res = await dial({ provider: 'provider_a' });
    expect(res.status).toBe(201);
    expect((await row(res.body.call_id)).provider).toBe('twilio');
  });

  it('ends the Twilio call when the call is ended through the API', async () => {
    twilio.setOutcome({ outcome: 'answer', ringMs: 60_000 }, '+14155550301');
    const res = await dial({ phone_number: '+14155550301' });
    expect(res.status).toBe(201);
    await eventually(async () => (await fakeCall(res.body.call_id)).status === 'ringing');
    const ended = await h.request('POST', '/api/calls/end', { body: { call_id: res.body.call_id } });
    expect(ended.status).toBe(200);
    expect(ended.body.status).toBe('no_answer');
    await eventually(async () => (await fakeCall(res.body.call_id)).status === 'canceled');
  });
});

describe('refusals', () => {
  it('answers 502 with Twilio’s message and code when Twilio refuses the call, and records it failed', async () => {
    const res = await dial({ phone_number: '+14155550401', caller_id: '12345' });
    expect(res.status).toBe(502);
    expect(res.body.detail).toContain("Invalid 'From' Phone Number: 12345");
    expect(res.body.detail).toContain('21212');
    const call = await latestCallTo('+14155550401');
    expect(call.status).toBe('failed');
    expect(call.end_reason).toBe('error');
    const events = await callEvents(call.id);
    expect(events.find((e) => e.event_type === 'call_status' && e.data.status === 'failed')?.data).toMatchObject({
      source: 'create_call',
      error: "Invalid 'From' Phone Number: 12345",
      code: 21212,
    });
  });

  it('says to check the credentials when Twilio rejects them', async () => {
    await configure({ twilio_auth_token: 'not-the-right-token' });
    const res = await dial({ phone_number: '+14155550402' });
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/credentials/i);
    expect(res.body.detail).toContain('twilio_auth_token');
    expect((await latestCallTo('+14155550402')).status).toBe('failed');
  });

  it('needs a configured provider with credentials (400 naming what to set)', async () => {
    await h.db.models.TelephonySettings.destroy({ where: {} });
    const none = await dial({});
    expect(none.status).toBe(400);
    expect(none.body.detail).toMatch(/No telephony provider is configured/);

    await configure({ twilio_auth_token: null, twilio_account_sid: null });
    const noCreds = await dial({});
    expect(noCreds.status).toBe(400);
    expect(noCreds.body.detail).toContain('twilio_account_sid');
    expect(noCreds.body.detail).toContain('twilio_auth_token');
    expect(await h.db.models.Call.count({ where: { phone_number: CALLEE, status: 'ringing' } })).toBe(0);
  });

  it('answers 404 for an unknown agent', async () => {
    const res = await dial({ agent_name: 'ghost-bot' });
    expect(res.status).toBe(404);
    expect(res.body.detail).toBe('Agent ghost-bot not found');
  });

  it('says which settings a vendor lacks, and refuses unknown providers with 422 naming provider', async () => {
    // Exotel carries calls: without its credentials the answer says which settings are missing.
    for (const provider of ['exotel', 'provider_b']) {
      const res = await dial({ provider });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^Exotel is not configured: exotel_account_sid, exotel_api_key, exotel_api_token are not set/);
    }
    // Plivo carries calls: without its credentials the answer says which settings are missing.
    for (const provider of ['plivo', 'provider_c']) {
      const res = await dial({ provider });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^Plivo is not configured: plivo_auth_id, plivo_auth_token are not set/);
    }
    const unknown = await dial({ provider: 'carrier-pigeon' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail).toMatch(/^provider:/);
    const badNumber = await dial({ phone_number: '0800 123' });
    expect(badNumber.status).toBe(422);
    expect(badNumber.body.detail).toMatch(/^phone_number:/);
  });

  it('answers 503 when Twilio cannot be reached', async () => {
    const offline = await startHarness({ env: { ...speechEnv, ...STAND_IN_ENV, TWILIO_API_BASE_URL: 'http://127.0.0.1:9', GATEWAY_PUBLIC_URL: gateway.url }, worker: true });
    try {
      await createAgent(offline.db, offline.box, { name: 'sales-bot' });
      const put = await offline.request('PUT', '/api/settings/telephony', {
        body: { provider: 'twilio', public_base_url: offline.api.url, twilio_account_sid: ACCOUNT_SID, twilio_auth_token: AUTH_TOKEN, twilio_phone_number: OUR_NUMBER },
      });
      expect(put.status).toBe(200);
      const res = await offline.request('POST', '/api/calls/outbound', { body: { phone_number: CALLEE, agent_name: 'sales-bot' } });
      expect(res.status).toBe(503);
      expect(res.body.detail).toMatch(/Twilio could not be reached/);
      const call = (await offline.db.models.Call.findOne())!.get({ plain: true });
      expect(call.status).toBe('failed');
    } finally {
      await offline.stop();
    }
  });
});

describe('caller ID', () => {
  const fromOf = async (res: { status: number; body: any }) => {
    expect(res.status).toBe(201);
    return twilio.call(res.body.provider_response.sid)!.from;
  };

  it('uses caller_id, else the agent’s active endpoint, else the provider number', async () => {
    expect(await fromOf(await dial({ caller_id: '+15005550009' }))).toBe('+15005550009');

    const endpoint = await h.request('POST', '/api/settings/endpoints', {
      body: { phone_number: '+15005550007', provider: 'twilio', outbound_agent_name: 'sales-bot' },
    });
    expect(endpoint.status).toBe(201);
    await h.request('POST', '/api/settings/endpoints', { body: { phone_number: '+15005550008', provider: 'twilio', outbound_agent_name: 'support-bot' } });
    expect(await fromOf(await dial({}))).toBe('+15005550007');
    expect(await fromOf(await dial({ agent_name: 'support-bot' }))).toBe('+15005550008');
    expect(await fromOf(await dial({ caller_id: '+15005550009' }))).toBe('+15005550009');

    // An inactive endpoint is not used.
    await h.request('PUT', `/api/settings/endpoints/${endpoint.body.id}`, { body: { is_active: false } });
    expect(await fromOf(await dial({}))).toBe(OUR_NUMBER);
  });

  it('answers 422 naming caller_id when there is no number to call from', async () => {
    await configure({ twilio_phone_number: null });
    const res = await dial({});
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/^caller_id: no number to call from/);
  });
});

describe('max_concurrent', () => {
  // The phone keeps ringing, so each call holds its slot until the test ends it.
  beforeEach(() => twilio.setOutcome({ outcome: 'answer', ringMs: 60_000 }));

  it('answers 429 with Retry-After over the cap, and a finished call frees its slot', async () => {
    await configure({ twilio_max_concurrent: 1 });
    const first = await dial({});
    expect(first.status).toBe(201);
    const second = await dial({});
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('10');
    expect(second.body.detail).toMatch(/max_concurrent/);

    const ended = await h.request('POST', '/api/calls/end', { body: { call_id: first.body.call_id } });
    expect(ended.body.status).toBe('no_answer');
    const third = await dial({});
    expect(third.status).toBe(201);
  });

  it('admits exactly max_concurrent calls when requests race on two API instances', async () => {
    await configure({ twilio_max_concurrent: 2 });
    // A second API instance with its own connection pool: the count is shared through PostgreSQL.
    const db2 = connectDatabase(h.dbUrl, { poolMax: 5 });
    const api2 = await startApi({ ...h.ctx, db: db2 }, 0, '127.0.0.1');
    try {
      const token = await h.adminToken();
      const viaSecond = (phone: string) =>
        fetch(`${api2.url}/api/calls/outbound`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ phone_number: phone, agent_name: 'sales-bot' }),
        }).then((r) => ({ status: r.status }));
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 ? viaSecond(`+1415555060${i}`) : dial({ phone_number: `+1415555060${i}` }))),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 201, 429, 429, 429, 429]);
    } finally {
      await api2.stop();
      await db2.close();
    }
    expect(await h.db.models.Call.count({ where: { provider: 'twilio', status: { [Op.in]: ['ringing', 'in_progress'] } } })).toBe(2);
    // Refused requests leave no call behind and never reached Twilio.
    expect(await h.db.models.Call.count({ where: { phone_number: { [Op.like]: '+1415555060%' } } })).toBe(2);
  });

  it('counts only calls of the capped provider that are ringing or in progress', async () => {
    await configure({ twilio_max_concurrent: 1 });
    // A client-managed call (no provider) does not take a Twilio slot.
    const manual = await h.request('POST', '/api/calls/start', { body: { phone_number: CALLEE, agent_name: 'sales-bot' } });
    expect(manual.status).toBe(201);
    twilio.setOutcome('failed', '+14155550701');
    const failed = await dial({ phone_number: '+14155550701' });
    expect(failed.status).toBe(201);
    await waitForStatus(failed.body.call_id, 'failed');
    expect((await dial({})).status).toBe(201);
  });
});
