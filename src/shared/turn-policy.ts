/**
 * The turn policy: what the caller's speech over the agent means. One definition, used by the
 * gateway (which hears the speech and silences the agent) and by the call workflow (which records
 * the utterance and decides whether it is answered), so the two can never disagree.
 *
 * Today the rule is by word count (`pipeline_settings.min_words`):
 * - with `min_words` ≤ 1, speech start alone interrupts the agent;
 * - otherwise the caller interrupts once the words of their turn so far reach `min_words`;
 * - an utterance spoken over the agent that never interrupted it is a backchannel ("uh-huh"):
 *   recorded, never answered.
 *
 * Pure and deterministic (workflow code imports it): no I/O, no Node built-ins.
 */

/** `pipeline_settings.min_words` when an agent does not set it. */
export const DEFAULT_MIN_WORDS = 3;

export interface TurnPolicySettings {
  min_words?: number | null;
}

/** The agent's `min_words`, or the default. */
export function minWordsOf(settings: TurnPolicySettings | undefined): number {
  const n = settings?.min_words;
  return typeof n === 'number' && Number.isFinite(n) ? n : DEFAULT_MIN_WORDS;
}

export function wordCount(text: string): number {
  let n = 0;
  for (const w of text.split(/\s+/)) if (w) n++;
  return n;
}

/** Does the VAD's speech start alone interrupt the agent? (The gateway then also holds the agent's audio while the VAD decides.) */
export function interruptsOnSpeechStart(minWords: number): boolean {
  return minWords <= 1;
}

/** Has the caller, speaking over the agent, said enough (`text`: the turn's words so far) to interrupt it? */
export function interruptsAgent(text: string, minWords: number): boolean {
  return interruptsOnSpeechStart(minWords) || wordCount(text) >= minWords;
}

/**
 * Is a completed utterance a backchannel? `duringAgentSpeech`: it overlapped the agent, did not
 * interrupt it, and ended while the agent was still speaking.
 */
export function isBackchannel(utterance: { text: string; duringAgentSpeech: boolean }, minWords: number): boolean {
  return utterance.duringAgentSpeech && !interruptsAgent(utterance.text, minWords);
}
