/**
 * Exotel phone calls end to end through every real part: the API (outbound request, Exotel's
 * unsigned applet request and status callbacks), the call workflow in a worker PROCESS, the media
 * gateway in its own PROCESS, and the vendor fakes (Exotel REST + a simulated caller on the
 * Voicebot stream in 16-bit PCM, Deepgram, Cartesia, an OpenAI-compatible LLM). The gateway is
 * killed mid-call to check that Exotel is asked to hang up.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { PCM16_16K, PCM16_8K } from '../../src/audio/format';
import { verifyStreamToken } from '../../src/gateway/stream/stream-token';
import { channelOf, readWavFile } from '../../src/audio/wav';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { getFreePort } from '../../src/temporal/dev-server';
import { startFakeCartesia, type FakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { connectExotelCaller, FRAME_MS, type ExotelCaller } from '../fakes/exotel-caller';
import { startFakeExotel, type FakeExotel } from '../fakes/exotel-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { lineSilentAfterMs } from '../support/barge-in-silence';
import { eventually } from '../support/fixtures';
import { voiceCallApi } from '../support/voice-call-api';
import { configureExotel } from '../support/telephony';
import { startHarness, type Harness } from '../support/harness';
import { killHard, spawnGatewayProcess, spawnWorkerProcess } from '../support/worker-process-control';
import { speechFakesEnv } from '../support/voice-stack';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'audio');
const HELLO_WAV = path.join(FIXTURES, 'hello-appointment.wav'); // speech 500–3860 ms
const STOP_WAV = path.join(FIXTURES, 'stop-wait.wav'); // speech 300–1940 ms
const STOP_ONSET_MS = 300;
const CREDS = { accountSid: 'exotele2e1', apiKey: 'exotel-e2e-key', apiToken: 'exotel-e2e-token-0123456789' };
const OUR_NUMBER = '+918047491899';
const MS_PER_CHAR = 60; // the TTS fake's audio length per character

let h: Harness;
let exotel: FakeExotel;
let deepgram: FakeDeepgram;
let cartesia: FakeCartesia;
let openai: FakeOpenAI;
let vendorEnv: Record<string, string>;
let worker: ChildProcess;
let gateway: ChildProcess;

beforeAll(async () => {
  exotel = await startFakeExotel(CREDS);
  deepgram = await startFakeDeepgram({ apiKey: 'dg-key' });
  cartesia = await startFakeCartesia({ apiKey: 'ca-key' });
  openai = await startFakeOpenAI();
  const gatewayPort = await getFreePort();
  vendorEnv = {
    EXOTEL_API_BASE_URL: exotel.apiBaseUrl,
    GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}`,
    GATEWAY_PORT: String(gatewayPort),
    ...speechFakesEnv(deepgram, cartesia, openai),
  };
  h = await startHarness({ env: vendorEnv });
  worker = await spawnWorkerProcess(h, vendorEnv);
  gateway = (await spawnGatewayProcess(h, vendorEnv)).child;
  await configureExotel(h, { ...CREDS, phoneNumber: OUR_NUMBER }, { exotel_max_concurrent: 5 });
}, 180_000);

afterAll(async () => {
  await killHard(worker);
  await killHard(gateway);
  await h?.stop();
  await Promise.all([exotel?.stop(), deepgram?.stop(), cartesia?.stop(), openai?.stop()]);
});

const heardMs = (caller: ExotelCaller) => caller.speechFrames().length * FRAME_MS;
const lastMessage = (body: any) => body.messages[body.messages.length - 1];
const hangups = (sid: string) => exotel.requests.filter((r) => r.method === 'POST' && r.path.includes(`/Calls/${sid}`) && r.params.Status === 'completed');

const { events, finalCall, createVoiceAgent } = voiceCallApi(() => h);

/** The recording is a stereo 16-bit WAV at the stream's rate, as long as the stream, both sides audible. */
async function expectRecordingOfCall(call: any, caller: ExotelCaller, sampleRate = 8000) {
  const wav = readWavFile(path.isAbsolute(call.recording_path) ? call.recording_path : path.join(h.config.dataDir, call.recording_path));
  expect(wav).toMatchObject({ channels: 2, sampleRate });
  const closed = await caller.closed;
  const wavMs = wav.samples.length / 2 / (sampleRate / 1000);
  expect(Math.abs(wavMs - (closed.atMs - caller.connectedAtMs))).toBeLessThan(400);
  expect(channelOf(wav, 0).some((s) => Math.abs(s) > 1000)).toBe(true);
  expect(channelOf(wav, 1).some((s) => Math.abs(s) > 1000)).toBe(true);
}

