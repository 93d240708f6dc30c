/**
 * Scripted LLM roles of agent tests for the fake OpenAI server: the simulated caller (persona) and
 * the judge, recognised by the opening of their system prompts. Each answer depends only on the
 * request, so conversations running side by side each get their own script.
 */
import { CALLER_PROMPT_START, HANG_UP } from '../../src/agent-tests/simulated-caller';
import { JUDGE_PROMPT_START, REPORT_VERDICTS } from '../../src/agent-tests/judge';
import type { FakeOpenAI, FakeReply } from './openai-server';

/**
 * The caller says `lines` in order (its own earlier lines are the assistant messages), then hangs
 * up. `persona`: a text of the test's persona, to script several personas differently.
 */
export function scriptPersona(llm: FakeOpenAI, lines: string[], options: { persona?: string } = {}): void {
  llm.addRule({
    system: options.persona ?? CALLER_PROMPT_START,
    reply: (body): FakeReply => {
      const said = body.messages.filter((m: any) => m.role === 'assistant').length;
      return said < lines.length ? { content: lines[said] } : { tool_calls: [{ name: HANG_UP, arguments: {} }] };
    },
  });
}

export interface JudgeInput {
  criteria: string[];
  /** The conversation and tool calls as the judge reads them. */
  conversation: string;
}

/** The judge answers each criterion with `decide` (structured output: a report_verdicts call). */
export function scriptJudge(llm: FakeOpenAI, decide: (criterion: string, input: JudgeInput) => { pass: boolean; reason: string }): void {
  llm.addRule({
    system: JUDGE_PROMPT_START,
    reply: (body): FakeReply => {
      const user: string = body.messages[1].content;
      const [criteriaPart, conversation = ''] = user.split('\n\nConversation:\n');
      const criteria = criteriaPart!.replace(/^Criteria:\n/, '').split('\n').map((l) => l.replace(/^\d+\.\s/, ''));
      const verdicts = criteria.map((criterion) => ({ criterion, ...decide(criterion, { criteria, conversation }) }));
      return { tool_calls: [{ name: REPORT_VERDICTS, arguments: { verdicts } }] };
    },
  });
}
