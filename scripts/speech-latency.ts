/**
 * Time to first result of every registered speech adapter against its local fake (zero vendor
 * latency, loopback network), so the numbers are the adapters' own overhead:
 * - TTS warm: pushText(first sentence) → first `audio` event, on a session already open;
 * - TTS cold: session created and first sentence pushed at once → first `audio` (handshake included);
 * - STT warm: finalize() after an utterance → final transcript, on a stream already open;
 * - STT cold: stream created, utterance sent, finalize() → first final transcript.
 * Adapters and fakes come from the registries and test/support/speech-vendors.ts: a new vendor is
 * measured as soon as it is registered there.
 * Run: npx tsx scripts/speech-latency.ts [rounds]
 */
import { PCM16_8K } from '../src/audio/format';
import { pcmToBytes } from '../src/audio/pcm';
import { createAgentStt, STT_VENDORS, type SttStream } from '../src/providers/stt';
import { createAgentTts, TTS_VENDORS, type TtsSession } from '../src/providers/tts';
import type { ProviderConfig } from '../src/providers/vendor';
import { FakePool, STT_FAKES, TTS_FAKES } from '../test/support/speech-vendors';

const ROUNDS = Number(process.argv[2] ?? 100);
const SENTENCE = 'Sure, I can help you with that booking.';
const now = () => performance.now();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function summary(label: string, samples: number[]): void {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(2);
  console.log(`${label.padEnd(40)} median ${at(0.5).padStart(7)} ms  p95 ${at(0.95).padStart(7)} ms  max ${s.at(-1)!.toFixed(2).padStart(7)} ms  (n=${s.length})`);
}

function first<T>(emitter: TtsSession | SttStream, event: string, match: (v: T) => boolean): Promise<number> {
  return new Promise((resolve) => {
    const on = (v: T) => {
      if (!match(v)) return;
      (emitter as any).off(event, on);
      resolve(now());
    };
    (emitter as any).on(event, on);
  });
}

const doneOf = (tts: TtsSession, id: string) => first<{ id: string }>(tts, 'done', (d) => d.id === id);

async function ttsWarm(name: string, config: ProviderConfig): Promise<number[]> {
  const tts = createAgentTts({ tts_provider: name }, config);
  await tts.ready;
  await sleep(20);
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const id = `u${i}`;
    const audio = first<{ id: string }>(tts, 'audio', (a) => a.id === id);
    const done = doneOf(tts, id);
    const t0 = now();
    tts.startUtterance(id);
    tts.pushText(id, SENTENCE);
    // A one-sentence reply: the text ends at once (Deepgram would otherwise hold text past its Flush budget).
    tts.endText(id);
    samples.push((await audio) - t0);
    await done;
    await sleep(5); // as between real turns (ElevenLabs opens its next spare)
  }
  await tts.close();
  return samples;
}

async function ttsCold(name: string, config: ProviderConfig): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < Math.max(5, ROUNDS / 4); i++) {
    const t0 = now();
    const tts = createAgentTts({ tts_provider: name }, config);
    const audio = first<{ id: string }>(tts, 'audio', () => true);
    tts.startUtterance('u');
    tts.pushText('u', SENTENCE);
    tts.endText('u');
    samples.push((await audio) - t0);
    await tts.close();
  }
  return samples;
}

/** 300 ms of tone then 100 ms of silence, as the gateway sends caller audio: 16-bit PCM, 8 kHz, 20 ms frames. */
function utteranceFrames(): Buffer[] {
  const pcm = new Int16Array(3200);
  for (let i = 0; i < 2400; i++) pcm[i] = Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000));
  const bytes = pcmToBytes(pcm);
  const frames: Buffer[] = [];
  for (let off = 0; off < bytes.length; off += 320) frames.push(bytes.subarray(off, off + 320));
  return frames;
}

async function oneUtterance(stt: SttStream, script: (t: string[]) => void, i: number, t0?: number): Promise<number> {
  script([`utterance ${i}`]);
  const final = first<{ isFinal: boolean; text: string }>(stt, 'transcript', (t) => t.isFinal && t.text === `utterance ${i}`);
  for (const frame of utteranceFrames()) stt.sendAudio(frame);
  await sleep(2);
  const start = t0 ?? now();
  stt.finalize();
  return (await final) - start;
}

async function sttWarm(name: string, config: ProviderConfig, script: (t: string[]) => void): Promise<number[]> {
  const stt = createAgentStt({ stt_provider: name }, config, { format: PCM16_8K });
  await stt.ready;
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) samples.push(await oneUtterance(stt, script, i));
  await stt.close();
  return samples;
}

async function sttCold(name: string, config: ProviderConfig, script: (t: string[]) => void): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < Math.max(5, ROUNDS / 4); i++) {
    const t0 = now();
    const stt = createAgentStt({ stt_provider: name }, config, { format: PCM16_8K });
    samples.push(await oneUtterance(stt, script, i, t0));
    await stt.close();
  }
  return samples;
}

async function main(): Promise<void> {
  const pool = new FakePool();
  try {
    for (const vendor of TTS_VENDORS) {
      const config = (await TTS_FAKES[vendor.name]!(pool)).env as ProviderConfig;
      summary(`TTS ${vendor.name} warm: text → first audio`, await ttsWarm(vendor.name, config));
      summary(`TTS ${vendor.name} cold: new → first audio`, await ttsCold(vendor.name, config));
    }
    for (const vendor of STT_VENDORS) {
      const fake = await STT_FAKES[vendor.name]!(pool);
      const config = fake.env as ProviderConfig;
      summary(`STT ${vendor.name} warm: finalize → final`, await sttWarm(vendor.name, config, (t) => fake.script(t)));
      summary(`STT ${vendor.name} cold: new → first final`, await sttCold(vendor.name, config, (t) => fake.script(t)));
    }
  } finally {
    await pool.stopAll();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