describe('an outbound Exotel call', () => {
  it('greets in 16-bit PCM, answers, is interrupted within 300 ms and ends the call through Exotel’s API', async () => {
    // Exotel's 3.2 KB minimum chunk keeps 200–400 ms of agent audio at Exotel, which holding the
    // next frame cannot silence: only the `clear` does, once the VAD confirms speech
    // (vad_start_secs). 0.1 s keeps that within 300 ms (README, Exotel: barge-in).
    await createVoiceAgent({
      name: 'exotel-outbound',
      prompt: 'You book appointments.',
      greeting: 'Namaste {{first_name}}, this is the clinic.',
      pipeline_settings: { ...PIPELINE_DEFAULTS, vad_stop_secs: 0.4, vad_start_secs: 0.1, min_words: 1 },
    });
    const answer =
      'We have two free slots tomorrow, one at nine in the morning and one at eleven. The afternoon is fully booked, I am afraid, but Thursday afternoon is still open if that suits you better.';
    openai.setResponder((body) => {
      const last = lastMessage(body);
      if (last.role === 'user' && last.content.startsWith('Stop')) return { content: 'Of course. Goodbye!', tool_calls: [{ name: 'end_call', arguments: {} }] };
      if (last.role === 'user') return { content: answer };
      return { content: 'Goodbye!' };
    });
    deepgram.script(['I would like to book an appointment for tomorrow.', 'Stop, wait a second.']);

    const next = exotel.nextCaller(20_000);
    const placed = await h.request('POST', '/api/calls/outbound', {
      body: { phone_number: '+919876543210', agent_name: 'exotel-outbound', provider: 'provider_b', custom_parameters: { first_name: 'Asha' } },
    });
    expect(placed.status).toBe(201);
    expect(placed.body).toMatchObject({ status: 'initiated', provider_response: { sid: expect.any(String), status: 'queued' } });
    const callId = placed.body.call_id as string;
    const caller = await next;
    const fakeCall = exotel.call(placed.body.provider_response.sid)!;
    expect(fakeCall.params).toMatchObject({
      from: '+919876543210',
      callerid: OUR_NUMBER,
      streamtype: 'bidirectional',
      statuscallback: `${h.api.url}/telephony/exotel/status/${callId}`,
      'statuscallbackevents[]': ['answered', 'terminal'],
      customfield: callId,
    });
    // The stream URL carries the call's credentials and the sample rate.
    const streamUrl = new URL(fakeCall.streamUrl!);
    expect(streamUrl.pathname).toBe('/media/exotel');
    expect(streamUrl.searchParams.get('call_id')).toBe(callId);
    expect(verifyStreamToken(h.config.JWT_SECRET!, callId, streamUrl.searchParams.get('token'))).toBe(true);
    expect(streamUrl.searchParams.get('sample-rate')).toBe('8000');
    expect(caller.format).toEqual(PCM16_8K);

    // The greeting, heard as audio.
    const greeting = 'Namaste Asha, this is the clinic.';
    await eventually(async () => heardMs(caller) >= (greeting.length - 2) * MS_PER_CHAR - 200, 15_000, 20);
    // TTS is asked for the stream's own format (16-bit PCM at 8 kHz): nothing converts it.
    const greetingRequest = cartesia.received.messages.find((m) => String(m.transcript ?? '').startsWith('Namaste Asha'));
    expect(greetingRequest?.output_format).toMatchObject({ container: 'raw', encoding: 'pcm_s16le', sample_rate: 8000 });

    // A question: the agent answers in audio.
    const beforeAnswer = heardMs(caller);
    await caller.say(HELLO_WAV);
    await eventually(async () => heardMs(caller) >= beforeAnswer + 2000, 15_000, 20);

    // The caller barges in: the line goes silent within 300 ms of their speech starting.
    const span = await caller.say(STOP_WAV);
    expect(lineSilentAfterMs(caller, span, STOP_ONSET_MS)).toBeLessThanOrEqual(300);
    expect(caller.clears.length).toBeGreaterThanOrEqual(1);
    expect(caller.events.some((e) => e.message.event === 'clear')).toBe(true);

    // The agent says goodbye and ends the call: hung up through Exotel's REST API.
    const call = await finalCall(callId, 30_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'agent_ended', direction: 'outbound', provider: 'exotel', provider_call_sid: fakeCall.sid });
    await fakeCall.ended;
    expect(fakeCall.errors).toEqual([]);
    expect(fakeCall.status).toBe('completed');
    // Our side ended it: the gateway closed the stream (Exotel then ends the call and reports
    // `completed`), and the workflow's REST hang-up follows unless that report came first — then
    // the hang-up is not needed. (A stream Exotel does not see close: the gateway-kill test below.)
    expect(fakeCall.endedBy).toBe(hangups(fakeCall.sid).some((r) => r.status === 200) ? 'api' : 'stream-closed');
    expect(caller.protocolErrors).toEqual([]);
    // Every chunk the gateway sent met Exotel's size rules (the caller checks each one).
    expect(caller.events.filter((e) => e.message.event === 'media').length).toBeGreaterThan(10);

    const list = await events(callId);
    const statuses = list.filter((e) => e.event_type === 'call_status' && !e.data.ignored && e.data.from).map((e) => `${e.data.from}>${e.data.status}`);
    expect(statuses).toEqual(['ringing>in_progress', 'in_progress>completed']);
    const exotelStatuses = list.filter((e) => e.event_type === 'call_status' && e.data.provider === 'exotel' && e.data.provider_status).map((e) => e.data.provider_status);
    expect(exotelStatuses).toContain('in-progress');
    const types = list.map((e) => e.event_type);
    for (const type of ['call_started', 'tts_started', 'tts_stopped', 'user_spoke', 'agent_spoke', 'interruption', 'call_ended']) expect(types).toContain(type);
    const spoke = list.filter((e) => e.event_type === 'agent_spoke').map((e) => e.data);
    expect(spoke[0]).toEqual({ text: greeting });
    const interrupted = spoke.find((s) => s.interrupted)!;
    expect(answer.startsWith(interrupted.text)).toBe(true);

    await expectRecordingOfCall(call, caller);
  }, 120_000);

  it('records busy as no_answer', async () => {
    await createVoiceAgent({ name: 'exotel-busy', prompt: 'Be brief.', greeting: 'Hi.' });
    exotel.setOutcome('busy', '+919876500000');
    const placed = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+919876500000', agent_name: 'exotel-busy', provider: 'exotel' } });
    expect(placed.status).toBe(201);
    const call = await finalCall(placed.body.call_id);
    expect(call).toMatchObject({ status: 'no_answer', provider: 'exotel' });
    const status = (await events(call.id)).find((e) => e.event_type === 'call_status' && e.data.provider_status === 'busy');
    expect(status?.data).toMatchObject({ status: 'busy', exotel_event: 'terminal' });
  }, 60_000);
});

