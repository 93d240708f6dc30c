/**
 * Incoming Twilio calls and Twilio's other webhooks, played by the fake Twilio (and by signed
 * requests made here) against the real API, workflow worker and PostgreSQL: signature checks,
 * refusals as TwiML, the stream TwiML with its token, max_concurrent, and status callbacks.
 */
import { Op } from 'sequelize';
import { BUSY_MESSAGE, CALL_GONE_MESSAGE } from '../../src/api/routes/telephony';
import { verifyStreamToken } from '../../src/gateway/stream/stream-token';
import { callWorkflowId, stateQuery } from '../../workflows/call-definitions';
import { startFakeTwilio, twilioSignature, type FakeCallRecord, type FakeTwilio } from '../fakes/twilio-server';
import { parseTwiml } from '../fakes/twilio-twiml';
import { createAgent, eventually } from '../support/fixtures';
import { configureTwilio } from '../support/telephony';
import { startHarness, type Harness } from '../support/harness';
import { defaultProviderEnv, FakePool } from '../support/speech-vendors';
import { startMediaStandIn, type MediaStandIn, STAND_IN_ENV } from '../support/media-stand-in';

const ACCOUNT_SID = `AC${'a7'.repeat(16)}`;
const AUTH_TOKEN = 'inbound-test-auth-token-0123456789';
const OUR_NUMBER = '+15005550006';
const CALLER = '+14155550123';

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
  await createAgent(h.db, h.box, { name: 'support-bot' });
});
afterAll(async () => {
  await h?.stop();
  await twilio?.stop();
  await gateway?.stop();
  await speechFakes.stopAll();
});
beforeEach(async () => {
  await configure();
});
afterEach(async () => {
  const active = await h.db.models.Call.findAll({ where: { status: { [Op.in]: ['ringing', 'in_progress'] } }, attributes: ['id'] });
  await Promise.all(active.map((row) => h.request('POST', '/api/calls/end', { body: { call_id: row.get('id') } })));
  await h.db.models.TelephonyEndpoint.destroy({ where: {} });
});

const configure = (fields: Record<string, unknown> = {}) =>
  configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, fields);

const inboundUrl = (agent = 'support-bot') => `${h.api.url}/telephony/twilio/inbound/${agent}`;

/** Twilio rings our number: the fake posts the voice webhook and follows the TwiML. */
const ring = (opts: { agent?: string; from?: string; to?: string; authToken?: string; method?: 'GET' | 'POST' } = {}) =>
  twilio.simulateInbound({ webhookUrl: inboundUrl(opts.agent), from: opts.from ?? CALLER, to: opts.to ?? OUR_NUMBER, authToken: opts.authToken, method: opts.method });

const webhookAnswer = (call: FakeCallRecord) => call.callbacks.find((c) => c.kind === 'inbound')!;

/** A form POST signed like Twilio signs it (signature over `signedUrl`, default: the URL called). */
async function signedPost(path: string, params: Record<string, string>, opts: { token?: string; signedUrl?: string } = {}) {
  const url = `${h.api.url}${path}`;
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilioSignature(opts.token ?? AUTH_TOKEN, opts.signedUrl ?? url, params),
    },
    body: new URLSearchParams(params).toString(),
  });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text };
}

const callRow = async (callId: string) => (await h.db.models.Call.findByPk(callId))!.get({ plain: true });
const callsFrom = (from: string) => h.db.models.Call.count({ where: { phone_number: from } });
const workflowStatus = async (callId: string) => (await h.temporal.workflow.getHandle(callWorkflowId(callId)).query(stateQuery)).status;

async function callEvents(callId: string) {
  const res = await h.request('GET', `/api/calls/${callId}/events`);
  return res.body as Array<{ event_type: string; data: any }>;
}

/** The call id in the TwiML's <Connect><Stream> (its call_id parameter). */
function callIdOf(fake: FakeCallRecord): string {
  const verb = fake.verbs?.[0];
  if (verb?.verb !== 'Connect') throw new Error(`expected <Connect>, got ${fake.twiml}`);
  return verb.stream.parameters.call_id!;
}

/** Connects a call and returns its id. */
async function connectedCall(from: string): Promise<{ callId: string; fake: FakeCallRecord }> {
  const fake = await ring({ from });
  return { callId: callIdOf(fake), fake };
}

