/**
 * The demo and the benchmark time a barge-in from when the caller's speech started. On a busy
 * machine the simulated phone stalls, then sends its overdue messages in a burst; the speech must
 * be timed from when it actually left, or the gateway's `clear` seems to come before the speech.
 */
import { speechTimes, type SpeechClip } from '../../scripts/lib/caller-audio';
import type { SpeechSpan } from '../fakes/phone-wire';

// Speech from the 15th to the 94th 20 ms frame: 300 ms to 1,880 ms into the clip.
const clip: SpeechClip = { path: 'stop-wait.wav', pcm: new Int16Array(0), frames: 123, firstSpeechFrame: 15, lastSpeechFrame: 94 };

/** An utterance of 100 ms messages (Exotel's chunks), each sent at the given time. */
const span = (sentAtMs: number[]): SpeechSpan => ({ startedAtMs: sentAtMs[0]!, sentAtMs, endedAtMs: sentAtMs.at(-1)!, durationMs: sentAtMs.length * 100, messageMs: 100 });

it('times speech sent on schedule from the planned moments', () => {
  const onTime = span(Array.from({ length: 25 }, (_, i) => 10_000 + i * 100));
  expect(speechTimes(clip, onTime)).toEqual({ startMs: 10_300, endMs: 11_880 });
});

it('times speech sent in a burst after a stall from when its messages left', () => {
  // The phone stalled for a second at the start: messages 0–10 all left at 11,000.
  const burst = span([...Array.from({ length: 11 }, () => 11_000), ...Array.from({ length: 14 }, (_, i) => 11_000 + (i + 1) * 100)]);
  // Speech starts in message 3 (at its start) and ends 80 ms into message 18.
  expect(speechTimes(clip, burst)).toEqual({ startMs: 11_000, endMs: 11_800 + 80 });
});