describe('an inbound Exotel call', () => {
  async function inboundCall(agentName: string) {
    const fake = await exotel.simulateInbound({ appletUrl: `${h.api.url}/telephony/exotel/inbound/${agentName}`, from: '+919812345678', to: OUR_NUMBER });
    expect(fake.errors).toEqual([]);
    // The applet asked with Exotel's national numbers; the answer is the stream URL with our credentials.
    expect(fake.callbacks[0]).toMatchObject({ kind: 'applet', status: 200, params: { CallFrom: '09812345678', CallTo: '08047491899' } });
    const url = new URL(fake.streamUrl!);
    const callId = url.searchParams.get('call_id')!;
    expect(verifyStreamToken(h.config.JWT_SECRET!, callId, url.searchParams.get('token'))).toBe(true);
    const call = (await h.request('GET', `/api/calls/${callId}`)).body;
    expect(call).toMatchObject({ provider: 'exotel', direction: 'inbound', provider_call_sid: fake.sid, phone_number: '+919812345678' });
    return { fake, caller: fake.caller!, callId };
  }

  it('answers with the agent, survives malformed messages, and completes when the caller hangs up', async () => {
    await createVoiceAgent({ name: 'exotel-inbound', prompt: 'Be helpful.', greeting: 'Hello, clinic here.' });
    openai.setResponder(() => ({ content: 'Tomorrow at nine works.' }));
    deepgram.script(['I would like to book an appointment for tomorrow.']);
    const { fake, caller, callId } = await inboundCall('exotel-inbound');
    await eventually(async () => heardMs(caller) >= ('Hello, clinic here.'.length - 2) * MS_PER_CHAR - 200, 15_000, 20);

    // Garbage on a live stream is logged and ignored: the call goes on.
    caller.sendRaw('{not json');
    caller.sendRaw(JSON.stringify({ event: 'media', stream_sid: caller.streamSid, media: { payload: '%%%' } }));
    caller.sendRaw(JSON.stringify({ event: 'mark', stream_sid: 'MZsomeoneelse', mark: { name: 'x' } }));
    caller.sendRaw(JSON.stringify({ event: 'wobble' }));

    const before = heardMs(caller);
    await caller.say(HELLO_WAV);
    await eventually(async () => heardMs(caller) >= before + ('Tomorrow at nine works.'.length - 2) * MS_PER_CHAR, 15_000, 20);
    await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke' && e.data.text === 'Tomorrow at nine works.'), 10_000);
    caller.dtmf('5');

    await caller.hangup();
    const call = await finalCall(callId);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended', direction: 'inbound', provider: 'exotel' });
    expect(call.transcript.map((t: any) => t.text)).toEqual(['Hello, clinic here.', 'I would like to book an appointment for tomorrow.', 'Tomorrow at nine works.']);
    await fake.ended;
    expect(fake).toMatchObject({ status: 'completed', endedBy: 'caller', errors: [] });
    await expectRecordingOfCall(call, caller);
  }, 90_000);

  it('runs a 16 kHz stream (EXOTEL_SAMPLE_RATE=16000) in 16 kHz end to end: TTS, 3200-byte chunks, recording', async () => {
    await createVoiceAgent({ name: 'exotel-wideband', prompt: 'Be helpful.', greeting: 'Hello, wideband clinic here.' });
    openai.setResponder(() => ({ content: 'Tomorrow at nine works.' }));
    deepgram.script(['I would like to book an appointment for tomorrow.']);
    // The applet's answer as the platform gives it, opened at the rate an EXOTEL_SAMPLE_RATE=16000
    // installation asks for: the gateway follows start.media_format.
    const answer = await fetch(`${h.api.url}/telephony/exotel/inbound/exotel-wideband?CallSid=wb${Date.now()}&CallFrom=09812345600&CallTo=08047491899`);
    const url = new URL(((await answer.json()) as { url: string }).url);
    url.searchParams.set('sample-rate', '16000');
    const callId = url.searchParams.get('call_id')!;
    const caller = await connectExotelCaller({ url: url.toString(), from: '+919812345600', to: OUR_NUMBER });
    expect(caller.format).toEqual(PCM16_16K);
    await eventually(async () => heardMs(caller) >= ('Hello, wideband clinic here.'.length - 2) * MS_PER_CHAR - 200, 15_000, 20);
    // 100 ms of 16 kHz PCM per message: 3200 bytes (the caller rejects anything else).
    expect(Buffer.from(caller.events.find((e) => e.message.event === 'media')!.message.media.payload, 'base64').length).toBe(3200);
    const before = heardMs(caller);
    await caller.say(HELLO_WAV);
    await eventually(async () => heardMs(caller) >= before + ('Tomorrow at nine works.'.length - 2) * MS_PER_CHAR, 15_000, 20);
    await caller.hangup();
    const call = await finalCall(callId);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended', provider: 'exotel' });
    expect(caller.protocolErrors).toEqual([]);
    // TTS was asked for the stream's own format: no conversion anywhere.
    const greetingRequest = cartesia.received.messages.find((m) => m.transcript === 'Hello, wideband clinic here.' || String(m.transcript ?? '').startsWith('Hello, wideband'));
    expect(greetingRequest?.output_format).toMatchObject({ container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 });
    await expectRecordingOfCall(call, caller, 16000);
  }, 90_000);

  it('hangs the Exotel call up through the REST API when the gateway dies mid-call', async () => {
    await createVoiceAgent({ name: 'exotel-fragile', prompt: 'Be helpful.', greeting: 'Hello.' });
    const { fake, caller, callId } = await inboundCall('exotel-fragile');
    await eventually(async () => heardMs(caller) >= 200, 15_000, 20);
    await eventually(async () => (await h.request('GET', `/api/calls/${callId}`)).body.status === 'in_progress', 10_000);
    exotel.holdDroppedStreams(true);
    try {
      await killHard(gateway);
      const call = await finalCall(callId, 30_000);
      expect(call).toMatchObject({ status: 'failed', end_reason: 'error' });
      await eventually(async () => hangups(fake.sid).some((r) => r.status === 200), 20_000);
      await fake.ended;
      expect(fake).toMatchObject({ status: 'completed', endedBy: 'api' });
    } finally {
      exotel.holdDroppedStreams(false);
      gateway = (await spawnGatewayProcess(h, vendorEnv)).child;
    }
  }, 90_000);
});

