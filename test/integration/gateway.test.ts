/**
 * The media gateway end to end over real sockets: a simulated Twilio caller on the Media Streams
 * WebSocket, the Deepgram / Cartesia / OpenAI protocol fakes, a real Temporal server, and a
 * stand-in call workflow (test/support/gateway-probe-workflow.ts) that drives the gateway's
 * activities on the gateway's own task queue exactly as the call workflow does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import WebSocket from 'ws';
import { rms } from '../../src/audio/pcm';
import { readWavFile, channelOf } from '../../src/audio/wav';
import { startGateway, type RunningGateway } from '../../src/gateway/server';
import { streamToken, verifyStreamToken } from '../../src/gateway/stream-token';
import { PIPELINE_DEFAULTS, type PipelineSettings } from '../../src/shared/catalog';
import { setLogLevel } from '../../src/shared/logger';
import { callWorkflowId, type GatewayEvent, type VoiceConfig } from '../../workflows/call-definitions';
import { startFakeCartesia, type FakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { connectTwilioCaller, FRAME_MS, loadSpeechWav, newSid, nowMs, type TwilioCaller } from '../fakes/twilio-caller';
import { lineSilentAfterMs } from '../support/barge-in-silence';
import { startHarness, type Harness } from '../support/harness';
import { killHard } from '../support/worker-process-control';
import {
  endMediaUpdate,
  finishSignal,
  gatewayProbeWorkflow,
  probeStateQuery,
  speakUpdate,
  voiceTurnUpdate,
  type ProbeState,
} from '../support/gateway-probe-workflow';
import { sleep } from '../support/speech';
import { maxMediaMessageBytes } from '../../src/providers/telephony/media-registry';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'audio');
const HELLO_WAV = path.join(FIXTURES, 'hello-appointment.wav'); // speech 520–3860 ms
const STOP_WAV = path.join(FIXTURES, 'stop-wait.wav'); // speech 300–1900 ms
const STOP_ONSET_MS = 300;
const MS_PER_CHAR = 60; // the TTS fakes' speaking rate

const DEEPGRAM_KEY = 'dg-test-key';
const CARTESIA_KEY = 'cartesia-test-key';

let deepgram: FakeDeepgram;
let cartesia: FakeCartesia;
let openai: FakeOpenAI;
let h: Harness;
let gateway: RunningGateway;
let probeWorker: Worker;
let probeRunning: Promise<void>;
let probeConnection: NativeConnection;
const probeQueue = `gateway-probe-${crypto.randomBytes(4).toString('hex')}`;
const callers: TwilioCaller[] = [];
const workflows: WorkflowHandle[] = [];

function voiceConfig(pipeline: Partial<PipelineSettings> = {}): VoiceConfig {
  return {
    agentName: 'gateway-probe',
    stt: { provider: 'deepgram', model: null, language: 'en', mode: null, settings: {} },
    tts: { provider: 'cartesia', model: null, voice: 'voice-1', language: null, settings: {} },
    pipeline: { ...PIPELINE_DEFAULTS, ...pipeline },
  };
}

async function eventually<T>(probe: () => Promise<T | undefined | null | false>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}

const probeState = (handle: WorkflowHandle) => handle.query(probeStateQuery);

interface TestCall {
  callId: string;
  handle: WorkflowHandle;
  caller: TwilioCaller;
  state(): Promise<ProbeState>;
}

async function startProbe(pipeline: Partial<PipelineSettings> = {}): Promise<{ callId: string; handle: WorkflowHandle }> {
  const callId = crypto.randomUUID();
  const handle = await h.temporal.workflow.start(gatewayProbeWorkflow, {
    taskQueue: probeQueue,
    workflowId: callWorkflowId(callId),
    args: [{ callId, voice: voiceConfig(pipeline) }],
  });
  workflows.push(handle);
  return { callId, handle };
}

async function connect(callId: string, url = `${gateway.url}/media/twilio`): Promise<TwilioCaller> {
  const caller = await connectTwilioCaller({ url, customParameters: { call_id: callId, token: streamToken(h.config.JWT_SECRET!, callId) } });
  callers.push(caller);
  return caller;
}

async function newCall(pipeline: Partial<PipelineSettings> = {}): Promise<TestCall> {
  const { callId, handle } = await startProbe(pipeline);
  const caller = await connect(callId);
  await eventually(async () => (await probeState(handle)).connected, 10_000, 'mediaConnected');
  return { callId, handle, caller, state: () => probeState(handle) };
}

const speak = (call: TestCall, utteranceId: string, text: string) => call.handle.executeUpdate(speakUpdate, { args: [{ utteranceId, text }] });

function voiceTurn(call: TestCall, utteranceId: string) {
  return call.handle.executeUpdate(voiceTurnUpdate, {
    args: [{ utteranceId, provider: 'openai', model: 'fake-model', messages: [{ role: 'user', content: 'Hi' }], tools: [] }],
  });
}

const eventsOf = (events: GatewayEvent[], type: GatewayEvent['type']) => events.filter((e) => e.type === type);

/** Milliseconds of agent speech the caller has heard (non-silent frames). */
const heardSpeechMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;

