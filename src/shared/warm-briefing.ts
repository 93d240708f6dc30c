/**
 * What the agent says to the person it briefs in a warm transfer (docs/phone-operations.md#warm-transfer),
 * and how it reads their answer. Pure and workflow-safe: the call workflow builds the LLM requests
 * from these and decides with `briefingDecision`.
 */

/** Said after the summary and after each answer: the two ways to take the call, and the way out. */
export const CONNECT_PROMPT = 'Press 1 or say connect to take the call, or press 2 to decline.';

/** The summary when the LLM could not be reached: the caller's own last words. */
export function fallbackSummary(lastCallerWords: string | null): string {
  return lastCallerWords ? `A caller is waiting. Their last words were: ${lastCallerWords}` : 'A caller is waiting.';
}

export interface TranscriptLine {
  role: 'user' | 'assistant';
  text: string;
}

/** The call so far as the briefing LLM reads it. */
export function transcriptText(lines: TranscriptLine[]): string {
  return lines.map((l) => `${l.role === 'user' ? 'Caller' : 'Agent'}: ${l.text}`).join('\n');
}

/** The system message of the summary: `summaryPrompt` is the destination's `summary_prompt`. */
export function summaryInstruction(summaryPrompt: string, destination: string): string {
  return (
    `You are a phone agent handing a call over to a colleague at "${destination}". The caller is on hold and cannot hear you. ` +
    `In two or three short sentences, spoken to the colleague, tell them: ${summaryPrompt}. ` +
    'Use only what the call below says. Plain spoken words: no lists, no markdown, no greeting.'
  );
}

/** The system message for a question the briefed person asks. */
export function questionInstruction(destination: string): string {
  return (
    `You are a phone agent briefing a colleague at "${destination}" about a caller on hold. ` +
    'Answer their question in one or two short spoken sentences, using only what the call below says; if it does not say, say you do not know. Do not ask anything back.'
  );
}

/** The user message of both: the transcript, and the question if there is one. */
export function briefingInput(transcript: string, question?: string): string {
  return `The call so far:\n${transcript || '(nothing was said yet)'}${question ? `\n\nYour colleague asks: ${question}` : ''}`;
}

export type BriefingDecision = 'connect' | 'decline' | 'question';

const CONNECT_WORDS = /\b(connect|connected|put (them|him|her) through|go ahead|yes|yeah|yep|sure|okay|ok|i'll take it|i will take it)\b/i;
const NEGATED_CONNECT = /\b(can't|cannot|can not|don't|do not|won't|will not)\s+(connect|take)\b/i;
const DECLINE_WORDS = /\b(no|nope|decline|not now|can't|cannot|not available|busy|call (them|him|her) back)\b/i;

/**
 * What the briefed person said or pressed, as a decision: 1 / "connect" / "yes" connects, 2 / "no"
 * declines; anything else is a question for the agent. A keypress reaches the workflow as the
 * gateway's words `The caller pressed: 1` (docs/phone-operations.md#keypresses-in).
 */
export function briefingDecision(text: string): BriefingDecision {
  const keys = /pressed:\s*([0-9*#](?:\s+[0-9*#])*)/i.exec(text);
  if (keys) {
    const first = keys[1]!.trim()[0];
    if (first === '1') return 'connect';
    if (first === '2') return 'decline';
    return 'question';
  }
  // "No, connect them" connects: a decline word counts only without a connect word, but
  // "I can't take it" declines.
  if (NEGATED_CONNECT.test(text)) return 'decline';
  if (CONNECT_WORDS.test(text)) return 'connect';
  if (DECLINE_WORDS.test(text)) return 'decline';
  return 'question';
}