describe('inbound routing by the endpoint mapping and exotel_max_concurrent', () => {
  it('routes by the number called, refuses an inactive number, and refuses calls over the cap', async () => {
    await createVoiceAgent({ name: 'exotel-desk', prompt: 'Be helpful.', greeting: 'Desk here.' });
    const endpoint = await h.request('POST', '/api/settings/endpoints', { body: { phone_number: OUR_NUMBER, provider: 'exotel', inbound_agent_name: 'exotel-desk' } });
    expect(endpoint.status).toBe(201);
    expect(endpoint.body.inbound_webhook_url).toBe(`${h.api.url}/telephony/exotel/inbound/exotel-desk`);
    try {
      // The applet still names an old agent: the mapping decides.
      const fake = await exotel.simulateInbound({ appletUrl: `${h.api.url}/telephony/exotel/inbound/renamed-long-ago`, from: '+919812345679', to: OUR_NUMBER });
      expect(fake.errors).toEqual([]);
      const callId = new URL(fake.streamUrl!).searchParams.get('call_id')!;
      expect((await h.request('GET', `/api/calls/${callId}`)).body).toMatchObject({ agent_name: 'exotel-desk', provider: 'exotel' });
      await eventually(async () => heardMs(fake.caller!) >= 200, 15_000, 20);

      // Over the cap (1, with this call live): the applet's request is refused, the flow hangs up.
      await configureExotel(h, { ...CREDS, phoneNumber: OUR_NUMBER }, { exotel_max_concurrent: 1 });
      const busy = await exotel.simulateInbound({ appletUrl: endpoint.body.inbound_webhook_url, from: '+919812345671', to: OUR_NUMBER });
      await busy.ended;
      expect(busy.callbacks[0]).toMatchObject({ status: 503 });
      expect(JSON.parse(busy.callbacks[0]!.body).detail).toMatch(/all our agents are busy/);
      expect(busy).toMatchObject({ endedBy: 'applet-failed' });
      expect(busy.caller).toBeUndefined();
      const outbound = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+919876522222', agent_name: 'exotel-desk', provider: 'exotel' } });
      expect(outbound.status).toBe(429);
      await configureExotel(h, { ...CREDS, phoneNumber: OUR_NUMBER }, { exotel_max_concurrent: 5 });

      await fake.caller!.hangup();
      await finalCall(callId);

      const off = await h.request('PUT', `/api/settings/endpoints/${endpoint.body.id}`, { body: { is_active: false } });
      expect(off.status).toBe(200);
      const refused = await exotel.simulateInbound({ appletUrl: endpoint.body.inbound_webhook_url, from: '+919812345670', to: OUR_NUMBER });
      await refused.ended;
      expect(refused.callbacks[0]).toMatchObject({ status: 404 });
      expect(refused).toMatchObject({ endedBy: 'applet-failed' });
      expect(refused.caller).toBeUndefined();
    } finally {
      await configureExotel(h, { ...CREDS, phoneNumber: OUR_NUMBER }, { exotel_max_concurrent: 5 });
      await h.request('DELETE', `/api/settings/endpoints/${endpoint.body.id}`);
    }
  }, 60_000);
});
