/**
 * The turn policy: what the caller's speech over the agent means. One definition, used by the
 * gateway (which hears the speech and silences the agent) and by the call workflow (which records
 * the utterance and decides whether it is answered), so the two can never disagree.
 *
 * The caller's words are read by meaning, in the agent's language (./phrases.ts) and English:
 * - with `min_words` ≤ 1, speech start alone interrupts the agent;
 * - an interruption word or phrase ("stop", "wait", "ruko", "ek minute") interrupts at once;
 * - backchannel phrases ("uh-huh", "haan ji, theek hai") never interrupt, however many words;
 * - other words interrupt once they number `min_words`;
 * - an utterance spoken over the agent that never interrupted it is a backchannel: recorded,
 *   never answered.
 * `pipeline_settings.backchannel_phrases` / `interrupt_phrases` add to or replace the built-in
 * phrases per agent. Where phrases overlap ("no" / "no worries") the longer one wins; an equal
 * one is an interruption.
 *
 * End of turn (./end-of-turn.ts): how long the caller's silence must last before their turn ends.
 *
 * Pure and deterministic (workflow code imports it): no I/O, no Node built-ins.
 */
import { PhraseSet, words } from './normalize';
import { BACKCHANNELS, CONTINUATIONS, DIGIT_WORDS, INTERRUPTIONS, type PhraseTable } from './phrases';

export { words, PhraseSet } from './normalize';

/** `pipeline_settings.min_words` when an agent does not set it. */
export const DEFAULT_MIN_WORDS = 3;
/** `pipeline_settings.dictation_wait_secs` when an agent does not set it. */
export const DEFAULT_DICTATION_WAIT_SECS = 1.2;
/** `pipeline_settings.false_interruption_secs` when an agent does not set it. */
export const DEFAULT_FALSE_INTERRUPTION_SECS = 1;
/** `pipeline_settings.vad_stop_secs` when an agent does not set it (PIPELINE_DEFAULTS). */
export const DEFAULT_VAD_STOP_SECS = 0.2;

/** An agent's own phrases: added to the built-in ones of its language, or replacing them. */
export interface PhraseSettings {
  mode: 'add' | 'replace';
  phrases: string[];
}

export const NO_EXTRA_PHRASES: PhraseSettings = { mode: 'add', phrases: [] };

export interface TurnPolicySettings {
  min_words?: number | null;
  backchannel_phrases?: PhraseSettings | null;
  interrupt_phrases?: PhraseSettings | null;
  vad_stop_secs?: number | null;
  dictation_wait_secs?: number | null;
  false_interruption_secs?: number | null;
}

/** A call's policy, built once from the agent's settings and language (turnPolicyOf). */
export interface TurnPolicy {
  minWords: number;
  backchannels: PhraseSet;
  interrupts: PhraseSet;
  /** Digits as words, "double", "triple": what a dictated number is made of. */
  digitWords: PhraseSet;
  /** Words after which a thought goes on ("and", "lekin"). */
  continuations: PhraseSet;
  /** The VAD's silence that ends a turn. */
  vadStopMs: number;
  /** The silence that ends a turn in the middle of dictation (a number, an e-mail, "and …"). */
  dictationWaitMs: number;
  /**
   * Speech over the agent pauses it at once (min_words > 1); with no words after this long it
   * resumes. 0: no pause, the agent talks on until the words interrupt it.
   */
  falseInterruptionMs: number;
}

const num = (n: unknown, fallback: number) => (typeof n === 'number' && Number.isFinite(n) ? n : fallback);

/** The agent's `min_words`, or the default. */
export function minWordsOf(settings: TurnPolicySettings | undefined): number {
  return num(settings?.min_words, DEFAULT_MIN_WORDS);
}

/** The languages whose phrases an agent knows: its own (BCP-47 primary subtag) and English; every table's when unknown. */
export function languagesOf(language: string | null | undefined, table: PhraseTable = BACKCHANNELS): string[] {
  const primary = (language ?? '').toLowerCase().split(/[-_]/)[0] ?? '';
  if (primary && primary in table) return primary === 'en' ? ['en'] : ['en', primary];
  return Object.keys(table);
}

function phrasesOf(table: PhraseTable, language: string | null | undefined, own: PhraseSettings | null | undefined): string[] {
  const builtIn = languagesOf(language, table).flatMap((l) => table[l] ?? []);
  if (!own) return builtIn;
  return own.mode === 'replace' ? own.phrases : [...builtIn, ...own.phrases];
}

