/**
 * Deterministic "speech" for the TTS fakes: a sine tone whose length is proportional to the
 * text (audible and clearly non-silent, so the gateway's recordings and VAD see real signal),
 * encoded with the gateway's own mu-law codec and cut into chunks that are sent with
 * configurable pacing. Defaults are zero latency: every chunk goes out synchronously.
 */
import { encodeMulaw } from '../../src/audio/g711';

export interface FakeTtsAudioOptions {
  /** Audio length per character of (trimmed) text. Default 60 ms. */
  msPerChar?: number;
  /** Length of one audio chunk. Default 100 ms. */
  chunkMs?: number;
  /** Wait before the first chunk of each generation. Default 0. */
  firstChunkDelayMs?: number;
  /** Wait between chunks. Default 0 (all at once). */
  chunkIntervalMs?: number;
  /** Default 440 Hz. */
  toneHz?: number;
}

export const FAKE_TTS_DEFAULTS = { msPerChar: 60, chunkMs: 100, firstChunkDelayMs: 0, chunkIntervalMs: 0, toneHz: 440 };
const AMPLITUDE = 8000; // about -12 dBFS: loud enough for any VAD, far from clipping

export type AudioEncoding = 'mulaw' | 'pcm_s16le';

/** Milliseconds of audio the fakes produce for a text: characters of the trimmed text × msPerChar. */
export function fakeSpeechMs(text: string, msPerChar = FAKE_TTS_DEFAULTS.msPerChar): number {
  return [...text.trim()].length * msPerChar;
}

/**
 * The tone for `text` at `sampleRate`, continuing the phase at `startSample` so consecutive
 * pieces join smoothly.
 */
export function synthesize(
  text: string,
  options: FakeTtsAudioOptions,
  startSample: number,
  encoding: AudioEncoding = 'mulaw',
  sampleRate = 8000,
): { audio: Buffer; samples: number } {
  const msPerChar = options.msPerChar ?? FAKE_TTS_DEFAULTS.msPerChar;
  const hz = options.toneHz ?? FAKE_TTS_DEFAULTS.toneHz;
  const samples = Math.round((fakeSpeechMs(text, msPerChar) * sampleRate) / 1000);
  const pcm = new Int16Array(samples);
  for (let i = 0; i < samples; i++) pcm[i] = Math.round(AMPLITUDE * Math.sin((2 * Math.PI * hz * (startSample + i)) / sampleRate));
  const audio = encoding === 'mulaw' ? encodeMulaw(pcm) : Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  return { audio, samples };
}

export function splitChunks(audio: Buffer, options: FakeTtsAudioOptions, bytesPerMs: number): Buffer[] {
  const size = Math.max(1, Math.round((options.chunkMs ?? FAKE_TTS_DEFAULTS.chunkMs) * bytesPerMs));
  const chunks: Buffer[] = [];
  for (let i = 0; i < audio.length; i += size) chunks.push(audio.subarray(i, i + size));
  return chunks;
}

/**
 * Sends chunks with the configured pacing. With zero delays everything happens synchronously,
 * inside the caller's message handler. `send` returns false to stop (cancelled, socket gone);
 * `finished(completed)` is called once at the end.
 */
export function playChunks(chunks: Buffer[], options: FakeTtsAudioOptions, send: (chunk: Buffer, index: number) => boolean, finished: (completed: boolean) => void): void {
  const firstDelay = options.firstChunkDelayMs ?? FAKE_TTS_DEFAULTS.firstChunkDelayMs;
  const interval = options.chunkIntervalMs ?? FAKE_TTS_DEFAULTS.chunkIntervalMs;
  let index = 0;
  const step = (): void => {
    while (index < chunks.length) {
      if (!send(chunks[index]!, index)) return finished(false);
      index++;
      if (interval > 0 && index < chunks.length) {
        setTimeout(step, interval);
        return;
      }
    }
    finished(true);
  };
  if (firstDelay > 0) setTimeout(step, firstDelay);
  else step();
}

export function words(text: string): string[] {
  return text.trim().split(/\s+/).filter(Boolean);
}
