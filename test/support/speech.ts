/** Small helpers for the STT/TTS adapter tests: waiting for events, caller audio. */
import type { EventEmitter } from 'node:events';
import { encodeMulaw, decodeMulaw } from '../../src/audio/g711';
import { rms } from '../../src/audio/pcm';

/** Resolves with the first emission of `event` whose arguments satisfy `match`. */
export function nextEvent<T = any>(emitter: EventEmitter<any>, event: string, match: (value: T) => boolean = () => true, timeoutMs = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`timed out after ${timeoutMs} ms waiting for '${event}'`));
    }, timeoutMs);
    const listener = (value: T) => {
      if (!match(value)) return;
      clearTimeout(timer);
      emitter.off(event, listener);
      resolve(value);
    };
    emitter.on(event, listener);
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls until `condition` holds. */
export async function until(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(5);
  }
}

/** Caller "speech": a 300 Hz tone as 8 kHz mu-law, cut into 20 ms (160-byte) frames. */
export function toneFrames(ms: number): Buffer[] {
  const samples = (ms * 8000) / 1000;
  const pcm = new Int16Array(samples);
  for (let i = 0; i < samples; i++) pcm[i] = Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000));
  return frames(encodeMulaw(pcm));
}

export function silenceFrames(ms: number): Buffer[] {
  return frames(Buffer.alloc((ms * 8000) / 1000, 0xff));
}

function frames(audio: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < audio.length; i += 160) out.push(audio.subarray(i, i + 160));
  return out;
}

/** Loudness of mu-law audio as 16-bit RMS. */
export function mulawRms(audio: Buffer): number {
  return rms(decodeMulaw(audio));
}

export interface RecordedTts {
  audio: Array<{ id: string; audio: Buffer; at: number }>;
  done: Array<{ id: string; reason: string; characters: number }>;
  errors: Array<Error & { details?: Record<string, unknown> }>;
}

/** Everything a TTS session emits, for assertions. */
export function recordTts(tts: EventEmitter<any>): RecordedTts {
  const r: RecordedTts = { audio: [], done: [], errors: [] };
  tts.on('audio', (a: { id: string; audio: Buffer }) => r.audio.push({ ...a, at: performance.now() }));
  tts.on('done', (d: RecordedTts['done'][number]) => r.done.push(d));
  tts.on('error', (e: Error) => r.errors.push(e));
  return r;
}

export const audioOf = (r: RecordedTts, id: string) => Buffer.concat(r.audio.filter((a) => a.id === id).map((a) => a.audio));
