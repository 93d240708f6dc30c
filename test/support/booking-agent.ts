/**
 * The booking agent of the agent-test tests (and of docs/agent-tests.md): a two-node flow (greet →
 * booking) with a `book_table` webhook tool, created through the API so every version is stored.
 * Its fake LLM answers by the conversation; a prompt with "Only book weekends" refuses Fridays,
 * which is the prompt change the replay tests catch.
 */
import type { FakeReply } from '../fakes/openai-server';
import type { Harness } from './harness';

export const BOOKING_PROMPT = 'You are Booker, the reservations line of Chez Test.';
export const WEEKENDS_ONLY = 'Only book weekends.';

export async function createBookingAgent(h: Harness, name: string, webhookUrl: string) {
  const tool = await h.request('POST', '/api/tools', {
    body: {
      name: `book_table_${name.replace(/\W/g, '_')}`.slice(0, 60),
      description: 'Book a table',
      parameters: { properties: { day: { type: 'string' }, party: { type: 'integer' } }, required: ['day'] },
      webhook_url: webhookUrl,
    },
  });
  if (tool.status !== 201) throw new Error(`tool: ${JSON.stringify(tool.body)}`);
  const agent = await h.request('POST', '/api/agents', {
    body: { name, prompt: BOOKING_PROMPT, greeting: 'Chez Test, how can I help?', llm_provider: 'openai', llm_model: 'gpt-4o-mini' },
  });
  if (agent.status !== 201) throw new Error(`agent: ${JSON.stringify(agent.body)}`);
  const flow = await h.request('PUT', `/api/agents/${agent.body.id}/flow`, {
    body: {
      nodes: [
        {
          node_key: 'greet',
          is_initial: true,
          task_messages: [{ role: 'system', content: 'Ask what the caller needs.' }],
          functions: [{ name: 'start_booking', description: 'The caller wants to book a table', next_node_key: 'booking' }],
          builtin_tools: ['end_call'],
        },
        {
          node_key: 'booking',
          task_messages: [{ role: 'system', content: 'Ask for the day, then book.' }],
          tool_ids: [tool.body.id],
          builtin_tools: ['end_call'],
        },
      ],
    },
  });
  if (flow.status !== 200) throw new Error(`flow: ${JSON.stringify(flow.body)}`);
  const current = await h.request('GET', `/api/agents/${agent.body.id}`);
  return { agentId: agent.body.id as string, toolName: tool.body.name as string, version: current.body.version as number };
}

const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function.name);

/** The booking agent's side of the conversation (requests of no persona or judge rule). */
export function bookingAgentReply(body: any): FakeReply {
  const system: string = body.messages[0].content;
  const weekendsOnly = system.includes(WEEKENDS_ONLY);
  const last = body.messages[body.messages.length - 1];
  const tools = toolNames(body);
  const bookTool = tools.find((t) => t.startsWith('book_table'));
  if (last.role === 'tool') {
    if (last.content.startsWith('ok, moved to booking')) return { content: weekendsOnly ? 'Which weekend day would you like?' : 'Which day would you like?' };
    if (last.content.startsWith('Error')) return { content: 'Sorry, booking failed.' };
    if (last.content === 'ok') return { content: '' };
    return { content: `Booked, confirmation ${JSON.parse(last.content).confirmation}.` };
  }
  const text = String(last.content).toLowerCase();
  if (text.includes('bye') && tools.includes('end_call')) return { content: 'Goodbye!', tool_calls: [{ name: 'end_call', arguments: {} }] };
  if (text.includes('book') && tools.includes('start_booking')) return { tool_calls: [{ name: 'start_booking', arguments: {} }] };
  if (text.includes('friday') && bookTool) {
    if (weekendsOnly) return { content: 'Sorry, we only take weekend bookings.' };
    return { tool_calls: [{ name: bookTool, arguments: { day: 'friday', party: 2 } }] };
  }
  return { content: 'How can I help?' };
}

/** Polls a run until it is no longer running. */
export async function waitForRun(h: Harness, runId: string, timeoutMs = 120_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await h.request('GET', `/api/test-runs/${runId}`);
    if (run.status !== 200) throw new Error(`run: ${run.status} ${JSON.stringify(run.body)}`);
    if (run.body.status !== 'running') return run.body;
    if (Date.now() > deadline) throw new Error(`run still running after ${timeoutMs} ms: ${JSON.stringify(run.body.progress)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
