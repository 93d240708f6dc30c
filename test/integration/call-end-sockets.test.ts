/**
 * No vendor connection outlives its call, whatever ends it. ElevenLabs, Deepgram, Cartesia and
 * Sarvam cap concurrent connections per account, so a socket left open after a call (until the
 * vendor's inactivity timeout, or until the gateway's ready session of the voice is retired) is a
 * call the plan can no longer carry.
 *
 * Real API, worker, media gateway and Temporal; calls rung by the fake Twilio; every speech vendor
 * through its fake, which counts the connections open on its side (OpenAI: speech responses and
 * transcription requests in flight). After each call's stream closes, every fake must count 0
 * within a second: for each TTS and STT vendor, hung up before, during and after the greeting
 * (ElevenLabs speaking Hindi, the reported case), and for each way a call ends — the caller hangs
 * up (stop message and close), the socket drops without a stop, the provider's stop message alone,
 * the agent ends the call, the STT fails for good, the gateway drains.
 */
import path from 'node:path';
import type { RunningGateway } from '../../src/gateway/server';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { setLogLevel } from '../../src/shared/logger';
import { startFakeAzureSpeech, type FakeAzureSpeech } from '../fakes/azure-speech-server';
import type { FakeCartesia } from '../fakes/cartesia-server';
import type { FakeDeepgram } from '../fakes/deepgram-server';
import { startFakeElevenLabs, type FakeElevenLabs } from '../fakes/elevenlabs-server';
import type { FakeOpenAI } from '../fakes/openai-server';
import { startFakeOpenAiTranscription, type FakeOpenAiTranscription } from '../fakes/openai-transcription-server';
import { startFakeSarvam, type FakeSarvam } from '../fakes/sarvam-server';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { createAgent, eventually } from '../support/fixtures';
import type { Harness } from '../support/harness';
import { configureTwilio } from '../support/telephony';
import { startVoiceStack, type VoiceStack } from '../support/voice-stack';

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
const ACCOUNT_SID = `AC${'7e'.repeat(16)}`;
const AUTH_TOKEN = 'call-end-sockets-auth-token-01234';
const OUR_NUMBER = '+15005550006';
const GREETING = 'Hello, you have reached the clinic. How can I help you today?';
const HINDI_GREETING = 'नमस्ते, आप क्लिनिक से बात कर रहे हैं। मैं आपकी क्या मदद कर सकती हूँ?';
const QUESTION = 'I would like to book an appointment for tomorrow.';
/** Every fake at 0 this soon after the call's stream closed. */
const CLOSED_WITHIN_MS = 1000;

let h: Harness;
let twilio: FakeTwilio;
let gateway: RunningGateway;
let llm: FakeOpenAI;
let deepgram: FakeDeepgram;
let cartesia: FakeCartesia;
let elevenlabs: FakeElevenLabs;
let sarvam: FakeSarvam;
let azure: FakeAzureSpeech;
let whisper: FakeOpenAiTranscription;
let stack: VoiceStack;
let phone = 0;

beforeAll(async () => {
  setLogLevel('error');
  [twilio, elevenlabs, sarvam, azure, whisper] = await Promise.all([
    startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN }),
    startFakeElevenLabs({ apiKey: 'el-key' }),
    startFakeSarvam({ apiKey: 'sv-key' }),
    startFakeAzureSpeech({ apiKey: 'az-key' }),
    startFakeOpenAiTranscription({ apiKey: 'sk-test' }),
  ]);
  const configure = (h: Harness) => configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, { twilio_max_concurrent: 10 });
  stack = await startVoiceStack({
    telephony: [{ fake: twilio, env: { TWILIO_API_BASE_URL: twilio.apiBaseUrl }, configure }],
    env: {
      ELEVENLABS_API_KEY: 'el-key',
      ELEVENLABS_BASE_URL: elevenlabs.url,
      SARVAM_API_KEY: 'sv-key',
      SARVAM_BASE_URL: sarvam.url,
      AZURE_SPEECH_KEY: 'az-key',
      AZURE_SPEECH_HOST: azure.url,
      OPENAI_STT_BASE_URL: whisper.url,
      // The drain's deadline, for the last test: a call still up then hears the goodbye and ends.
      GATEWAY_DRAIN_SECS: '1',
      // GATEWAY_TTS_SPARE_SECS stays at its default (50 s): ready sessions are part of what is checked.
    },
    alsoStop: [elevenlabs, sarvam, azure, whisper],
  });
  ({ h, openai: llm, cartesia, deepgram } = stack);
  gateway = stack.gateway!;
  for (const fake of [deepgram, sarvam, azure, whisper]) fake.script(() => QUESTION);
}, 180_000);

