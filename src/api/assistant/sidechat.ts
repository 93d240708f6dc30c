/**
 * The dashboard assistant: a tool-calling loop over the platform's data. The model may look things
 * up for a few rounds, then must answer; proposed changes are collected, never applied.
 */
import type OpenAI from 'openai';
import type { Database } from '../../db/database';
import { plain } from '../../db/database';
import { notFound } from '../errors';
import { firstChoice, type AssistantLlm } from './llm';
import { SIDECHAT_TOOLS, SidechatTools, type Proposal } from './sidechat-tools';

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

// Enough to go agent → calls → one call → its events → propose; more means the model is lost.
export const MAX_TOOL_ROUNDS = 6;

export interface SidechatRequest {
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
  agent_id?: string;
}

export interface SidechatReply {
  reply: string;
  tool_calls: Array<{ name: string; arguments: unknown }>;
  proposals: Proposal[];
  usage: { prompt_tokens: number; completion_tokens: number };
}

const SYSTEM_PROMPT = [
  'You are the assistant in the dashboard of a voice AI agent platform. Agents hold phone calls: each has a system prompt,',
  'an optional greeting, STT/LLM/TTS settings, webhook tools, and either runs freeform or as a flow of nodes',
  '(each node with role/task messages and functions that move to the next node). Calls have a transcript and an event trace',
  '(user_spoke, agent_spoke, tool_called, tool_result, node_entered, error, ttfb_metric, …).',
  'Answer questions about the agents and calls by looking them up with the tools; never guess ids or data.',
  'You cannot change anything. When a change would help (a prompt fix, a node instruction, a setting), call propose_change:',
  'the user reviews and applies proposals themselves. Say briefly what you proposed and why.',
  'Be concise and concrete; quote the transcript when it explains a problem. Plain text, no tables.',
].join('\n');

function toolCallsOf(message: OpenAI.Chat.Completions.ChatCompletionMessage) {
  return (message.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [c] : []));
}

function parsedArguments(raw: string): unknown {
  try {
    return raw.trim() ? JSON.parse(raw) : {};
  } catch {
    return raw;
  }
}

export async function runSidechat(llm: AssistantLlm, db: Database, request: SidechatRequest): Promise<SidechatReply> {
  const system: Message[] = [{ role: 'system', content: SYSTEM_PROMPT }];
  if (request.agent_id) {
    const agent = plain(await db.models.Agent.findByPk(request.agent_id));
    if (!agent) throw notFound('Agent');
    system.push({ role: 'system', content: `The user has agent "${agent.name}" (id ${agent.id}) open in the dashboard.` });
  }
  const messages: Message[] = [...system, ...request.messages.map((m): Message => ({ role: m.role, content: m.content }))];
  const tools = new SidechatTools(db);
  const calls: SidechatReply['tool_calls'] = [];
  const usage = { prompt_tokens: 0, completion_tokens: 0 };

  for (let round = 1; ; round++) {
    const lastRound = round >= MAX_TOOL_ROUNDS;
    const completion = await llm.complete({
      messages,
      tools: SIDECHAT_TOOLS,
      // The last round must produce an answer, not another lookup.
      tool_choice: lastRound ? 'none' : 'auto',
      temperature: 0.2,
    });
    usage.prompt_tokens += completion.usage?.prompt_tokens ?? 0;
    usage.completion_tokens += completion.usage?.completion_tokens ?? 0;
    const { message } = firstChoice(completion);
    const requested = toolCallsOf(message);
    if (!requested.length || lastRound) {
      const reply = message.content || (requested.length ? 'I could not finish looking this up within the step limit; please ask a narrower question.' : '');
      return { reply, tool_calls: calls, proposals: tools.proposals, usage };
    }
    messages.push({
      role: 'assistant',
      content: message.content ?? null,
      tool_calls: requested.map((c) => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } })),
    });
    for (const call of requested) {
      calls.push({ name: call.function.name, arguments: parsedArguments(call.function.arguments) });
      messages.push({ role: 'tool', tool_call_id: call.id, content: await tools.run(call.function.name, call.function.arguments) });
    }
  }
}
