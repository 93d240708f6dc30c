/**
 * One call's audio pipeline on a 16 kHz 16-bit PCM stream (what Exotel and Plivo's L16 streams
 * carry), with the Deepgram and Cartesia fakes over real sockets: the caller's PCM goes to the
 * VAD and to the STT as linear16 at 16 kHz, TTS is asked for 16 kHz PCM and its audio leaves in
 * 640-byte 20 ms frames, barge-in clears the line, and the recording is a 16 kHz stereo WAV of
 * the call's length. The socket side is a plain recorder of what the vendor codec would be given;
 * the call workflow is represented by the signals the pipeline sends it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle, AsyncCompletionClient } from '@temporalio/client';
import { PCM16_16K, toPcm16 } from '../../src/audio/format';
import { loadConfig } from '../../src/config';
import { CallMedia } from '../../src/gateway/call/call-media';
import { readWavFile, channelOf } from '../../src/audio/wav';
import { sharedSileroModel } from '../../src/gateway/vad/silero';
import { SileroBatcher } from '../../src/gateway/vad/silero-batch';
import { createLogger, setLogLevel } from '../../src/shared/logger';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import type { UtteranceSignal, VoiceConfig } from '../../workflows/call-definitions';
import { startFakeCartesia, type FakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { loadSpeechWav, pcmPeak } from '../fakes/phone-caller';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'audio');
const RATE = 16000;
const FRAME = 320; // 20 ms at 16 kHz

let deepgram: FakeDeepgram;
let cartesia: FakeCartesia;
let vad: SileroBatcher;
let dataDir: string;

beforeAll(async () => {
  setLogLevel('error');
  deepgram = await startFakeDeepgram({ apiKey: 'dg' });
  cartesia = await startFakeCartesia({ apiKey: 'ca' });
  vad = SileroBatcher.of(await sharedSileroModel());
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pcm16-call-'));
});
afterAll(async () => {
  await Promise.all([deepgram.stop(), cartesia.stop()]);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const voice: VoiceConfig = {
  agentName: 'wideband',
  stt: { provider: 'deepgram', model: null, language: 'en', mode: null, settings: {} },
  tts: { provider: 'cartesia', model: null, voice: null, language: null, settings: {} },
  pipeline: { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 },
};

function startCall() {
  const frames: Array<{ atMs: number; bytes: Buffer }> = [];
  const clears: number[] = [];
  const signals: UtteranceSignal[] = [];
  const closed: Array<{ code: number }> = [];
  const config = loadConfig({ DATA_DIR: dataDir, DEEPGRAM_API_KEY: 'dg', DEEPGRAM_BASE_URL: deepgram.url, CARTESIA_API_KEY: 'ca', CARTESIA_BASE_URL: cartesia.url });
  const workflow = { signal: async (_def: unknown, payload: UtteranceSignal) => void signals.push(payload) } as unknown as WorkflowHandle;
  const startPerf = performance.now();
  let call!: CallMedia;
  call = new CallMedia({
    callId: `pcm16-${Date.now()}`,
    streamSid: 'stream-1',
    format: PCM16_16K,
    voice,
    config,
    workflow,
    // These calls' activities are not run here: nothing is ever completed.
    activities: {} as AsyncCompletionClient,
    vad,
    log: createLogger('test'),
    startPerf,
    out: {
      media: (frame) => frames.push({ atMs: performance.now() - startPerf, bytes: Buffer.from(frame) }),
      // The vendor reports a mark once the audio before it has played.
      mark: (name) => setTimeout(() => call.speech.playback.onMark(name), call.speech.playback.bufferedMs()),
      clear: () => clears.push(performance.now() - startPerf),
      close: (code) => closed.push({ code }),
    },
  });
  return { call, frames, clears, signals, closed, startPerf };
}

/** Feeds 16 kHz PCM to the call in 20 ms frames, in real time. */
async function speak(call: CallMedia, pcm: Int16Array, startPerf: number): Promise<void> {
  for (let i = 0; i < pcm.length; i += FRAME) {
    const frame = new Int16Array(FRAME);
    frame.set(pcm.subarray(i, i + FRAME));
    call.onCallerAudio(frame, performance.now() - startPerf);
    await sleep(20);
  }
}