afterAll(() => stack?.stop());

/** What each vendor holds open for us now. */
function vendorsSee(): Record<string, number> {
  return {
    elevenlabs: elevenlabs.openConnections(),
    cartesia: cartesia.openConnections(),
    deepgram: deepgram.openConnections(),
    sarvam: sarvam.openConnections(),
    azure: azure.openConnections(),
    openai: llm.openSpeechResponses() + whisper.openRequests(),
  };
}
const total = () => Object.values(vendorsSee()).reduce((a, b) => a + b, 0);

const heardMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;
const events = async (callId: string): Promise<Array<{ event_type: string; data: any }>> => (await h.request('GET', `/api/calls/${callId}/events`)).body;
const spoke = async (callId: string, n: number) => (await events(callId)).filter((e) => e.event_type === 'agent_spoke').length >= n;

interface Voice {
  stt: string;
  tts: string;
  language?: { stt: string; tts: string };
}
const agents = new Map<string, string>();

async function agentFor(voice: Voice): Promise<string> {
  const name = `end-${voice.stt}-${voice.tts}${voice.language ? `-${voice.language.tts}` : ''}`;
  if (!agents.has(name)) {
    await createAgent(h.db, h.box, {
      name,
      greeting: voice.language?.tts === 'hi' ? HINDI_GREETING : GREETING,
      stt_provider: voice.stt,
      tts_provider: voice.tts,
      ...(voice.language ? { stt_language: voice.language.stt, tts_language: voice.language.tts } : {}),
      pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 },
    });
    agents.set(name, name);
  }
  return name;
}

async function ring(voice: Voice) {
  const agent = await agentFor(voice);
  const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/${agent}`, from: `+1415555${String(4000 + phone++)}`, to: OUR_NUMBER });
  expect(fake.errors).toEqual([]);
  const verb = fake.verbs![0]!;
  if (verb.verb !== 'Connect') throw new Error(`expected <Connect>, got ${fake.twiml}`);
  return { caller: fake.caller!, callId: verb.stream.parameters.call_id! };
}

/** Once the streams have closed: ms until no vendor holds a connection of ours (fails after the bound). */
async function closedAfterStream(...callers: TwilioCaller[]): Promise<number> {
  await Promise.all(callers.map((c) => c.closed));
  const closedAt = performance.now();
  let last = vendorsSee();
  try {
    await eventually(async () => ((last = vendorsSee()), total() === 0), CLOSED_WITHIN_MS, 10);
  } catch {
    throw new Error(`vendor connections still open ${CLOSED_WITHIN_MS} ms after the call's stream closed: ${JSON.stringify(last)}`);
  }
  return Math.round(performance.now() - closedAt);
}

/** The call's record is final (so the next call starts from a quiet gateway). */
async function ended(callId: string): Promise<{ status: string; end_reason: string }> {
  let last: unknown;
  return eventually(async () => {
    const c = (await h.request('GET', `/api/calls/${callId}`)).body;
    last = c;
    return ['completed', 'failed'].includes(c.status) && c;
  }, 30_000, 100).catch(() => {
    throw new Error(`call ${callId} did not end: ${JSON.stringify(last)}`);
  });
}

type Moment = 'as the stream starts' | 'before the greeting' | 'during the greeting' | 'after the greeting';

/** Waits for `moment` of the call's greeting. */
async function reach(moment: Moment, call: { caller: TwilioCaller; callId: string }): Promise<void> {
  if (moment === 'as the stream starts') return; // the start message is sent; the gateway is looking the call up
  // The gateway holds the call (its TTS session is synthesising the greeting), nothing heard yet.
  if (moment === 'before the greeting') return void (await eventually(async () => gateway.calls.get(call.callId) !== undefined && heardMs(call.caller) === 0, 15_000, 2));
  if (moment === 'during the greeting') return void (await eventually(async () => heardMs(call.caller) >= 200, 15_000, 10));
  await eventually(async () => heardMs(call.caller) >= 500 && (await spoke(call.callId, 1)), 20_000, 50);
  await new Promise((r) => setTimeout(r, 300)); // the next turn's spare is open
}

const HINDI_ELEVENLABS: Voice = { stt: 'deepgram', tts: 'elevenlabs', language: { stt: 'hi', tts: 'hi' } };
const MOMENTS: Moment[] = ['as the stream starts', 'before the greeting', 'during the greeting', 'after the greeting'];

