/**
 * The vendor side of the simulated phone (./phone-caller.ts): what a vendor's wire adapter
 * implements (CallerWire), the records the phone keeps, and audio helpers for callers' speech.
 */
import crypto from 'node:crypto';
import type { AudioFormat } from '../../src/audio/format';
import { resample } from '../../src/audio/resampler';
import { channelOf, readWavFile } from '../../src/audio/wav';

/** The playback tick: the phone plays (and accounts for) agent audio in 20 ms steps. */
export const FRAME_MS = 20;
/** Peak sample above which a played frame counts as speech rather than silence or noise. */
export const SPEECH_PEAK = 500;

/** Wall-clock time in epoch milliseconds, with sub-millisecond precision. */
export const nowMs = (): number => performance.timeOrigin + performance.now();

export const newSid = (prefix: string) => `${prefix}${crypto.randomBytes(16).toString('hex')}`;

/** What a message from the gateway asks the phone to do. */
export type WireAction = { kind: 'media'; audio: Buffer } | { kind: 'mark'; name: string } | { kind: 'clear' } | { kind: 'error'; error: string };

/** One vendor's side of the media stream, as the phone needs it. */
export interface CallerWire {
  /** The stream's audio format, both ways. */
  readonly format: AudioFormat;
  /** Milliseconds of caller audio per outgoing media message (a multiple of 20). */
  readonly frameMs: number;
  /** A clear reports pending marks at once (Twilio); false: they are dropped (Plivo checkpoints). */
  readonly echoMarksOnClear: boolean;
  /** Headers of the WebSocket upgrade (user agent, signatures, credentials). */
  headers(url: string): Record<string, string>;
  /** Messages sent as soon as the socket is open (Twilio: connected, start). */
  opening(): object[];
  /** One media message with `audio` in the stream's format; `chunk` counts from 1. A Buffer is sent as a binary frame. */
  media(audio: Buffer, chunk: number): object | Buffer;
  dtmf(digit: string): object;
  /** The hang-up message, or null when the vendor just closes the socket. */
  stop(): object | null;
  /** Sent when the audio before a mark/checkpoint has played (or a clear dropped it, if echoed). */
  markPlayed(name: string): object;
  /** Sent after a clear, when the vendor confirms one (Plivo clearedAudio); null otherwise. */
  cleared(): object | null;
  /** What a JSON message from the gateway asks for; anything the vendor would reject is an error. */
  read(message: unknown): WireAction;
  /** What a binary frame from the gateway is (the web channel's audio); absent: binary is an error. */
  readBinary?(data: Buffer): WireAction;
}

export interface PhoneCallerOptions {
  /** Clock multiplier; only for unit tests of the fake itself. Real-time (1) otherwise. */
  speed?: number;
  /**
   * Keep the agent's media: `media` messages in `events` and each played frame's audio (default
   * true). False in benchmarks: a played frame keeps only its times and peak, so 100 callers'
   * minutes of frames do not grow the heap into long major collections that stall their clock.
   */
  keepMediaEvents?: boolean;
}

export interface ReceivedEvent {
  atMs: number;
  message: any;
}

export interface PlayedFrame {
  /** When the first byte of this frame arrived in a media message. */
  receivedAtMs: number;
  /** When this 20 ms frame started playing to the caller. */
  playedAtMs: number;
  /**
   * When it was due by the phone's own clock. Earlier than playedAtMs when this process stalled
   * and played overdue frames at once; a real phone's playout does not stall.
   */
  dueAtMs: number;
  /** The frame as received, in the stream's format. */
  audio: Buffer;
  /** Largest absolute sample of the frame (speech vs silence). */
  peak: number;
}

export interface EchoedMark {
  name: string;
  atMs: number;
  /** Echoed because of a `clear`, not because its audio played. */
  cleared: boolean;
}

export interface SpeechSpan {
  /** When the first frame of the utterance was sent. */
  startedAtMs: number;
  /** When each message of the utterance was sent (after a stall of this process, later than its turn). */
  sentAtMs: number[];
  /** When the last frame was sent. */
  endedAtMs: number;
  durationMs: number;
  /** Milliseconds of audio in each message (the vendor's chunk). */
  messageMs: number;
}

export interface CloseInfo {
  by: 'caller' | 'gateway';
  code: number;
  atMs: number;
}

/** Loads a WAV (any rate, mono or stereo: first channel) as 16-bit PCM at `sampleRate`. */
export function loadSpeechWav(path: string, sampleRate = 8000): Int16Array {
  const wav = readWavFile(path);
  const mono = channelOf(wav, 0);
  return wav.sampleRate === sampleRate ? mono : resample(mono, wav.sampleRate, sampleRate);
}

/** A sine tone as PCM: a stand-in for speech where only "loud vs silent" matters. */
export function tonePcm(durationMs: number, frequencyHz = 440, amplitude = 8000, sampleRate = 8000): Int16Array {
  const n = Math.round((durationMs * sampleRate) / 1000);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * frequencyHz * i) / sampleRate));
  return out;
}

/** Largest absolute sample. */
export function pcmPeak(pcm: Int16Array): number {
  let peak = 0;
  for (const s of pcm) peak = Math.max(peak, Math.abs(s));
  return peak;
}