/** A raw socket on the stream endpoint, for protocol abuse; resolves the close code. */
/** The gateway's /healthz (stream statistics per provider under `streams`). */
async function health(): Promise<any> {
  return (await fetch(`${gateway.url.replace('ws:', 'http:')}/healthz`)).json();
}

async function rawStream(): Promise<{ ws: WebSocket; closed: Promise<number> }> {
  const ws = new WebSocket(`${gateway.url}/media/twilio`);
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  ws.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, closed };
}

function startMessage(callId: string, token: string, streamSid = newSid('MZ')) {
  return JSON.stringify({
    event: 'start',
    sequenceNumber: '1',
    streamSid,
    start: {
      accountSid: newSid('AC'),
      streamSid,
      callSid: newSid('CA'),
      tracks: ['inbound'],
      customParameters: { call_id: callId, token },
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    },
  });
}

beforeAll(async () => {
  setLogLevel('error'); // bad-input tests make the gateway warn on purpose
  deepgram = await startFakeDeepgram({ apiKey: DEEPGRAM_KEY });
  cartesia = await startFakeCartesia({ apiKey: CARTESIA_KEY });
  openai = await startFakeOpenAI();
  h = await startHarness({
    env: {
      DEEPGRAM_API_KEY: DEEPGRAM_KEY,
      DEEPGRAM_BASE_URL: deepgram.url,
      CARTESIA_API_KEY: CARTESIA_KEY,
      CARTESIA_BASE_URL: cartesia.url,
      OPENAI_BASE_URL: openai.url,
      OPENAI_API_KEY: 'sk-test',
    },
  });
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../support/gateway-probe-workflow'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => console.error(m) } as never,
  });
  probeConnection = await NativeConnection.connect({ address: h.config.TEMPORAL_ADDRESS! });
  probeWorker = await Worker.create({ connection: probeConnection, taskQueue: probeQueue, workflowBundle: { code } });
  probeRunning = probeWorker.run();
  gateway = await startGateway(
    h.gatewayDeps(),
    0,
    '127.0.0.1',
  );
}, 120_000);

afterEach(async () => {
  for (const c of callers.splice(0)) if (c.isOpen) await c.hangup();
  for (const w of workflows.splice(0)) await w.signal(finishSignal).catch(() => undefined);
  openai.reset();
});

afterAll(async () => {
  await gateway?.stop();
  probeWorker?.shutdown();
  await probeRunning;
  await probeConnection?.close();
  await h?.stop();
  await Promise.all([deepgram?.stop(), cartesia?.stop(), openai?.stop()]);
  // Recordings of this file's calls live in the harness's temporary DATA_DIR.
  if (h?.config.dataDir.includes('vap-data-')) fs.rmSync(h.config.dataDir, { recursive: true, force: true });
});

describe('stream tokens', () => {
  it('accept only the HMAC of this call id under this secret', () => {
    const token = streamToken('secret-one-0123456789', 'call-1');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(verifyStreamToken('secret-one-0123456789', 'call-1', token)).toBe(true);
    expect(verifyStreamToken('secret-one-0123456789', 'call-2', token)).toBe(false);
    expect(verifyStreamToken('secret-two-0123456789', 'call-1', token)).toBe(false);
    expect(verifyStreamToken('secret-one-0123456789', 'call-1', token.slice(1))).toBe(false);
    expect(verifyStreamToken('secret-one-0123456789', 'call-1', undefined)).toBe(false);
  });
});

