/**
 * Measurements on the caller's side of a simulated call (test/fakes/twilio-caller.ts): where the
 * speech is in a caller's WAV clip, when the caller said it, and what the caller heard of the
 * agent (speech frames, spans, playback gaps). Times are epoch ms from the fake caller.
 */
import { rms } from '../../src/audio/pcm';
import { FRAME_MS, loadSpeechWav, SPEECH_PEAK, type PlayedFrame, type SpeechSpan } from '../../test/fakes/twilio-caller';

/** 16-bit RMS of a 20 ms frame above which it counts as speech (about -40 dBFS, as the STT fake). */
export const SPEECH_RMS = 300;

export interface SpeechClip {
  path: string;
  pcm: Int16Array;
  frames: number;
  /** Index of the first and the last 20 ms frame that carries speech. */
  firstSpeechFrame: number;
  lastSpeechFrame: number;
}

export function loadClip(path: string): SpeechClip {
  const pcm = loadSpeechWav(path);
  const frames = Math.ceil(pcm.length / 160);
  let first = -1;
  let last = -1;
  for (let i = 0; i < frames; i++) {
    if (rms(pcm, i * 160, Math.min(pcm.length, (i + 1) * 160)) > SPEECH_RMS) {
      if (first < 0) first = i;
      last = i;
    }
  }
  if (first < 0) throw new Error(`${path} has no speech`);
  return { path, pcm, frames, firstSpeechFrame: first, lastSpeechFrame: last };
}

/**
 * When the caller's speech in a played clip began and ended: the moments the fake phone sent the
 * first and the last frame that carries speech. Each is timed from the message that carried it:
 * after a stall the phone sends overdue messages in a burst, and the gateway cannot answer speech
 * before it has left (a stopwatch started at the planned time once found a barge-in's `clear`
 * "before" the speech).
 */
export function speechTimes(clip: SpeechClip, span: SpeechSpan): { startMs: number; endMs: number } {
  return { startMs: sentAt(span, clip.firstSpeechFrame * FRAME_MS), endMs: sentAt(span, clip.lastSpeechFrame * FRAME_MS) };
}

/** When the audio at `offsetMs` into an utterance left: its message's send time, plus its place in that message. */
function sentAt(span: SpeechSpan, offsetMs: number): number {
  const i = Math.floor(offsetMs / span.messageMs);
  const sent = span.sentAtMs[i];
  return sent === undefined ? span.startedAtMs + offsetMs : sent + (offsetMs - i * span.messageMs);
}

export const isSpeech = (frame: Pick<PlayedFrame, 'peak'>): boolean => frame.peak > SPEECH_PEAK;

/** First agent speech frame the caller received at or after `fromMs` (receive time). */
export function firstSpeechReceivedAfter<F extends Pick<PlayedFrame, 'peak' | 'receivedAtMs'>>(played: F[], fromMs: number, fromIndex = 0): F | undefined {
  for (let i = fromIndex; i < played.length; i++) {
    const f = played[i]!;
    if (f.receivedAtMs >= fromMs && isSpeech(f)) return f;
  }
  return undefined;
}

/**
 * When the agent went silent for good after the caller started talking over it at `fromMs`: the
 * end of the last agent speech frame played before `untilMs` (when a reply could begin). Null
 * when no agent speech was playing at `fromMs`.
 */
export function silentAfter(played: PlayedFrame[], fromMs: number, untilMs: number): number | null {
  let playing = false;
  let end: number | null = null;
  for (const f of played) {
    // A frame that started within two frames before `fromMs` counts as playing then (tick jitter).
    if (!isSpeech(f) || f.playedAtMs < fromMs - 2 * FRAME_MS || f.playedAtMs >= untilMs) continue;
    if (f.playedAtMs <= fromMs) playing = true;
    end = f.playedAtMs + FRAME_MS;
  }
  return playing ? end : null;
}

export interface Underruns {
  /** Gaps > thresholdMs inside an utterance, as a player with no jitter buffer would hear them. */
  count: number;
  maxGapMs: number;
  /** Each such gap: when the late frame arrived, and the gap's length. */
  late: Array<{ atMs: number; gapMs: number }>;
}

/**
 * Replays an utterance's frames by their receive times through a player that starts at the first
 * frame and plays each frame right after the previous one, or when it arrives if later: every
 * "later" is an underrun (the caller hears a gap). Independent of the fake caller's own 20 ms tick.
 */
export function underruns(receivedAtMs: number[], thresholdMs: number): Underruns {
  let maxGapMs = 0;
  const late: Underruns['late'] = [];
  let end = -Infinity;
  for (const at of receivedAtMs) {
    if (end !== -Infinity && at > end) {
      const gap = at - end;
      maxGapMs = Math.max(maxGapMs, gap);
      if (gap > thresholdMs) late.push({ atMs: at, gapMs: gap });
      end = at + FRAME_MS;
    } else end = (end === -Infinity ? at : end) + FRAME_MS;
  }
  return { count: late.length, maxGapMs, late };
}

/** p-th percentile (0–100) by nearest rank; NaN for no samples. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export const fmtMs = (ms: number | null | undefined): string => (ms === null || ms === undefined || Number.isNaN(ms) ? '–' : `${Math.round(ms)} ms`);
