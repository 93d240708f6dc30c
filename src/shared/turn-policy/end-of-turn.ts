/**
 * End of turn: how long the caller's silence must last before their turn is over. A complete
 * sentence ends at the VAD's `vad_stop_secs`, as it always has; a turn whose words so far stop in
 * the middle of dictation waits `dictation_wait_secs` for the caller to go on:
 * - a number being dictated: its last three or more digits (as digits or digit words of the
 *   agent's language or English), or a trailing "double" / "triple";
 * - an e-mail address being spelled: a last word with "@" and no domain ending yet, or a
 *   trailing "at", "dot", "underscore", "at the rate";
 * - a trailing conjunction or filler ("and", "but", "um", "aur", "lekin", …).
 * Punctuation is not trusted: an STT puts a full stop at every finalize, mid-number or not.
 *
 * `EndOfTurnJudge` is the seam: the gateway's turn detector asks a judge, and this rule-based one
 * is the default; a semantic end-of-turn model can implement the same interface.
 *
 * Pure and deterministic: no I/O, no Node built-ins.
 */
import { words } from './normalize';
import type { TurnPolicy } from './index';

export interface EndOfTurnJudge {
  /** The silence (ms) after which a turn whose words so far are `text` ends. */
  silenceMs(text: string): number;
}

/** Digit units at the end of a turn that make it a number in dictation. */
const DICTATION_DIGITS = 3;
/** Words that repeat the next digit: the digit is still to come. */
const REPEATS = new Set(['double', 'triple', 'dabal', 'tripal', 'डबल', 'ट्रिपल']);

function trailingDigits(ws: readonly string[], p: TurnPolicy): number {
  let units = 0;
  for (let i = ws.length - 1; i >= 0; i--) {
    const w = ws[i]!;
    if (/^\p{N}+$/u.test(w)) units += [...w].length;
    else if (p.digitWords.has([w])) units += 1;
    else break;
  }
  return units;
}

function spellingEmail(text: string): boolean {
  const last = (text.trim().split(/\s+/).pop() ?? '').replace(/[.,;:!?]+$/, '');
  return last.includes('@') && !/@[^@\s]+\.[a-z]{2,}$/i.test(last);
}

/** Do the turn's words so far stop in the middle of dictation (a number, an e-mail, a thought joined by "and")? */
export function midDictation(text: string, p: TurnPolicy): boolean {
  const ws = words(text);
  if (!ws.length) return false;
  if (REPEATS.has(ws[ws.length - 1]!)) return true;
  if (trailingDigits(ws, p) >= DICTATION_DIGITS) return true;
  if (p.continuations.matchAtEnd(ws) > 0) return true;
  return spellingEmail(text);
}

/** The silence (ms) after which the turn ends: `vad_stop_secs`, or `dictation_wait_secs` mid-dictation. */
export function endOfTurnWaitMs(text: string, p: TurnPolicy): number {
  return midDictation(text, p) ? Math.max(p.vadStopMs, p.dictationWaitMs) : p.vadStopMs;
}

/** The built-in judge: the rules above. */
export function ruleEndOfTurn(p: TurnPolicy): EndOfTurnJudge {
  return { silenceMs: (text) => endOfTurnWaitMs(text, p) };
}