describe('incoming calls', () => {
  it('answers with a stream to the gateway carrying call_id and a valid token, and records the call', async () => {
    const fake = await ring({ from: '+14155550111' });
    const answer = webhookAnswer(fake);
    expect(answer.status).toBe(200);
    expect(fake.errors).toEqual([]);
    const [verb] = fake.verbs!;
    expect(verb!.verb).toBe('Connect');
    const stream = (verb as Extract<typeof verb, { verb: 'Connect' }>).stream;
    expect(stream.url).toBe(`${gateway.url}/media/twilio`);
    const callId = stream.parameters.call_id!;
    expect(verifyStreamToken(h.config.JWT_SECRET!, callId, stream.parameters.token)).toBe(true);
    expect(verifyStreamToken(h.config.JWT_SECRET!, callId, 'forged')).toBe(false);

    const call = await callRow(callId);
    expect(call).toMatchObject({
      direction: 'inbound',
      status: 'ringing',
      phone_number: '+14155550111',
      agent_name: 'support-bot',
      provider: 'twilio',
      provider_call_sid: fake.sid,
    });
    expect(call).toMatchObject({ channel: 'voice', metadata: { to_number: OUR_NUMBER } });
    // The fake's caller reached the (stand-in) gateway with the same parameters.
    expect((await eventually(async () => gateway.streamFor(callId))).callSid).toBe(fake.sid);

    // Ending it through the API hangs up the Twilio call.
    const ended = await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
    expect(ended.status).toBe(200);
    await eventually(async () => ['completed', 'canceled'].includes(twilio.call(fake.sid)!.status));
  });

  it('answers a repeated webhook for the same CallSid with the same call', async () => {
    const { callId, fake } = await connectedCall('+14155550112');
    const again = await signedPost('/telephony/twilio/inbound/support-bot', { CallSid: fake.sid, From: '+14155550112', To: OUR_NUMBER, CallStatus: 'ringing' });
    expect(again.status).toBe(200);
    expect(again.contentType).toContain('text/xml');
    const verb = parseTwiml(again.text)[0];
    expect(verb?.verb === 'Connect' && verb.stream.parameters.call_id).toBe(callId);
    expect(await callsFrom('+14155550112')).toBe(1);
  });

  it('takes the voice webhook as a signed GET too (a number configured with HTTP GET)', async () => {
    const fake = await ring({ from: '+14155550141', method: 'GET' });
    expect(webhookAnswer(fake)).toMatchObject({ status: 200, method: 'GET' });
    expect((await callRow(callIdOf(fake))).provider_call_sid).toBe(fake.sid);
    const forged = await ring({ from: '+14155550142', method: 'GET', authToken: 'not-our-token' });
    expect(webhookAnswer(forged).status).toBe(403);
    expect(await callsFrom('+14155550142')).toBe(0);
  });

  it('rejects calls for an unknown agent without creating a call', async () => {
    const fake = await ring({ agent: 'ghost-bot', from: '+14155550113' });
    expect(webhookAnswer(fake).status).toBe(200);
    expect(fake.verbs).toEqual([{ verb: 'Reject', reason: 'rejected' }]);
    expect(fake.status).toBe('no-answer');
    expect(await callsFrom('+14155550113')).toBe(0);
  });

  it('rejects calls to an inactive endpoint and connects them once it is active again', async () => {
    const endpoint = await h.request('POST', '/api/settings/endpoints', {
      body: { phone_number: OUR_NUMBER, provider: 'twilio', inbound_agent_name: 'support-bot' },
    });
    expect(endpoint.body.inbound_webhook_url).toBe(inboundUrl());
    await h.request('PUT', `/api/settings/endpoints/${endpoint.body.id}`, { body: { is_active: false } });
    const refused = await ring({ from: '+14155550114' });
    expect(refused.verbs).toEqual([{ verb: 'Reject', reason: 'rejected' }]);
    expect(await callsFrom('+14155550114')).toBe(0);

    await h.request('PUT', `/api/settings/endpoints/${endpoint.body.id}`, { body: { is_active: true } });
    const accepted = await ring({ from: '+14155550114' });
    expect(accepted.verbs?.[0]?.verb).toBe('Connect');
    expect(await callsFrom('+14155550114')).toBe(1);
  });

  it("lets the number's endpoint decide the agent: a URL naming another or a removed agent still reaches the endpoint's agent", async () => {
    await createAgent(h.db, h.box, { name: 'sales-bot' });
    await h.request('POST', '/api/settings/endpoints', { body: { phone_number: OUR_NUMBER, provider: 'twilio', inbound_agent_name: 'sales-bot' } });
    // The URL configured in Twilio's console still names the number's old agent.
    const old = await ring({ agent: 'support-bot', from: '+14155550131' });
    expect((await callRow(callIdOf(old))).agent_name).toBe('sales-bot');
    // … or an agent that was renamed away since.
    const renamed = await ring({ agent: 'support-bot-v1', from: '+14155550132' });
    expect((await callRow(callIdOf(renamed))).agent_name).toBe('sales-bot');
    // A number without an endpoint: the URL's agent answers.
    const other = await ring({ agent: 'support-bot', from: '+14155550133', to: '+15005550009' });
    expect((await callRow(callIdOf(other))).agent_name).toBe('support-bot');
  });

  it('tells callers over max_concurrent that all agents are busy, shares the cap with outbound calls, and frees the slot when a call ends', async () => {
    await configure({ twilio_max_concurrent: 1 });
    const { callId } = await connectedCall('+14155550115');

    const busy = await ring({ from: '+14155550116' });
    expect(busy.verbs).toEqual([{ verb: 'Say', text: BUSY_MESSAGE }, { verb: 'Hangup' }]);
    expect(busy.said).toEqual([BUSY_MESSAGE]);
    expect(await callsFrom('+14155550116')).toBe(0);
    const outbound = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+14155550199', agent_name: 'support-bot' } });
    expect(outbound.status).toBe(429);

    await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
    const next = await ring({ from: '+14155550116' });
    expect(next.verbs?.[0]?.verb).toBe('Connect');
  });
});

