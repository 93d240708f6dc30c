/**
 * The gateway's last word on a call it ends itself (a drain, Temporal away past the outage bound,
 * the message left on a voicemail): speech still playing may finish, then the goodbye plays. Both
 * are bounded, so a TTS that hangs holds neither the call nor a draining gateway open.
 */
import type { SpeechOutcome, SpeakRequest } from '../../../workflows/call-definitions';
import type { SpeechOut } from '../speech/speech-out';

/** Speech still playing when a call must end gets this long to finish before the goodbye. */
export const GOODBYE_AFTER_SPEECH_MS = 10_000;
/** A goodbye whose TTS hangs must not hold the call (nor a draining gateway) open. */
const GOODBYE_MAX_MS = 20_000;
/** The longest a call takes to end once told to (endForDrain): speech finishing, then the goodbye. */
export const ENDING_MAX_MS = GOODBYE_AFTER_SPEECH_MS + GOODBYE_MAX_MS;

/** Resolves with what the caller heard of the goodbye, or undefined if it could not be said in time. */
export async function sayGoodbye(speech: SpeechOut, goodbye: SpeakRequest, afterSpeechMs: number): Promise<SpeechOutcome | undefined> {
  if (afterSpeechMs > 0) await speech.playback.idle(afterSpeechMs);
  let timer: NodeJS.Timeout | undefined;
  const cancel = new AbortController();
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      cancel.abort();
      resolve(undefined);
    }, GOODBYE_MAX_MS);
  });
  try {
    return await Promise.race([speech.speak(goodbye, cancel.signal).catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
