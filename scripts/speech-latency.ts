/**
 * Measures what the speech adapters add to a turn's latency, against the local vendor fakes
 * (zero vendor latency, loopback network), so the numbers are the adapters' own overhead:
 * - TTS warm: pushText(first sentence) → first `audio` event, on a session already open;
 * - TTS cold: session created and first sentence pushed at once → first `audio` (handshake included);
 * - STT: finalize() → final `transcript` event.
 * Run: npx tsx scripts/speech-latency.ts
 */
import { encodeMulaw } from '../src/audio/g711';
import { DeepgramStt, type SttStream } from '../src/providers/stt';
import { CartesiaTts, ElevenLabsTts, type TtsOptions, type TtsSession } from '../src/providers/tts';

const createTts = (provider: 'cartesia' | 'elevenlabs', options: TtsOptions): TtsSession =>
  provider === 'cartesia' ? new CartesiaTts(options) : new ElevenLabsTts(options);
import { startFakeCartesia } from '../test/fakes/cartesia-server';
import { startFakeDeepgram } from '../test/fakes/deepgram-server';
import { startFakeElevenLabs } from '../test/fakes/elevenlabs-server';

const ROUNDS = 200;
const KEY = 'latency-key';
const SENTENCE = 'Sure, I can help you with that booking.';
const now = () => performance.now();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function summary(label: string, samples: number[]): void {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(2);
  console.log(`${label.padEnd(46)} median ${at(0.5)} ms  p95 ${at(0.95)} ms  max ${s.at(-1)!.toFixed(2)} ms  (n=${s.length})`);
}

function firstAudio(tts: TtsSession, id: string): Promise<number> {
  return new Promise((resolve) => {
    const onAudio = (a: { id: string }) => {
      if (a.id !== id) return;
      tts.off('audio', onAudio);
      resolve(now());
    };
    tts.on('audio', onAudio);
  });
}

function doneOf(tts: TtsSession, id: string): Promise<void> {
  return new Promise((resolve) => {
    const onDone = (d: { id: string }) => {
      if (d.id !== id) return;
      tts.off('done', onDone);
      resolve();
    };
    tts.on('done', onDone);
  });
}

async function ttsWarm(provider: 'cartesia' | 'elevenlabs', baseUrl: string): Promise<number[]> {
  const tts = createTts(provider, { apiKey: KEY, baseUrl, voice: 'voice-1' });
  await tts.ready;
  await sleep(20);
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const id = `u${i}`;
    const audio = firstAudio(tts, id);
    const done = doneOf(tts, id);
    const t0 = now();
    tts.startUtterance(id);
    tts.pushText(id, SENTENCE);
    samples.push((await audio) - t0);
    tts.endText(id);
    await done;
    await sleep(5); // let ElevenLabs' next spare open, as it would between real turns
  }
  await tts.close();
  return samples;
}

async function ttsCold(provider: 'cartesia' | 'elevenlabs', baseUrl: string): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS / 4; i++) {
    const t0 = now();
    const tts = createTts(provider, { apiKey: KEY, baseUrl, voice: 'voice-1' });
    const audio = firstAudio(tts, 'u');
    tts.startUtterance('u');
    tts.pushText('u', SENTENCE);
    samples.push((await audio) - t0);
    await tts.close();
  }
  return samples;
}

async function sttFinalize(baseUrl: string, script: (texts: string[]) => void): Promise<number[]> {
  const stt: SttStream = new DeepgramStt({ apiKey: KEY, baseUrl });
  await stt.ready;
  const pcm = new Int16Array(2400); // 300 ms of tone: one utterance
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000));
  const speech = encodeMulaw(pcm);
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    script([`utterance ${i}`]);
    for (let off = 0; off < speech.length; off += 160) stt.sendAudio(speech.subarray(off, off + 160));
    await sleep(2);
    const final = new Promise<number>((resolve) => {
      const onTranscript = (t: { isFinal: boolean }) => {
        if (!t.isFinal) return;
        stt.off('transcript', onTranscript);
        resolve(now());
      };
      stt.on('transcript', onTranscript);
    });
    const t0 = now();
    stt.finalize();
    samples.push((await final) - t0);
  }
  await stt.close();
  return samples;
}

async function main(): Promise<void> {
  const cartesia = await startFakeCartesia({ apiKey: KEY });
  const elevenlabs = await startFakeElevenLabs({ apiKey: KEY });
  const deepgram = await startFakeDeepgram({ apiKey: KEY });
  try {
    summary('Cartesia warm: pushText → first audio', await ttsWarm('cartesia', cartesia.url));
    summary('ElevenLabs warm (spare): pushText → first audio', await ttsWarm('elevenlabs', elevenlabs.url));
    summary('Cartesia cold: new session → first audio', await ttsCold('cartesia', cartesia.url));
    summary('ElevenLabs cold: new session → first audio', await ttsCold('elevenlabs', elevenlabs.url));
    summary('Deepgram: finalize() → final transcript', await sttFinalize(deepgram.url, (t) => deepgram.script(t)));
  } finally {
    await Promise.all([cartesia.stop(), elevenlabs.stop(), deepgram.stop()]);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