describe('signatures', () => {
  it('answers 403 {detail} to a wrong or missing X-Twilio-Signature and creates nothing', async () => {
    const forged = await ring({ from: '+14155550121', authToken: 'not-our-token' });
    const answer = webhookAnswer(forged);
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toEqual({ detail: 'Invalid X-Twilio-Signature' });

    const unsigned = await fetch(inboundUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ CallSid: 'CA1', From: '+14155550121', To: OUR_NUMBER }).toString(),
    });
    expect(unsigned.status).toBe(403);
    expect(await unsigned.json()).toEqual({ detail: 'Missing X-Twilio-Signature' });

    // Valid signature, but over other parameters than those sent.
    const tampered = await fetch(inboundUrl(), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': twilioSignature(AUTH_TOKEN, inboundUrl(), { CallSid: 'CA1', From: '+14155550121', To: OUR_NUMBER }),
      },
      body: new URLSearchParams({ CallSid: 'CA1', From: '+14155550666', To: OUR_NUMBER }).toString(),
    });
    expect(tampered.status).toBe(403);
    expect(await callsFrom('+14155550121')).toBe(0);
    expect(await callsFrom('+14155550666')).toBe(0);
  });

  it('checks the signature over the public URL, as Twilio called it through a proxy', async () => {
    await configure({ public_base_url: 'https://voice.example.com' });
    const params = { CallSid: 'CA' + 'b'.repeat(32), From: '+14155550122', To: OUR_NUMBER, CallStatus: 'ringing' };
    const viaProxy = await signedPost('/telephony/twilio/inbound/support-bot', params, { signedUrl: 'https://voice.example.com/telephony/twilio/inbound/support-bot' });
    expect(viaProxy.status).toBe(200);
    expect(parseTwiml(viaProxy.text)[0]?.verb).toBe('Connect');
    // Signed for the address the request reached instead: not what Twilio was given.
    const direct = await signedPost('/telephony/twilio/inbound/support-bot', { ...params, CallSid: 'CA' + 'c'.repeat(32) });
    expect(direct.status).toBe(403);
  });

  it('refuses every Twilio webhook with 403 while no auth token is configured', async () => {
    await configure({ twilio_auth_token: null });
    const res = await signedPost('/telephony/twilio/inbound/support-bot', { CallSid: 'CA2', From: CALLER, To: OUR_NUMBER });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.text).detail).toMatch(/twilio_auth_token/);
  });
});