async function silence(call: CallMedia, ms: number, startPerf: number): Promise<void> {
  await speak(call, new Int16Array((ms * RATE) / 1000), startPerf);
}

it('runs a call on a 16 kHz PCM stream: STT in linear16/16000, TTS in 16 kHz PCM frames, barge-in, a 16 kHz recording', async () => {
  const { call, frames, clears, signals, startPerf } = startCall();
  const streams = deepgram.received.streams.length;

  // The agent speaks: TTS is asked for 16 kHz PCM, and it goes out in 640-byte frames of sound.
  const greeting = await call.speech.speak({ callId: call.callId, utteranceId: 'greeting', text: 'Hello, you are through to the clinic.' }, new AbortController().signal);
  expect(greeting).toMatchObject({ interrupted: false, heardText: 'Hello, you are through to the clinic.' });
  const request = [...cartesia.received.contexts.values()].at(-1)!;
  expect(request).toBeDefined();
  expect(cartesia.received.messages.at(-1)).toMatchObject({ output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 } });
  expect(frames.length).toBeGreaterThan(50);
  expect(frames.every((f) => f.bytes.length === 640)).toBe(true);
  expect(pcmPeak(toPcm16(frames[10]!.bytes, PCM16_16K))).toBeGreaterThan(4000);

  // The caller speaks: the STT hears linear16 at 16 kHz and the utterance reaches the workflow.
  const stt = deepgram.received.streams[streams]!;
  expect(stt.query).toMatchObject({ encoding: 'linear16', sample_rate: '16000' });
  deepgram.script(['I would like an appointment.', 'Stop, wait a second.']);
  await speak(call, loadSpeechWav(path.join(FIXTURES, 'hello-appointment.wav'), RATE), startPerf);
  await silence(call, 800, startPerf);
  expect(signals.map((s) => s.text)).toEqual(['I would like an appointment.']);
  // 16-bit samples at 16 kHz: 32 bytes per ms of the caller's audio.
  expect(stt.audioBytes).toBeGreaterThan(3000 * 32);

  // Barge-in: a long answer is cleared within 300 ms of the caller starting to talk.
  const answer = call.speech.speak({ callId: call.callId, utteranceId: 'answer', text: 'We have openings at nine, at half past ten and at eleven in the morning, and one in the afternoon.' }, new AbortController().signal);
  await sleep(1500);
  const stop = loadSpeechWav(path.join(FIXTURES, 'stop-wait.wav'), RATE);
  const speechStartMs = performance.now() - startPerf + 300; // the clip's first 0.3 s are silence
  const talking = speak(call, stop, startPerf);
  const cut = await answer;
  expect(cut.interrupted).toBe(true);
  expect(clears.length).toBe(1);
  const lastAgentFrame = frames.filter((f) => pcmPeak(toPcm16(f.bytes, PCM16_16K)) > 1000).at(-1)!;
  expect(lastAgentFrame.atMs - speechStartMs).toBeLessThan(300);
  await talking;
  await silence(call, 800, startPerf);
  expect(signals.at(-1)!.text).toBe('Stop, wait a second.');

  // The recording: 16 kHz stereo, the call's length, caller left and agent right.
  const lengthMs = performance.now() - startPerf;
  const closure = await call.close('hangup');
  expect(closure.reason).toBe('hangup');
  const wav = readWavFile(call.recordingPath);
  expect(wav).toMatchObject({ sampleRate: 16000, channels: 2, encoding: 'pcm16' });
  expect(Math.abs((wav.frames / RATE) * 1000 - lengthMs)).toBeLessThan(200);
  const loud = (samples: Int16Array, fromMs: number, toMs: number) => pcmPeak(samples.subarray((fromMs * RATE) / 1000, (toMs * RATE) / 1000)) > 1000;
  const agent = channelOf(wav, 1);
  const caller = channelOf(wav, 0);
  expect(loud(agent, 100, 1500)).toBe(true); // the greeting
  expect(loud(caller, frames.at(-1)!.atMs + 200, lengthMs)).toBe(true); // "Stop, wait a second."
}, 60_000);
