/**
 * How soon the line went quiet after the caller started talking over the agent, as the simulated
 * phone heard it: from its speech's onset to the end of the agent's last frame before the reply.
 *
 * The phone shares this process with the API and the vendor fakes. When this thread stalls on a
 * busy machine, the phone sends the onset late and plays overdue frames at once, and a naive
 * stopwatch charges both to the gateway. So speech starts when the message carrying its onset
 * actually left, and a frame ends by the phone's own playout clock.
 */
import { FRAME_MS, type PhoneCaller } from '../fakes/phone-caller';
import type { SpeechSpan } from '../fakes/phone-wire';

/** Agent audio due within this long of the onset is what the barge-in cut off, not the reply after it. */
const REPLY_AFTER_MS = 1000;

export function lineSilentAfterMs(caller: PhoneCaller, span: SpeechSpan, onsetMs: number): number {
  const speechStart = caller.sentAtOffset(span, onsetMs);
  const cutOff = caller.speechFrames().filter((f) => f.dueAtMs < speechStart + REPLY_AFTER_MS);
  const last = cutOff[cutOff.length - 1];
  if (!last) throw new Error('the agent was not speaking when the caller barged in');
  return last.dueAtMs + FRAME_MS - speechStart;
}