/** The policy of an agent (`pipeline_settings`, `stt_language`): build it once per call. */
export function turnPolicyOf(settings: TurnPolicySettings | undefined, language?: string | null): TurnPolicy {
  return {
    minWords: minWordsOf(settings),
    backchannels: new PhraseSet(phrasesOf(BACKCHANNELS, language, settings?.backchannel_phrases)),
    interrupts: new PhraseSet(phrasesOf(INTERRUPTIONS, language, settings?.interrupt_phrases)),
    digitWords: new PhraseSet(phrasesOf(DIGIT_WORDS, language, null)),
    continuations: new PhraseSet(phrasesOf(CONTINUATIONS, language, null)),
    vadStopMs: Math.round(num(settings?.vad_stop_secs, DEFAULT_VAD_STOP_SECS) * 1000),
    dictationWaitMs: Math.round(num(settings?.dictation_wait_secs, DEFAULT_DICTATION_WAIT_SECS) * 1000),
    falseInterruptionMs: Math.round(num(settings?.false_interruption_secs, DEFAULT_FALSE_INTERRUPTION_SECS) * 1000),
  };
}

const byMinWords = new Map<number, TurnPolicy>();
/** A bare `min_words` (older callers): the built-in phrases of every language. */
function policy(p: TurnPolicy | number): TurnPolicy {
  if (typeof p !== 'number') return p;
  let cached = byMinWords.get(p);
  if (!cached) byMinWords.set(p, (cached = turnPolicyOf({ min_words: p })));
  return cached;
}

export function wordCount(text: string): number {
  let n = 0;
  for (const w of text.split(/\s+/)) if (w) n++;
  return n;
}

/** What the caller's words so far say, read left to right, the longest phrase first. */
export interface TurnReading {
  /** An interruption phrase was said. */
  interruption: boolean;
  /** Words that are neither backchannel nor interruption phrases (what `min_words` counts). */
  otherWords: number;
  /** Nothing but backchannel phrases (and at least one). */
  backchannelOnly: boolean;
}

export function readTurn(text: string, p: TurnPolicy | number): TurnReading {
  const { backchannels, interrupts } = policy(p);
  const ws = words(text);
  let interruption = false;
  let otherWords = 0;
  let backchannelWords = 0;
  for (let i = 0; i < ws.length; ) {
    const stop = interrupts.matchAt(ws, i);
    const ack = backchannels.matchAt(ws, i);
    if (stop && stop >= ack) {
      interruption = true;
      i += stop;
    } else if (ack) {
      backchannelWords += ack;
      i += ack;
    } else {
      otherWords++;
      i++;
    }
  }
  return { interruption, otherWords, backchannelOnly: backchannelWords > 0 && !interruption && otherWords === 0 };
}

/** Does the VAD's speech start alone interrupt the agent? (The gateway then also holds the agent's audio while the VAD decides.) */
export function interruptsOnSpeechStart(p: TurnPolicy | number): boolean {
  return policy(p).minWords <= 1;
}

/** Does speech over the agent pause it at once, until the words decide (interrupt: cancelled; backchannel or no words: it resumes)? */
export function pausesOnSpeech(p: TurnPolicy | number): boolean {
  const pol = policy(p);
  return !interruptsOnSpeechStart(pol) && pol.falseInterruptionMs > 0;
}

/** Has the caller, speaking over the agent, said enough (`text`: the turn's words so far, interim or final) to interrupt it? */
export function interruptsAgent(text: string, p: TurnPolicy | number): boolean {
  const pol = policy(p);
  if (interruptsOnSpeechStart(pol)) return true;
  const r = readTurn(text, pol);
  return r.interruption || r.otherWords >= pol.minWords;
}

/**
 * Is a completed utterance a backchannel? `duringAgentSpeech`: it overlapped the agent, did not
 * interrupt it, and ended while the agent was still speaking.
 */
export function isBackchannel(utterance: { text: string; duringAgentSpeech: boolean }, p: TurnPolicy | number): boolean {
  return utterance.duringAgentSpeech && !interruptsAgent(utterance.text, p);
}

export { endOfTurnWaitMs, midDictation, ruleEndOfTurn, type EndOfTurnJudge } from './end-of-turn';
