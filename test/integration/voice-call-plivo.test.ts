/**
 * Plivo phone calls end to end through every real part: the API (outbound request, Plivo's signed
 * callbacks), the call workflow in a worker PROCESS, the media gateway in its own PROCESS, and the
 * vendor fakes (Plivo REST + a simulated caller on Plivo's Audio Stream in μ-law, Deepgram,
 * Cartesia, an OpenAI-compatible LLM). The gateway is killed mid-call to check that Plivo is
 * asked to hang up (keepCallAlive would otherwise hold the caller on a silent line).
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { BUSY_MESSAGE } from '../../src/api/routes/telephony';
import { MULAW_8K } from '../../src/audio/format';
import { verifyStreamToken } from '../../src/gateway/stream/stream-token';
import { parseExtraHeaders } from '../../src/providers/telephony/plivo/media-messages';
import { plivoStreamCredentials } from '../../src/providers/telephony/plivo/stream-auth';
import { channelOf, readWavFile } from '../../src/audio/wav';
import { getFreePort } from '../../src/temporal/dev-server';
import { startFakeCartesia, type FakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, type PlivoCaller } from '../fakes/plivo-caller';
import { startFakePlivo, type FakePlivo } from '../fakes/plivo-server';
import { lineSilentAfterMs } from '../support/barge-in-silence';
import { eventually } from '../support/fixtures';
import { voiceCallApi } from '../support/voice-call-api';
import { configurePlivo } from '../support/telephony';
import { startHarness, type Harness } from '../support/harness';
import { killHard, spawnGatewayProcess, spawnWorkerProcess } from '../support/worker-process-control';
import { speechFakesEnv } from '../support/voice-stack';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'audio');
const HELLO_WAV = path.join(FIXTURES, 'hello-appointment.wav'); // speech 500–3860 ms
const STOP_WAV = path.join(FIXTURES, 'stop-wait.wav'); // speech 300–1940 ms
const STOP_ONSET_MS = 300;
const AUTH_ID = 'MAPLIVOE2ETESTAUTHID';
const AUTH_TOKEN = 'plivo-e2e-test-auth-token-012345';
const OUR_NUMBER = '+918047491899';
const MS_PER_CHAR = 60; // the TTS fake's audio length per character

let h: Harness;
let plivo: FakePlivo;
let deepgram: FakeDeepgram;
let cartesia: FakeCartesia;
let openai: FakeOpenAI;
let gatewayPort: number;
let vendorEnv: Record<string, string>;
let worker: ChildProcess;
let gateway: ChildProcess;

beforeAll(async () => {
  plivo = await startFakePlivo({ authId: AUTH_ID, authToken: AUTH_TOKEN });
  deepgram = await startFakeDeepgram({ apiKey: 'dg-key' });
  cartesia = await startFakeCartesia({ apiKey: 'ca-key' });
  openai = await startFakeOpenAI();
  gatewayPort = await getFreePort();
  vendorEnv = {
    PLIVO_API_BASE_URL: plivo.apiBaseUrl,
    GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}`,
    GATEWAY_PORT: String(gatewayPort),
    ...speechFakesEnv(deepgram, cartesia, openai),
  };
  h = await startHarness({ env: vendorEnv });
  worker = await spawnWorkerProcess(h, vendorEnv);
  gateway = (await spawnGatewayProcess(h, vendorEnv)).child;
  await configurePlivo(h, { authId: AUTH_ID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, { plivo_max_concurrent: 5 });
}, 180_000);

afterAll(async () => {
  await killHard(worker);
  await killHard(gateway);
  await h?.stop();
  await Promise.all([plivo?.stop(), deepgram?.stop(), cartesia?.stop(), openai?.stop()]);
});

const heardMs = (caller: PlivoCaller) => caller.speechFrames().length * FRAME_MS;
const lastMessage = (body: any) => body.messages[body.messages.length - 1];

const { events, finalCall, createVoiceAgent } = voiceCallApi(() => h);

const deletes = (uuid: string) => plivo.requests.filter((r) => r.method === 'DELETE' && r.path.endsWith(`/${uuid}/`));

describe('an outbound Plivo call', () => {
  it('greets in μ-law audio, answers, is interrupted within 300 ms and ends the call at Plivo', async () => {
    const agent = await createVoiceAgent({ name: 'plivo-outbound', prompt: 'You book appointments.', greeting: 'Namaste {{first_name}}, this is the clinic.' });
    const flow = await h.request('PUT', `/api/agents/${agent.id}/flow`, {
      body: {
        nodes: [
          {
            node_key: 'offer',
            is_initial: true,
            functions: [{ name: 'choose_slot', description: 'The caller chose a slot', next_node_key: 'confirm', properties: { slot: { type: 'string' } }, required: ['slot'] }],
          },
          { node_key: 'confirm', is_terminal: true, pre_actions: [{ type: 'say', text: 'Booked at {{slot}}. Goodbye!' }, { type: 'end_call' }] },
        ],
      },
    });
    expect(flow.status).toBe(200);
    const answer =
      'We have two free slots tomorrow, one at nine in the morning and one at eleven. The afternoon is fully booked, I am afraid, but Thursday afternoon is still open if that suits you better.';
    openai.setResponder((body) => {
      const last = lastMessage(body);
      if (last.role === 'user' && last.content.startsWith('Stop')) return { tool_calls: [{ name: 'choose_slot', arguments: { slot: 'nine' } }] };
      if (last.role === 'user') return { content: answer };
      return { content: 'Sorry?' };
    });
    deepgram.script(['I would like to book an appointment for tomorrow.', 'Stop, wait a second.']);

    const next = plivo.nextCaller(20_000);
    const placed = await h.request('POST', '/api/calls/outbound', {
      body: { phone_number: '+919876543210', agent_name: 'plivo-outbound', provider: 'provider_c', custom_parameters: { first_name: 'Asha' } },
    });
    expect(placed.status).toBe(201);
    expect(placed.body).toMatchObject({ status: 'initiated', provider_response: { sid: expect.any(String), status: 'call fired' } });
    const callId = placed.body.call_id as string;
    const caller = await next;
    const fakeCall = plivo.callByRequest(placed.body.provider_response.sid)!;
    expect(fakeCall.params).toMatchObject({ from: '918047491899', to: '919876543210', answer_method: 'POST' });
    expect(fakeCall.stream).toMatchObject({ bidirectional: true, keepCallAlive: true, contentType: 'audio/x-mulaw;rate=8000' });
    expect(caller.format).toEqual(MULAW_8K);

    // The greeting, heard as audio.
    const greeting = 'Namaste Asha, this is the clinic.';
    await eventually(async () => heardMs(caller) >= (greeting.length - 2) * MS_PER_CHAR - 100, 15_000, 20);

    // A question: the agent answers in audio.
    const beforeAnswer = heardMs(caller);
    await caller.say(HELLO_WAV);
    await eventually(async () => heardMs(caller) >= beforeAnswer + 2000, 15_000, 20);

    // The caller barges in: the line goes silent within 300 ms of their speech starting.
    const span = await caller.say(STOP_WAV);
    expect(lineSilentAfterMs(caller, span, STOP_ONSET_MS)).toBeLessThanOrEqual(300);
    expect(caller.clears.length).toBeGreaterThanOrEqual(1);
    expect(caller.events.some((e) => e.message.event === 'clearAudio')).toBe(true);

    // The flow says the confirmation and ends the call, which hangs up at Plivo through its API.
    const call = await finalCall(callId, 30_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'agent_ended', direction: 'outbound', provider: 'plivo', current_node_key: 'confirm' });
    // The CallUUID from Plivo's callbacks replaced the request id.
    expect(call.provider_call_sid).toBe(fakeCall.callUuid);
    await fakeCall.ended;
    expect(fakeCall.errors).toEqual([]);
    expect(fakeCall.status).toBe('completed');
    // Our side ended it: the gateway closed the stream (with keepCallAlive and nothing after the
    // <Stream>, Plivo hangs up), and the workflow's REST hang-up follows unless Plivo's hangup
    // callback came first — then the DELETE is not needed. (A dead gateway: see below.)
    expect(fakeCall.hangupSource).toBe(deletes(fakeCall.callUuid).some((r) => r.status === 204) ? 'API Request' : 'Plivo');
    expect(caller.protocolErrors).toEqual([]);

    const list = await events(callId);
    const statuses = list.filter((e) => e.event_type === 'call_status' && !e.data.ignored && e.data.from).map((e) => `${e.data.from}>${e.data.status}`);
    expect(statuses).toEqual(['ringing>in_progress', 'in_progress>completed']);
    const types = list.map((e) => e.event_type);
    for (const type of ['call_started', 'tts_started', 'tts_stopped', 'user_spoke', 'agent_spoke', 'interruption', 'node_transition', 'call_ended']) {
      expect(types).toContain(type);
    }
    const spoke = list.filter((e) => e.event_type === 'agent_spoke').map((e) => e.data);
    expect(spoke[0]).toEqual({ text: greeting });
    const interrupted = spoke.find((s) => s.interrupted)!;
    expect(answer.startsWith(interrupted.text)).toBe(true);
    expect(spoke[spoke.length - 1]).toEqual({ text: 'Booked at nine. Goodbye!' });

    // The recording: a stereo WAV as long as the call, both sides audible.
    const wav = readWavFile(path.isAbsolute(call.recording_path) ? call.recording_path : path.join(h.config.dataDir, call.recording_path));
    expect(wav).toMatchObject({ channels: 2, sampleRate: 8000 });
    const closed = await caller.closed;
    const wavMs = wav.samples.length / 2 / 8;
    const streamMs = closed.atMs - caller.connectedAtMs;
    expect(Math.abs(wavMs - streamMs)).toBeLessThan(400);
    expect(channelOf(wav, 0).some((s) => Math.abs(s) > 1000)).toBe(true);
    expect(channelOf(wav, 1).some((s) => Math.abs(s) > 1000)).toBe(true);
  }, 120_000);

  it('records busy as no_answer', async () => {
    await createVoiceAgent({ name: 'plivo-busy', prompt: 'Be brief.', greeting: 'Hi.' });
    plivo.setOutcome('busy', '+919876500000');
    const placed = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+919876500000', agent_name: 'plivo-busy', provider: 'plivo' } });
    expect(placed.status).toBe(201);
    const call = await finalCall(placed.body.call_id);
    expect(call).toMatchObject({ status: 'no_answer', provider: 'plivo' });
    const status = (await events(call.id)).find((e) => e.event_type === 'call_status' && e.data.provider_status === 'busy');
    expect(status?.data).toMatchObject({ hangup_cause: 'USER_BUSY' });
  }, 60_000);
});

describe('an inbound Plivo call', () => {
  async function inboundCall(agentName: string) {
    const fake = await plivo.simulateInbound({
      answerUrl: `${h.api.url}/telephony/plivo/inbound/${agentName}`,
      hangupUrl: `${h.api.url}/telephony/plivo/status`,
      from: '+919812345678',
      to: OUR_NUMBER,
    });
    expect(fake.errors).toEqual([]);
    expect(fake.stream).toMatchObject({ bidirectional: true, keepCallAlive: true });
    // Our call id came back to the gateway in the stream's extra_headers.
    const credentials = plivoStreamCredentials(parseExtraHeaders(fake.stream!.extraHeaders))!;
    expect(verifyStreamToken(h.config.JWT_SECRET!, credentials.callId, credentials.token)).toBe(true);
    const call = (await h.request('GET', `/api/calls/${credentials.callId}`)).body;
    expect(call).toMatchObject({ provider: 'plivo', direction: 'inbound', provider_call_sid: fake.callUuid });
    return { fake, caller: fake.caller!, callId: credentials.callId };
  }

  it('answers with the agent, hears the caller, and completes when the caller hangs up', async () => {
    await createVoiceAgent({ name: 'plivo-inbound', prompt: 'Be helpful.', greeting: 'Hello, clinic here.' });
    openai.setResponder(() => ({ content: 'Tomorrow at nine works.' }));
    deepgram.script(['I would like to book an appointment for tomorrow.']);
    const { fake, caller, callId } = await inboundCall('plivo-inbound');
    await eventually(async () => heardMs(caller) >= ('Hello, clinic here.'.length - 2) * MS_PER_CHAR - 100, 15_000, 20);
    const before = heardMs(caller);
    await caller.say(HELLO_WAV);
    await eventually(async () => heardMs(caller) >= before + ('Tomorrow at nine works.'.length - 2) * MS_PER_CHAR, 15_000, 20);
    await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke' && e.data.text === 'Tomorrow at nine works.'), 10_000);

    await caller.hangup();
    const call = await finalCall(callId);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended', direction: 'inbound', provider: 'plivo', phone_number: '+919812345678' });
    expect(call.transcript.map((t: any) => t.text)).toEqual(['Hello, clinic here.', 'I would like to book an appointment for tomorrow.', 'Tomorrow at nine works.']);
    await fake.ended;
    expect(fake.errors).toEqual([]);
    expect(fake.hangupSource).toBe('Caller');
  }, 90_000);

  it('hangs the Plivo call up through the REST API when the gateway dies mid-call', async () => {
    await createVoiceAgent({ name: 'plivo-fragile', prompt: 'Be helpful.', greeting: 'Hello.' });
    const { fake, caller, callId } = await inboundCall('plivo-fragile');
    await eventually(async () => heardMs(caller) >= 200, 15_000, 20);
    await eventually(async () => (await h.request('GET', `/api/calls/${callId}`)).body.status === 'in_progress', 10_000);

    // A SIGKILLed gateway, and a Plivo that does not notice (keepCallAlive holds the silent line):
    // only the workflow's hang-up through the REST API ends the call.
    plivo.holdDroppedStreams(true);
    try {
      await killHard(gateway);
      const call = await finalCall(callId, 30_000);
      expect(call).toMatchObject({ status: 'failed', end_reason: 'error' });
      await eventually(async () => deletes(fake.callUuid).some((r) => r.status === 204), 20_000);
      await fake.ended;
      expect(fake).toMatchObject({ status: 'completed', hangupSource: 'API Request' });
      expect(fake.errors).toEqual(['stream dropped without a close handshake: call held (keepCallAlive) until hung up']);
    } finally {
      plivo.holdDroppedStreams(false);
      gateway = (await spawnGatewayProcess(h, vendorEnv)).child;
    }
  }, 90_000);
});

describe('inbound routing by the endpoint mapping (Plivo)', () => {
  it('routes by the number called, whatever agent the console URL names, and refuses an inactive number', async () => {
    await createVoiceAgent({ name: 'plivo-desk', prompt: 'Be helpful.', greeting: 'Desk here.' });
    const endpoint = await h.request('POST', '/api/settings/endpoints', { body: { phone_number: OUR_NUMBER, provider: 'plivo', inbound_agent_name: 'plivo-desk' } });
    expect(endpoint.status).toBe(201);
    expect(endpoint.body.inbound_webhook_url).toBe(`${h.api.url}/telephony/plivo/inbound/plivo-desk`);
    try {
      // The console still has an old agent name in its answer URL: the mapping decides.
      const fake = await plivo.simulateInbound({ answerUrl: `${h.api.url}/telephony/plivo/inbound/renamed-long-ago`, from: '+919812345679', to: OUR_NUMBER });
      expect(fake.errors).toEqual([]);
      const { callId } = plivoStreamCredentials(parseExtraHeaders(fake.stream!.extraHeaders))!;
      expect((await h.request('GET', `/api/calls/${callId}`)).body).toMatchObject({ agent_name: 'plivo-desk', provider: 'plivo' });
      await eventually(async () => heardMs(fake.caller!) >= 200, 15_000, 20);
      await fake.caller!.hangup();
      await finalCall(callId);

      const off = await h.request('PUT', `/api/settings/endpoints/${endpoint.body.id}`, { body: { is_active: false } });
      expect(off.status).toBe(200);
      const refused = await plivo.simulateInbound({ answerUrl: endpoint.body.inbound_webhook_url, from: '+919812345670', to: OUR_NUMBER });
      await refused.ended;
      expect(refused).toMatchObject({ hangupCause: 'CALL_REJECTED' });
      expect(refused.caller).toBeUndefined();
      expect(refused.answeredAtMs).toBeUndefined();
    } finally {
      await h.request('DELETE', `/api/settings/endpoints/${endpoint.body.id}`);
    }
  }, 60_000);
});

describe('plivo_max_concurrent', () => {
  it('refuses calls over the cap, inbound and outbound, and frees the slot when a ringing call is canceled at Plivo', async () => {
    await configurePlivo(h, { authId: AUTH_ID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, { plivo_max_concurrent: 1 });
    try {
      await createVoiceAgent({ name: 'plivo-capped', prompt: 'Be brief.', greeting: 'Hi.' });
      plivo.setOutcome({ outcome: 'answer', ringMs: 30_000 }, '+919876511111');
      const first = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+919876511111', agent_name: 'plivo-capped', provider: 'plivo' } });
      expect(first.status).toBe(201);
      const fakeCall = plivo.callByRequest(first.body.provider_response.sid)!;
      // The ring callback brings the CallUUID, which replaces the request id.
      await eventually(async () => (await h.request('GET', `/api/calls/${first.body.call_id}`)).body.provider_call_sid === fakeCall.callUuid, 10_000);

      const second = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+919876522222', agent_name: 'plivo-capped', provider: 'plivo' } });
      expect(second.status).toBe(429);
      expect(second.headers.get('retry-after')).toBe('10');
      const busy = await plivo.simulateInbound({ answerUrl: `${h.api.url}/telephony/plivo/inbound/plivo-capped`, from: '+919812345671', to: OUR_NUMBER });
      await busy.ended;
      expect(busy.said).toEqual([BUSY_MESSAGE]);
      expect(busy.stream).toBeUndefined();

      // Ending the ringing call cancels it at Plivo, by its CallUUID.
      const ended = await h.request('POST', '/api/calls/end', { body: { call_id: first.body.call_id } });
      expect(ended.status).toBe(200);
      await fakeCall.ended;
      expect(fakeCall).toMatchObject({ status: 'cancel', hangupSource: 'API Request' });
      expect(deletes(fakeCall.callUuid).map((r) => r.status)).toContain(204);
      expect(fakeCall.answeredAtMs).toBeUndefined();

      // The slot is free again.
      plivo.setOutcome('busy', '+919876533333');
      const third = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+919876533333', agent_name: 'plivo-capped', provider: 'plivo' } });
      expect(third.status).toBe(201);
      await finalCall(third.body.call_id);
    } finally {
      await configurePlivo(h, { authId: AUTH_ID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, { plivo_max_concurrent: 5 });
    }
  }, 60_000);
});
