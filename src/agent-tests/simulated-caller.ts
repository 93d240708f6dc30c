/**
 * The LLM that plays the caller of a simulated test: it gets the persona and the conversation so
 * far (the agent's lines as the other party) and answers with its next line, or hangs up by
 * calling `hang_up`.
 */
import type { LlmMessage, LlmToolSpec } from '../../workflows/call-definitions';
import type { LlmUsage } from '../../workflows/test-definitions';
import { contextLine } from '../shared/template';

/** Opens the simulated caller's system prompt; the fake LLM in tests recognises it. */
export const CALLER_PROMPT_START = 'You are role-playing a CALLER on a phone call with an AI voice agent';
export const HANG_UP = 'hang_up';

const HANG_UP_SPEC: LlmToolSpec = {
  type: 'function',
  function: {
    name: HANG_UP,
    description: 'Hang up the phone: your goal is reached, the agent said goodbye, or you give up.',
    parameters: { type: 'object', properties: {}, required: [] },
  },
};

export interface CallerTurnRequest {
  persona: string;
  transcript: Array<{ role: 'user' | 'assistant'; text: string }>;
  customParameters: Record<string, string | number>;
}

export function callerMessages(req: CallerTurnRequest): { messages: LlmMessage[]; tools: LlmToolSpec[] } {
  const context = Object.keys(req.customParameters).length ? `\n\nWhat the agent's system knows about this call: ${contextLine(req.customParameters)}` : '';
  const system =
    `${CALLER_PROMPT_START}, to test that agent.\n\nYour persona:\n${req.persona}${context}\n\n` +
    'Speak only as the caller, one short turn at a time, in plain spoken words, without stage directions. ' +
    `When your goal is reached, the agent says goodbye, or you want to end the call, call ${HANG_UP} instead of answering.`;
  // From the caller's side the agent is the other party (user) and the caller is the assistant.
  const history: LlmMessage[] = req.transcript.map((t) => ({ role: t.role === 'user' ? 'assistant' : 'user', content: t.text }));
  if (!history.length || history[history.length - 1]!.role !== 'user') history.push({ role: 'user', content: '(the agent is silent; you speak first)' });
  return { messages: [{ role: 'system', content: system }, ...history], tools: [HANG_UP_SPEC] };
}

/** The caller's next line, or null when they hang up (or have nothing to say). */
export function callerLine(result: { content: string; toolCalls: Array<{ name: string }> }): string | null {
  if (result.toolCalls.some((c) => c.name === HANG_UP)) return null;
  const text = result.content.trim();
  return text ? text : null;
}

export const addUsage = (a: LlmUsage, b: LlmUsage): LlmUsage => ({
  prompt_tokens: a.prompt_tokens + b.prompt_tokens,
  completion_tokens: a.completion_tokens + b.completion_tokens,
});