describe('media gateway', () => {
  it('answers /healthz with its task queue, /livez, and unknown paths with 404', async () => {
    const health = await fetch(`${gateway.url.replace('ws:', 'http:')}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', task_queue: gateway.taskQueue });
    expect(gateway.taskQueue).toMatch(/^gateway-.+-\d+-[0-9a-f]{8}$/);
    // Liveness (the Kubernetes chart's probe): 200 while the process answers, draining or not.
    const live = await fetch(`${gateway.url.replace('ws:', 'http:')}/livez`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok' });
    const other = new WebSocket(`${gateway.url}/media/other`);
    const refused = await new Promise<number | undefined>((resolve) => {
      other.on('unexpected-response', (_req, res) => resolve(res.statusCode));
      other.on('error', () => resolve(undefined));
    });
    expect(refused).toBe(404);
  });

  it('speaks a greeting the caller hears as audio, with tts events and usage', async () => {
    const call = await newCall();
    const connected = (await call.state()).connected!;
    expect(connected).toMatchObject({ gatewayTaskQueue: gateway.taskQueue, streamSid: call.caller.streamSid });
    expect(connected.recordingPath).toBe(path.join(h.config.dataDir, 'recordings', `${call.callId}.wav`));

    const text = 'Hello! Thanks for calling the clinic. How can I help?';
    const outcome = await speak(call, 'greeting', text);
    expect(outcome).toMatchObject({ heardText: text, interrupted: false, characters: text.length - 2 }); // 3 sentences, no separators
    const expectedMs = (text.length - 2) * MS_PER_CHAR; // the fake voices each sentence's trimmed text
    // Resolved only once played: everything was heard, at real-time speed.
    expect(heardSpeechMs(call.caller)).toBeGreaterThanOrEqual(expectedMs - 200);
    const frames = call.caller.speechFrames();
    const spanMs = frames[frames.length - 1]!.playedAtMs - frames[0]!.playedAtMs;
    expect(spanMs).toBeGreaterThan(expectedMs - 300);
    expect(call.caller.protocolErrors).toEqual([]);
    // Paced: the caller never held much more than the lead of unplayed audio.
    const maxAhead = Math.max(...call.caller.played.map((f) => f.playedAtMs - f.receivedAtMs));
    expect(maxAhead).toBeLessThan(150);

    expect(eventsOf(outcome.events, 'tts_started')).toEqual([expect.objectContaining({ data: { utterance_id: 'greeting' } })]);
    const [stopped] = eventsOf(outcome.events, 'tts_stopped');
    expect(stopped!.data).toMatchObject({ utterance_id: 'greeting', interrupted: false });
    expect(Math.abs((stopped!.data.duration_ms as number) - expectedMs)).toBeLessThanOrEqual(40);
    expect(eventsOf(outcome.events, 'tts_usage')[0]!.data).toMatchObject({ characters: outcome.characters, provider: 'cartesia' });
    expect(eventsOf(outcome.events, 'ttfb_metric').map((e) => e.data.processor)).toContain('tts');
    // Progress marks per sentence and one at the end, all echoed by the caller.
    const marks = call.caller.marksEchoed.map((m) => m.name);
    expect(marks).toEqual(['greeting:0', 'greeting:1', 'greeting:end']);
  });

  it('turns caller speech into an utterance signal with the transcript and STT latency', async () => {
    const call = await newCall();
    deepgram.script(['I would like to book an appointment for tomorrow.']);
    await call.caller.say(HELLO_WAV);
    const state = await eventually(async () => {
      const s = await call.state();
      return s.utterances.length > 0 && s;
    });
    expect(state.utterances).toHaveLength(1);
    const [u] = state.utterances;
    expect(u).toMatchObject({ text: 'I would like to book an appointment for tomorrow.', duringAgentSpeech: false });
    const stt = eventsOf(u!.events ?? [], 'ttfb_metric').find((e) => e.data.processor === 'stt');
    expect(stt!.data.ms).toBeGreaterThanOrEqual(0);
    // Finalize was asked of the STT when the VAD heard the caller stop.
    expect(deepgram.received.streams.at(-1)!.controls).toContain('Finalize');
  });

  it('streams an LLM reply into TTS sentence by sentence: the first audio plays before the LLM is done', async () => {
    const call = await newCall();
    deepgram.script(['I would like to book an appointment for tomorrow.']);
    await call.caller.say(HELLO_WAV);
    await eventually(async () => (await call.state()).utterances.length > 0);

    const reply = 'Sure, I can help with that. Let me see which times are still open for tomorrow morning at the clinic.';
    const chunkDelayMs = 80;
    let requestAt = 0;
    openai.setResponder(() => {
      requestAt = nowMs();
      return { content: reply, chunk_delay_ms: chunkDelayMs };
    });
    const result = await voiceTurn(call, 'u1');
    const llmDoneNotBefore = requestAt + reply.split(' ').length * chunkDelayMs;
    const firstAudio = call.caller.speechFrames()[0]!;
    expect(firstAudio.receivedAtMs).toBeLessThan(llmDoneNotBefore - 800);
    // The first sentence went to TTS on its own, before the rest existed.
    const context = cartesia.received.contexts.get('u1')!;
    expect(context.transcripts[0]).toBe('Sure, I can help with that.');

    expect(result).toMatchObject({ content: reply, heardText: reply, interrupted: false, toolCalls: [] });
    expect(result.usage.completion_tokens).toBeGreaterThan(0);
    expect(result.ttfbMs).toEqual(expect.any(Number));
    const metrics = Object.fromEntries(eventsOf(result.events, 'ttfb_metric').map((e) => [e.data.processor, e.data]));
    expect(metrics.tts).toBeDefined();
    // End of the caller's speech → first agent audio on the socket (includes vad_stop_secs).
    expect(metrics.e2e!.ms).toBeGreaterThan(metrics.e2e!.after_vad_stop_ms as number);
    console.log(`voice turn: LLM ttfb ${result.ttfbMs} ms, TTS ttfb ${metrics.tts!.ms} ms, e2e ${metrics.e2e!.ms} ms (${metrics.e2e!.after_vad_stop_ms} ms after the VAD stop)`);
    expect(heardSpeechMs(call.caller)).toBeGreaterThanOrEqual((reply.length - 1) * MS_PER_CHAR - 200);
  });

  it('returns a voice turn with tool calls as soon as the LLM is done, while its words still play', async () => {
    const call = await newCall();
    openai.enqueue({ content: 'Let me check the calendar for you.', tool_calls: [{ name: 'check_calendar', arguments: { day: 'tomorrow' } }] });
    const result = await voiceTurn(call, 'u-tools');
    expect(result.toolCalls).toEqual([{ id: expect.any(String), name: 'check_calendar', arguments: { day: 'tomorrow' } }]);
    expect(result).toMatchObject({ heardText: 'Let me check the calendar for you.', interrupted: false });
    // ~2 s of speech: the result came back while most of it was still to be heard.
    expect(heardSpeechMs(call.caller)).toBeLessThan(1000);
    const next = await speak(call, 'u-after', 'Found it.');
    const stopped = eventsOf(next.events, 'tts_stopped').map((e) => e.data.utterance_id);
    expect(stopped).toEqual(['u-tools', 'u-after']);
  });

  it('barge-in: the line is silent within 300 ms of the caller starting to speak, and the turn reports what was heard', async () => {
    const call = await newCall({ min_words: 1 });
    const sentences = [
      'Our clinic is open from eight in the morning until six in the evening on weekdays.',
      'On Saturdays we open at nine and close at noon.',
      'We are closed on Sundays and on public holidays.',
      'You can also book online through our website at any time of the day.',
    ];
    const reply = sentences.join(' ');
    // The LLM is still writing when the caller interrupts: it must be aborted too.
    openai.setResponder(() => ({ content: reply, chunk_delay_ms: 120 }));
    deepgram.script(['Stop, wait a second.']);
    const turn = voiceTurn(call, 'u-long');
    await eventually(async () => heardSpeechMs(call.caller) >= 1500, 10_000, 'agent audio');
    const span = await call.caller.say(STOP_WAV);
    const result = await turn;
    const speechStart = call.caller.sentAtOffset(span, STOP_ONSET_MS);
    const silentAfterMs = lineSilentAfterMs(call.caller, span, STOP_ONSET_MS);
    console.log(`barge-in: caller's line silent ${silentAfterMs.toFixed(0)} ms after speech start (clear sent ${(call.caller.clears[0]!.atMs - speechStart).toFixed(0)} ms after)`);
    expect(silentAfterMs).toBeLessThanOrEqual(300);
    expect(call.caller.clears).toHaveLength(1);

    expect(result.interrupted).toBe(true);
    expect(result.toolCalls).toEqual([]);
    expect(result.content).toBe(result.heardText);
    const heardWords = result.heardText.split(' ');
    expect(heardWords.length).toBeGreaterThan(3);
    expect(reply.split(' ').slice(0, heardWords.length)).toEqual(heardWords);
    const expectedChars = heardSpeechMs(call.caller) / MS_PER_CHAR;
    expect(Math.abs(result.heardText.length - expectedChars)).toBeLessThan(25);
    const interruption = eventsOf(result.events, 'interruption');
    expect(interruption).toEqual([expect.objectContaining({ data: { utterance_id: 'u-long', heard_text: result.heardText } })]);
    expect(eventsOf(result.events, 'tts_stopped')[0]!.data).toMatchObject({ utterance_id: 'u-long', interrupted: true });
    // The TTS context was cancelled, and the utterance that interrupted is a normal turn.
    await eventually(async () => cartesia.received.contexts.get('u-long')?.cancelled);
    const state = await eventually(async () => {
      const s = await call.state();
      return s.utterances.length > 0 && s;
    });
    expect(state.utterances[0]).toMatchObject({ text: 'Stop, wait a second.', duringAgentSpeech: false });
  });

  it('min_words: a short backchannel does not interrupt; enough words do', async () => {
    const call = await newCall({ min_words: 3 });
    deepgram.script(['Uh-huh.']);
    const text = 'Your appointment is confirmed for Tuesday at ten. We will send you a reminder the day before. Please bring your insurance card.';
    const first = speak(call, 's1', text);
    await eventually(async () => heardSpeechMs(call.caller) >= 500, 10_000, 'agent audio');
    await call.caller.say(STOP_WAV);
    const state = await eventually(async () => {
      const s = await call.state();
      return s.utterances.length > 0 && s;
    });
    expect(state.utterances[0]).toMatchObject({ text: 'Uh-huh.', duringAgentSpeech: true });
    const outcome = await first;
    expect(outcome).toMatchObject({ interrupted: false, heardText: text });
    expect(call.caller.clears).toHaveLength(0);

    // Three words from the transcript: the agent is interrupted mid-speech.
    deepgram.script(['No, wait, stop please.']);
    const second = speak(call, 's2', text);
    await eventually(async () => heardSpeechMs(call.caller) >= text.length * MS_PER_CHAR + 500, 10_000, 'agent audio');
    await call.caller.say(STOP_WAV);
    const interrupted = await second;
    expect(interrupted.interrupted).toBe(true);
    expect(call.caller.clears).toHaveLength(1);
  });

  it('ends the call after queued speech has played, with a recording of the call', async () => {
    const call = await newCall();
    deepgram.script(['I would like to book an appointment for tomorrow.']);
    const greeting = 'Hello, this is the clinic.';
    await speak(call, 'g', greeting);
    await call.caller.say(HELLO_WAV);
    await eventually(async () => (await call.state()).utterances.length > 0);
    // The agent says goodbye and ends the call (end_call): the turn returns while the words play.
    const bye = 'Goodbye and have a nice day.';
    openai.enqueue({ content: bye, tool_calls: [{ name: 'end_call', arguments: {} }] });
    const heardBefore = heardSpeechMs(call.caller);
    const turn = await voiceTurn(call, 'bye');
    expect(turn.toolCalls.map((t) => t.name)).toEqual(['end_call']);
    await call.handle.executeUpdate(endMediaUpdate, { args: [{ reason: 'agent_ended' }] });
    const closed = await call.caller.closed;
    expect(closed.by).toBe('gateway');
    // The goodbye was heard in full before the socket closed.
    expect(heardSpeechMs(call.caller) - heardBefore).toBeGreaterThanOrEqual((bye.length - 1) * MS_PER_CHAR);
    const state = await eventually(async () => {
      const s = await call.state();
      return s.session && s;
    });
    expect(state.session!.result!.reason).toBe('closed');

    const wav = readWavFile(state.connected!.recordingPath!);
    expect(wav).toMatchObject({ channels: 2, sampleRate: 8000 });
    const callMs = closed.atMs - call.caller.connectedAtMs;
    const wavMs = (wav.samples.length / 2 / 8000) * 1000;
    expect(Math.abs(wavMs - callMs)).toBeLessThan(250);
    // Caller on the left where they spoke, agent on the right where it spoke; both aligned.
    const caller = channelOf(wav, 0);
    const agent = channelOf(wav, 1);
    const loud = (pcm: Int16Array) => {
      const out: number[] = [];
      for (let i = 0; i + 160 <= pcm.length; i += 160) if (rms(pcm, i, i + 160) > 300) out.push(i / 8);
      return out;
    };
    const callerLoud = loud(caller);
    const agentLoud = loud(agent);
    const greetingMs = greeting.length * MS_PER_CHAR;
    expect(agentLoud.length * 20).toBeGreaterThan(greetingMs + (bye.length - 1) * MS_PER_CHAR - 100);
    expect(callerLoud.length * 20).toBeGreaterThan(2500);
    // The caller spoke after the greeting had finished.
    expect(callerLoud[0]!).toBeGreaterThan(agentLoud[0]! + greetingMs - 200);
    const fixtureSpeech = loadSpeechWav(HELLO_WAV);
    expect(callerLoud.length * 20).toBeLessThanOrEqual((fixtureSpeech.length / 8) + 100);
  });

  it('reports a caller hang-up to the media session', async () => {
    const call = await newCall();
    await sleep(200);
    await call.caller.hangup();
    const state = await eventually(async () => {
      const s = await call.state();
      return s.session && s;
    });
    expect(state.session!.result!.reason).toBe('hangup');
    expect(gateway.calls.get(call.callId)).toBeUndefined();
    // Speech requested after the hang-up is simply not heard (the call is over, not the gateway lost).
    await expect(speak(call, 'late', 'Are you still there?')).resolves.toMatchObject({ heardText: '', interrupted: true });
    // A stream for the finished call is refused.
    const again = await connect(call.callId);
    expect((await again.closed).code).toBe(1008);
  });

  it('finishes a valid recording when the connection drops without a stop', async () => {
    const call = await newCall();
    await speak(call, 'g', 'Hello there.');
    call.caller.drop();
    const state = await eventually(async () => {
      const s = await call.state();
      return s.session && s;
    });
    expect(state.session!.result!.reason).toBe('hangup');
    const wav = readWavFile(state.connected!.recordingPath!);
    expect(wav).toMatchObject({ channels: 2, sampleRate: 8000 });
    expect(channelOf(wav, 1).some((s) => Math.abs(s) > 1000)).toBe(true);
    // Finalised: the header's sizes match the file (not just readable by a tolerant parser).
    const bytes = fs.readFileSync(state.connected!.recordingPath!);
    expect(bytes.readUInt32LE(40)).toBe(bytes.length - 44);
    expect(bytes.readUInt32LE(4)).toBe(bytes.length - 8);
  });

  it('closes only unauthenticated, flooding or unknown-call sockets; a live call ignores bad messages and goes on', async () => {
    const good = await newCall();
    const live = await newCall();

    const cases: Array<[string, (ws: WebSocket) => void, number]> = [
      ['malformed JSON before start', (ws) => ws.send('{"event": "media", oops'), 1008],
      ['binary frame before start', (ws) => ws.send(Buffer.from([1, 2, 3])), 1008],
      ['media before start', (ws) => ws.send(JSON.stringify({ event: 'media', sequenceNumber: '2', streamSid: 'MZ1', media: { track: 'inbound', chunk: '1', timestamp: '0', payload: '' } })), 1008],
      ['bad token', (ws) => ws.send(startMessage(good.callId, 'not-the-token')), 1008],
      ['unknown call', (ws) => ws.send(startMessage('no-such-call', streamToken(h.config.JWT_SECRET!, 'no-such-call'))), 1008],
      ['call already streaming', (ws) => ws.send(startMessage(good.callId, streamToken(h.config.JWT_SECRET!, good.callId))), 1008],
      ['oversized message', (ws) => ws.send(JSON.stringify({ event: 'media', pad: 'x'.repeat(maxMediaMessageBytes() + 1) })), 1009],
      ['flood', (ws) => { for (let i = 0; i < 1000; i++) ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' })); }, 1008],
    ];
    for (const [name, abuse, code] of cases) {
      const raw = await rawStream();
      abuse(raw.ws);
      await expect(raw.closed.then((c) => `${name}: ${c}`)).resolves.toBe(`${name}: ${code}`);
    }

    // On an authenticated, live call every kind of bad message is logged, counted and ignored.
    const before = (await health()).streams.twilio;
    const liveWs = (live.caller as unknown as { ws: WebSocket }).ws;
    const sid = live.caller.streamSid;
    const junk = [
      JSON.stringify({ event: 'someFutureEvent', streamSid: sid }),
      'not json at all',
      Buffer.from([1, 2, 3]),
      JSON.stringify({ event: 'mark', streamSid: sid, mark: { name: 'u1:end' } }), // a mark echo without sequenceNumber
      JSON.stringify({ event: 'mark', streamSid: sid, mark: {} }),
      JSON.stringify({ event: 'media', streamSid: 'MZ-another-stream', media: { track: 'inbound', chunk: '1', timestamp: '0', payload: 'AAAA' } }),
      JSON.stringify({ event: 'media', streamSid: sid, media: { track: 'inbound', chunk: '1', timestamp: '0', payload: 'not base64!' } }),
      startMessage(live.callId, 'a second start'),
    ];
    for (const message of junk) liveWs.send(message);
    await sleep(200);
    expect(live.caller.isOpen).toBe(true);
    const after = (await health()).streams.twilio;
    expect(after.invalid_messages - before.invalid_messages).toBe(6);
    expect(after.ignored_messages - before.ignored_messages).toBe(1);
    expect(after.rejected.unauthenticated).toBeGreaterThanOrEqual(4);
    expect(after.rejected.flood).toBeGreaterThanOrEqual(1);
    expect(after.rejected.unknown_or_finished_call).toBeGreaterThanOrEqual(2);
    // The live call still hears the agent and is heard.
    const heard = await speak(live, 'after-junk', 'Still talking to you.');
    expect(heard.interrupted).toBe(false);
    expect(live.caller.speechFrames().length).toBeGreaterThan(0);
    expect(live.caller.isOpen).toBe(true);

    const outcome = await speak(good, 'still-here', 'Still here.');
    expect(outcome.interrupted).toBe(false);
    expect(good.caller.speechFrames().length).toBeGreaterThan(0);
    expect(good.caller.isOpen).toBe(true);
  });

  it('reports an STT outage as an error event and keeps hearing the caller', async () => {
    const call = await newCall();
    deepgram.dropConnections(1011, 'simulated outage');
    await sleep(300);
    deepgram.script(['I would like to book an appointment for tomorrow.']);
    await call.caller.say(HELLO_WAV);
    const state = await eventually(async () => {
      const s = await call.state();
      return s.utterances.length > 0 && s;
    });
    expect(state.utterances[0]!.text).toBe('I would like to book an appointment for tomorrow.');
    const errors = eventsOf(state.utterances[0]!.events ?? [], 'error');
    expect(errors[0]!.data).toMatchObject({ context: 'stt', message: expect.stringContaining('Deepgram') });
  });

  it('reports a TTS connection drop as an error event and speaks again afterwards', async () => {
    const call = await newCall();
    const text = 'This sentence plays while the TTS connection drops underneath it.';
    const outcome = speak(call, 'cut', text);
    await eventually(async () => cartesia.received.contexts.get('cut'));
    cartesia.dropConnections(1011, 'simulated outage');
    const first = await outcome;
    expect(first.interrupted).toBe(false);
    const later = await speak(call, 'after', 'I am back.');
    expect(later).toMatchObject({ heardText: 'I am back.', interrupted: false });
    const errors = eventsOf([...first.events, ...later.events], 'error');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]!.data).toMatchObject({ context: 'tts', message: expect.stringContaining('Cartesia') });
  });

  it('fails a voice turn whose LLM fails, for the workflow to retry, and reports it', async () => {
    const call = await newCall();
    openai.failNext(1, 503);
    const failed = await voiceTurn(call, 'llm-down').then(
      () => null,
      (err: Error & { cause?: { cause?: { type?: string; nonRetryable?: boolean } } }) => err.cause?.cause,
    );
    expect(failed).toMatchObject({ type: 'LlmUnavailable', nonRetryable: false });
    openai.enqueue({ status: 400, error_message: 'bad request' });
    const rejected = await voiceTurn(call, 'llm-bad').then(
      () => null,
      (err: Error & { cause?: { cause?: { type?: string; nonRetryable?: boolean } } }) => err.cause?.cause,
    );
    expect(rejected).toMatchObject({ type: 'LlmRequestRejected', nonRetryable: true });
    // The retry of a turn gets the same utterance id: it still speaks.
    openai.enqueue({ content: 'Here you go.' });
    const retried = await voiceTurn(call, 'llm-down');
    expect(retried).toMatchObject({ heardText: 'Here you go.', interrupted: false });
    const errors = eventsOf(retried.events, 'error').map((e) => e.data.context);
    expect(errors).toEqual(['llm', 'llm']);
    expect(call.caller.speechFrames().length * FRAME_MS).toBeLessThan(('Here you go.'.length + 2) * MS_PER_CHAR);
  });

  it('fails the media session by heartbeat timeout when the gateway process dies', async () => {
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '..', 'support', 'gateway-process.ts')], {
      cwd: path.join(__dirname, '..', '..'),
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS,
        JWT_SECRET: h.config.JWT_SECRET,
        DATA_DIR: h.config.dataDir,
        DEEPGRAM_API_KEY: DEEPGRAM_KEY,
        DEEPGRAM_BASE_URL: deepgram.url,
        CARTESIA_API_KEY: CARTESIA_KEY,
        CARTESIA_BASE_URL: cartesia.url,
        LOG_LEVEL: 'error',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const ready = await new Promise<{ url: string; taskQueue: string }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`gateway process did not start: ${stderr}`)), 60_000);
        child.stdout!.on('data', (d: Buffer) => {
          const m = /gateway ready (\{.*\})/.exec(d.toString());
          if (m) {
            clearTimeout(timer);
            resolve(JSON.parse(m[1]!) as { url: string; taskQueue: string });
          }
        });
        child.once('exit', (code) => reject(new Error(`gateway process exited (${code}): ${stderr}`)));
      });
      const { callId, handle } = await startProbe();
      const caller = await connect(callId, `${ready.url}/media/twilio`);
      await eventually(async () => (await probeState(handle)).connected, 10_000, 'mediaConnected');
      expect((await probeState(handle)).connected!.gatewayTaskQueue).toBe(ready.taskQueue);
      await sleep(1500); // the media session is running and heartbeating
      expect((await probeState(handle)).session).toBeNull();
      const killedAt = Date.now();
      await killHard(child);
      await caller.closed;
      const state = await eventually(async () => {
        const s = await probeState(handle);
        return s.session && s;
      }, 20_000, 'media session failure');
      expect(state.session!.error).toMatchObject({ cause: 'TimeoutFailure', timeoutType: 'HEARTBEAT' });
      const noticedAfterMs = Date.now() - killedAt;
      expect(noticedAfterMs).toBeLessThan(12_000);
    } finally {
      await killHard(child);
    }
  }, 90_000);
});