describe('vendor connections close when the call ends', () => {
  beforeEach(async () => {
    // Each case starts from a gateway holding nothing.
    await eventually(async () => total() === 0, 5000, 20).catch(() => {
      throw new Error(`vendor connections open before the call: ${JSON.stringify(vendorsSee())}`);
    });
  });

  const table: Array<[string, Moment, Voice]> = [
    ...MOMENTS.map((m): [string, Moment, Voice] => ['ElevenLabs (Hindi) + Deepgram', m, HINDI_ELEVENLABS]),
    ...(['cartesia', 'deepgram', 'azure', 'openai'] as const).flatMap((tts) =>
      (['during the greeting', 'after the greeting'] as const).map((m): [string, Moment, Voice] => [`TTS ${tts} + Deepgram`, m, { stt: 'deepgram', tts }]),
    ),
    ...(['sarvam', 'azure', 'openai'] as const).flatMap((stt) =>
      (['before the greeting', 'after the greeting'] as const).map((m): [string, Moment, Voice] => [
        `ElevenLabs + STT ${stt}`,
        m,
        { stt, tts: 'elevenlabs', ...(stt === 'sarvam' ? { language: { stt: 'hi-IN', tts: 'hi' } } : {}) },
      ]),
    ),
  ];

  it.each(table)('%s: the caller hangs up %s', async (_label, moment, voice) => {
    const call = await ring(voice);
    await reach(moment, call);
    await call.caller.hangup();
    const ms = await closedAfterStream(call.caller);
    expect(ms).toBeLessThan(CLOSED_WITHIN_MS);
    if (process.env.SOCKETS_TIMING) console.log(`${_label}, ${moment}: vendor connections closed ${ms} ms after the stream`);
    // A stream gone before the gateway had set the call up never told the workflow it connected:
    // what its record then says is not this test's concern, its sockets are.
    if (moment !== 'as the stream starts') expect(await ended(call.callId)).toMatchObject({ end_reason: 'user_ended' });
  }, 60_000);

  it('the socket drops without a stop message (ElevenLabs, Hindi), during the greeting', async () => {
    const call = await ring(HINDI_ELEVENLABS);
    await reach('during the greeting', call);
    call.caller.drop();
    expect(await closedAfterStream(call.caller)).toBeLessThan(CLOSED_WITHIN_MS);
    await ended(call.callId);
  }, 60_000);

  it('the provider sends its stop message and leaves the socket to the gateway (ElevenLabs, Hindi)', async () => {
    const call = await ring(HINDI_ELEVENLABS);
    await reach('after the greeting', call);
    (call.caller as unknown as { send(m: object): void }).send({ event: 'stop', sequenceNumber: '9999', streamSid: call.caller.streamSid, stop: { accountSid: ACCOUNT_SID, callSid: call.caller.callSid } });
    expect(await closedAfterStream(call.caller)).toBeLessThan(CLOSED_WITHIN_MS);
    expect(await ended(call.callId)).toMatchObject({ end_reason: 'user_ended' });
  }, 60_000);

  it('the agent ends the call (end_call after the caller spoke)', async () => {
    llm.enqueue({ content: 'Goodbye!', tool_calls: [{ name: 'end_call', arguments: {} }] });
    const call = await ring(HINDI_ELEVENLABS);
    await reach('after the greeting', call);
    await call.caller.say(HELLO_WAV);
    expect(await closedAfterStream(call.caller)).toBeLessThan(CLOSED_WITHIN_MS);
    expect(await ended(call.callId)).toMatchObject({ status: 'completed', end_reason: 'agent_ended' });
  }, 60_000);

  it('the STT goes down for good and the call fails', async () => {
    const call = await ring(HINDI_ELEVENLABS);
    await reach('after the greeting', call);
    deepgram.outage(true);
    try {
      expect(await closedAfterStream(call.caller)).toBeLessThan(CLOSED_WITHIN_MS);
      expect(await ended(call.callId)).toMatchObject({ status: 'failed', end_reason: 'error' });
    } finally {
      deepgram.outage(false);
    }
  }, 60_000);

  // Last: a drained gateway takes no more calls.
  it('the gateway drains: the calls still up at its deadline hear the goodbye and end', async () => {
    const calls = [await ring(HINDI_ELEVENLABS), await ring({ stt: 'sarvam', tts: 'cartesia' })];
    for (const call of calls) await reach('after the greeting', call);
    const drained = gateway.drain();
    expect(await closedAfterStream(...calls.map((c) => c.caller))).toBeLessThan(CLOSED_WITHIN_MS);
    await drained;
    expect(total()).toBe(0);
  }, 90_000);
});
