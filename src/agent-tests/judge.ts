/**
 * The LLM judge of an attempt: given the transcript and the tools the agent called, a pass/fail
 * and a reason for every criterion, as structured output (a `report_verdicts` function call).
 */
import type { LlmMessage, LlmToolSpec } from '../../workflows/call-definitions';
import type { ToolCallSeen } from '../../workflows/test-definitions';

/** Opens the judge's system prompt; the fake LLM in tests recognises it. */
export const JUDGE_PROMPT_START = 'You are the judge of an automated test of an AI phone agent';
export const REPORT_VERDICTS = 'report_verdicts';

export interface Verdict {
  criterion: string;
  passed: boolean;
  reason: string;
}

const VERDICTS_SPEC: LlmToolSpec = {
  type: 'function',
  function: {
    name: REPORT_VERDICTS,
    description: 'Report one verdict per criterion, in the order the criteria were given.',
    parameters: {
      type: 'object',
      properties: {
        verdicts: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              criterion: { type: 'string' },
              pass: { type: 'boolean', description: 'true when the agent met the criterion' },
              reason: { type: 'string', description: 'one sentence: why' },
            },
            required: ['criterion', 'pass', 'reason'],
          },
        },
      },
      required: ['verdicts'],
    },
  },
};

export function judgeMessages(criteria: string[], transcript: Array<{ role: string; text: string }>, toolCalls: ToolCallSeen[]): { messages: LlmMessage[]; tools: LlmToolSpec[] } {
  const system =
    `${JUDGE_PROMPT_START}. Read the conversation and decide, for each criterion, whether the agent met it. ` +
    `Answer only by calling ${REPORT_VERDICTS} once, with one verdict per criterion in the given order.`;
  const lines = transcript.map((t) => `${t.role === 'user' ? 'Caller' : 'Agent'}: ${t.text}`).join('\n');
  const tools = toolCalls.length ? toolCalls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join('\n') : 'none';
  const user = `Criteria:\n${criteria.map((c, i) => `${i + 1}. ${c}`).join('\n')}\n\nConversation:\n${lines || '(nothing was said)'}\n\nTools the agent called:\n${tools}`;
  return { messages: [{ role: 'system', content: system }, { role: 'user', content: user }], tools: [VERDICTS_SPEC] };
}

function rawVerdicts(result: { content: string; toolCalls: Array<{ name: string; arguments: Record<string, unknown> }> }): unknown[] {
  const call = result.toolCalls.find((c) => c.name === REPORT_VERDICTS);
  if (call && Array.isArray(call.arguments.verdicts)) return call.arguments.verdicts;
  try {
    // Some models answer the JSON as text instead of calling the function.
    const parsed = JSON.parse(result.content.replace(/^```(json)?|```$/g, '').trim()) as { verdicts?: unknown };
    return Array.isArray(parsed.verdicts) ? parsed.verdicts : [];
  } catch {
    return [];
  }
}

/** One verdict per criterion, by position; a criterion the judge skipped fails with that reason. */
export function parseVerdicts(criteria: string[], result: { content: string; toolCalls: Array<{ name: string; arguments: Record<string, unknown> }> }): Verdict[] {
  const raw = rawVerdicts(result);
  return criteria.map((criterion, i) => {
    const v = raw[i] as { pass?: unknown; reason?: unknown } | undefined;
    if (!v || typeof v.pass !== 'boolean') return { criterion, passed: false, reason: 'the judge gave no verdict for this criterion' };
    return { criterion, passed: v.pass, reason: typeof v.reason === 'string' ? v.reason : '' };
  });
}