describe('status callbacks and TwiML fetches', () => {
  const status = (callId: string | null, params: Record<string, string>, token?: string) =>
    signedPost(callId ? `/telephony/twilio/status/${callId}` : '/telephony/twilio/status', params, { token });

  it('move the call forward only, record Twilio’s words, and ignore late callbacks', async () => {
    const { callId, fake } = await connectedCall('+14155550131');
    const base = { CallSid: fake.sid, AccountSid: ACCOUNT_SID, From: '+14155550131', To: OUR_NUMBER };

    expect((await status(callId, { ...base, CallStatus: 'in-progress', SequenceNumber: '1' })).status).toBe(204);
    await eventually(async () => (await workflowStatus(callId)) === 'in_progress');
    // Delivered out of order: an earlier `ringing` must not move the call back.
    expect((await status(callId, { ...base, CallStatus: 'ringing', SequenceNumber: '0' })).status).toBe(204);
    expect((await status(callId, { ...base, CallStatus: 'completed', SequenceNumber: '2', CallDuration: '7', SipResponseCode: '200' })).status).toBe(204);
    const done = await eventually(async () => {
      const res = await h.request('GET', `/api/calls/${callId}`);
      return res.body.status === 'completed' && res.body;
    });
    expect(done.end_reason).toBe('user_ended');
    const provider = (await callEvents(callId)).filter((e) => e.event_type === 'call_status' && e.data.source === 'provider');
    expect(provider.map((e) => [e.data.status, e.data.provider_status, e.data.sequence_number])).toEqual([
      ['answered', 'in-progress', 1],
      ['ringing', 'ringing', 0],
      ['completed', 'completed', 2],
    ]);
    expect(provider[2]!.data).toMatchObject({ duration: 7, sip_response_code: '200', call_sid: fake.sid });
    const statuses = (await callEvents(callId)).filter((e) => e.event_type === 'call_status' && e.data.from).map((e) => e.data.status);
    expect(statuses).toEqual(['in_progress', 'completed']);

    // After the end: still 204, nothing changes.
    expect((await status(callId, { ...base, CallStatus: 'in-progress', SequenceNumber: '1' })).status).toBe(204);
    expect((await callRow(callId)).status).toBe('completed');
  });

  it('end a call at once when the caller hangs up before its stream connects, and on an operator request', async () => {
    const { callId, fake } = await connectedCall('+14155550134');
    const started = Date.now();
    expect((await status(callId, { CallSid: fake.sid, AccountSid: ACCOUNT_SID, CallStatus: 'completed', SequenceNumber: '1' })).status).toBe(204);
    await eventually(async () => ['completed', 'no_answer'].includes((await callRow(callId)).status), 15_000, 50);
    // The workflow waits up to 5 s for the stream (INBOUND_STREAM_WAIT); an end does not wait it out.
    expect(Date.now() - started).toBeLessThan(4000);

    const other = await connectedCall('+14155550135');
    const asked = Date.now();
    const ended = await h.request('POST', '/api/calls/end', { body: { call_id: other.callId } });
    expect(ended.status).toBeLessThan(300);
    expect(['completed', 'no_answer']).toContain((await callRow(other.callId)).status);
    expect(Date.now() - asked).toBeLessThan(4000);
  });

  it('find the call by CallSid on the number-level callback URL', async () => {
    const { callId, fake } = await connectedCall('+14155550132');
    expect((await status(null, { CallSid: fake.sid, CallStatus: 'canceled' })).status).toBe(204);
    await eventually(async () => (await callRow(callId)).status === 'no_answer');
  });

  it('answer 204 for unknown calls and 403 for bad signatures', async () => {
    expect((await status('00000000-0000-4000-8000-000000000000', { CallSid: 'CAx', CallStatus: 'completed' })).status).toBe(204);
    expect((await status('not-a-uuid', { CallSid: 'CAx', CallStatus: 'completed' })).status).toBe(204);
    expect((await status(null, { CallSid: 'CAunknown', CallStatus: 'completed' })).status).toBe(204);
    const { callId, fake } = await connectedCall('+14155550133');
    const forged = await status(callId, { CallSid: fake.sid, CallStatus: 'completed' }, 'not-our-token');
    expect(forged.status).toBe(403);
    expect(await workflowStatus(callId)).toBe('ringing');
  });

  it('TwiML for an unknown or finished call says goodbye and hangs up', async () => {
    const unknown = await signedPost('/telephony/twilio/twiml/00000000-0000-4000-8000-000000000000', { CallSid: 'CAx', CallStatus: 'in-progress' });
    expect(unknown.status).toBe(200);
    expect(parseTwiml(unknown.text)).toEqual([{ verb: 'Say', text: CALL_GONE_MESSAGE }, { verb: 'Hangup' }]);

    const { callId, fake } = await connectedCall('+14155550134');
    const live = await signedPost(`/telephony/twilio/twiml/${callId}`, { CallSid: fake.sid, CallStatus: 'in-progress' });
    expect(parseTwiml(live.text)[0]?.verb).toBe('Connect');
    await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
    const finished = await signedPost(`/telephony/twilio/twiml/${callId}`, { CallSid: fake.sid, CallStatus: 'in-progress' });
    expect(parseTwiml(finished.text)).toEqual([{ verb: 'Say', text: CALL_GONE_MESSAGE }, { verb: 'Hangup' }]);
    expect((await signedPost(`/telephony/twilio/twiml/${callId}`, {}, { token: 'not-our-token' })).status).toBe(403);
  });
});
