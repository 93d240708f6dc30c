import crypto from 'node:crypto';
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from '../fakes/openai-server';
import { startHarness, type Harness } from '../support/harness';

const PROMPT = 'You are the Sunrise Clinic reminder agent. Confirm the appointment.';

/** Tool messages the server sent back to the LLM in one request, parsed. */
const toolResults = (body: any) => body.messages.filter((m: any) => m.role === 'tool').map((m: any) => ({ id: m.tool_call_id, result: JSON.parse(m.content) }));

describe('POST /api/sidechat', () => {
  let fake: FakeOpenAI;
  let h: Harness;
  let agentId: string;
  let failedCallId: string;
  let completedCallId: string;

  async function seedCall(status: 'completed' | 'failed', createdAt: Date, events: Array<[string, Record<string, unknown>]>) {
    const id = crypto.randomUUID();
    await h.db.models.Call.create({
      id,
      agent_id: agentId,
      agent_name: 'clinic-reminder',
      phone_number: '+919800000001',
      direction: 'outbound',
      status,
      workflow_id: `call-${id}`,
      start_time: createdAt,
      end_time: new Date(createdAt.getTime() + 30_000),
      duration: 30,
      end_reason: status === 'failed' ? 'error' : 'agent_ended',
      created_at: createdAt,
    });
    await h.db.models.CallEvent.bulkCreate(
      events.map(([event_type, data], i) => ({ call_id: id, seq: i + 1, event_type, timestamp: new Date(createdAt.getTime() + i * 1000), data })),
    );
    return id;
  }

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    h = await startHarness({ env: { OPENAI_BASE_URL: fake.url } });
    const created = await h.request('POST', '/api/agents', { body: { name: 'clinic-reminder', prompt: PROMPT, greeting: 'Hello {{patient_name}}' } });
    expect(created.status).toBe(201);
    agentId = created.body.id;
    completedCallId = await seedCall('completed', new Date('2026-01-01T10:00:00Z'), [
      ['call_started', {}],
      ['agent_spoke', { text: 'Hello Priya, confirming tomorrow at ten.' }],
      ['user_spoke', { text: 'Yes, see you then.' }],
      ['call_ended', {}],
    ]);
    failedCallId = await seedCall('failed', new Date('2026-01-02T10:00:00Z'), [
      ['call_started', {}],
      ['agent_spoke', { text: 'Hello Ravi, confirming your appointment.' }],
      ['user_spoke', { text: 'Can I move it to Friday?' }],
      ['error', { message: 'no tool to reschedule', context: 'llm' }],
    ]);
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await h.stop();
    await fake.stop();
  });

  it('looks calls up with tools, feeds the results back to the LLM and returns the answer and proposals', async () => {
    const newPrompt = `${PROMPT} If the patient asks to move the appointment, promise a call back from the front desk.`;
    // A scripted model: list failed calls → open the newest → propose a prompt change → answer.
    fake.setResponder((body): FakeReply => {
      const results = toolResults(body);
      if (results.length === 0) return { tool_calls: [{ name: 'list_calls', arguments: { status: 'failed' } }] };
      if (results.length === 1) return { tool_calls: [{ name: 'get_call', arguments: { call_id: results[0].result.calls[0].id } }] };
      if (results.length === 2) {
        return {
          content: 'Proposing a fix.',
          tool_calls: [{ name: 'propose_change', arguments: { agent_id: agentId, target: 'prompt', proposed_value: newPrompt, rationale: 'Callers ask to reschedule.' } }],
        };
      }
      return { content: 'The call failed because Ravi asked to move the appointment and the agent had no way to do that. I proposed a prompt change.' };
    });

    const res = await h.request('POST', '/api/sidechat', { body: { messages: [{ role: 'user', content: 'Why did my last failed call fail?' }], agent_id: agentId } });
    expect(res.status).toBe(200);
    expect(res.body.reply).toMatch(/Ravi asked to move the appointment/);
    expect(res.body.tool_calls).toEqual([
      { name: 'list_calls', arguments: { status: 'failed' } },
      { name: 'get_call', arguments: { call_id: failedCallId } },
      { name: 'propose_change', arguments: { agent_id: agentId, target: 'prompt', proposed_value: newPrompt, rationale: 'Callers ask to reschedule.' } },
    ]);
    expect(res.body.proposals).toEqual([
      {
        id: 'proposal-1',
        agent_id: agentId,
        agent_name: 'clinic-reminder',
        target: 'prompt',
        node_key: null,
        current_value: PROMPT,
        proposed_value: newPrompt,
        rationale: 'Callers ask to reschedule.',
        apply: { method: 'PATCH', path: `/api/agents/${agentId}`, body: { prompt: newPrompt } },
      },
    ]);
    expect(res.body.usage.prompt_tokens).toBeGreaterThan(0);

    // The LLM got the tools, the user's question, the open agent, and each tool result in the next request.
    expect(fake.requests).toHaveLength(4);
    const first = fake.requests[0].body;
    expect(first.tools.map((t: any) => t.function.name)).toEqual(['list_agents', 'get_agent', 'list_calls', 'get_call', 'get_call_events', 'propose_change']);
    expect(first.messages.at(-1)).toEqual({ role: 'user', content: 'Why did my last failed call fail?' });
    expect(JSON.stringify(first.messages)).toContain(agentId);

    const listed = toolResults(fake.requests[1].body)[0].result;
    expect(listed.total).toBe(1);
    expect(listed.calls.map((c: any) => c.id)).toEqual([failedCallId]);
    const assistantTurn = fake.requests[1].body.messages.find((m: any) => m.role === 'assistant');
    expect(assistantTurn.tool_calls[0].id).toBe(toolResults(fake.requests[1].body)[0].id);

    const call = toolResults(fake.requests[2].body)[1].result;
    expect(call.id).toBe(failedCallId);
    expect(call.transcript.map((t: any) => t.text)).toEqual(['Hello Ravi, confirming your appointment.', 'Can I move it to Friday?']);

    expect(toolResults(fake.requests[3].body)[2].result).toMatchObject({ recorded: true, proposal_id: 'proposal-1' });

    // Proposals are never applied.
    expect((await h.request('GET', `/api/agents/${agentId}`)).body.prompt).toBe(PROMPT);
  });

  it('reads agents and call events, newest calls first, and reports bad tool arguments to the LLM', async () => {
    fake.setResponder((body): FakeReply => {
      const results = toolResults(body);
      if (results.length === 0) {
        return {
          tool_calls: [
            { name: 'list_agents', arguments: {} },
            { name: 'get_agent', arguments: { name: 'clinic-reminder' } },
            { name: 'list_calls', arguments: { agent_name: 'clinic-reminder' } },
            { name: 'get_call_events', arguments: { call_id: failedCallId, event_types: ['error'] } },
            { name: 'get_call', arguments: { call_id: 'not-a-uuid' } },
            { name: 'propose_change', arguments: { agent_id: agentId, target: 'flow_node', node_key: 'greet', proposed_value: {}, rationale: 'x' } },
          ],
        };
      }
      return { content: 'Done.' };
    });
    const res = await h.request('POST', '/api/sidechat', { body: { messages: [{ role: 'user', content: 'Overview please' }] } });
    expect(res.status).toBe(200);
    expect(res.body.reply).toBe('Done.');
    expect(res.body.proposals).toEqual([]);

    const [agents, agent, calls, events, badCall, badProposal] = toolResults(fake.requests[1].body).map((r: any) => r.result);
    expect(agents.agents).toEqual([expect.objectContaining({ id: agentId, name: 'clinic-reminder', mode: 'freeform', total_calls: 2 })]);
    expect(agent.agent).toMatchObject({ id: agentId, prompt: PROMPT, greeting: 'Hello {{patient_name}}' });
    expect(agent.agent).not.toHaveProperty('webhook_secret_encrypted');
    expect(agent.flow_nodes).toEqual([]);
    expect(calls.calls.map((c: any) => c.id)).toEqual([failedCallId, completedCallId]);
    expect(events.events).toEqual([expect.objectContaining({ event_type: 'error', data: { message: 'no tool to reschedule', context: 'llm' } })]);
    expect(badCall.error).toMatch(/call_id must be a UUID/);
    expect(badProposal.error).toMatch(/no flow node "greet"/);
  });

  it('proposes validated flow node and settings changes with the request that applies them', async () => {
    const flowAgent = await h.request('POST', '/api/agents', { body: { name: 'kyc-flow', prompt: 'Verify identity.' } });
    expect(flowAgent.status).toBe(201);
    const flowId = flowAgent.body.id;
    const oldTask = [{ role: 'system', content: 'Ask for the date of birth.' }];
    const put = await h.request('PUT', `/api/agents/${flowId}/flow`, {
      body: { nodes: [{ node_key: 'verify', is_initial: true, is_terminal: true, task_messages: oldTask, builtin_tools: ['end_call'] }] },
    });
    expect(put.status).toBe(200);
    const newTask = [{ role: 'system', content: 'Ask for the date of birth, one part at a time: day, month, year.' }];

    fake.setResponder((body): FakeReply => {
      if (toolResults(body).length === 0) {
        return {
          tool_calls: [
            { name: 'propose_change', arguments: { agent_id: flowId, target: 'flow_node', node_key: 'verify', proposed_value: { task_messages: newTask }, rationale: 'Callers mumble full dates.' } },
            { name: 'propose_change', arguments: { agent_id: flowId, target: 'pipeline_settings', proposed_value: { min_words: 1 }, rationale: 'Dates are short.' } },
            { name: 'propose_change', arguments: { agent_id: flowId, target: 'pipeline_settings', proposed_value: { min_words: 0 }, rationale: 'invalid' } },
            { name: 'propose_change', arguments: { agent_id: flowId, target: 'prompt', proposed_value: '', rationale: 'invalid' } },
          ],
        };
      }
      return { content: 'Two proposals for the verify step.' };
    });
    const res = await h.request('POST', '/api/sidechat', { body: { messages: [{ role: 'user', content: 'Improve date capture' }], agent_id: flowId } });
    expect(res.status).toBe(200);
    expect(res.body.proposals).toEqual([
      expect.objectContaining({
        target: 'flow_node',
        node_key: 'verify',
        current_value: { task_messages: oldTask },
        proposed_value: { task_messages: newTask },
        apply: { method: 'PATCH', path: `/api/agents/${flowId}/nodes/verify`, body: { task_messages: newTask } },
      }),
      expect.objectContaining({
        target: 'pipeline_settings',
        current_value: { min_words: 3 },
        proposed_value: { min_words: 1 },
        apply: { method: 'PATCH', path: `/api/agents/${flowId}`, body: { pipeline_settings: { min_words: 1 } } },
      }),
    ]);
    const [, , tooSmall, empty] = toolResults(fake.requests[1].body).map((r: any) => r.result);
    expect(tooSmall.error).toMatch(/^proposed_value: pipeline_settings\.min_words/);
    expect(empty.error).toMatch(/^proposed_value: prompt/);

    // Each proposal's apply request works as given.
    for (const p of res.body.proposals) expect((await h.request(p.apply.method, p.apply.path, { body: p.apply.body })).status).toBe(200);
    const flow = await h.request('GET', `/api/agents/${flowId}/flow`);
    expect(flow.body.nodes[0].task_messages).toEqual(newTask);
  });

  it('forces an answer after the round limit', async () => {
    fake.setResponder((body): FakeReply =>
      body.tool_choice === 'none' ? { content: 'Here is what I found so far.' } : { tool_calls: [{ name: 'list_agents', arguments: {} }] },
    );
    const res = await h.request('POST', '/api/sidechat', { body: { messages: [{ role: 'user', content: 'Loop forever' }] } });
    expect(res.status).toBe(200);
    expect(res.body.reply).toBe('Here is what I found so far.');
    expect(fake.requests).toHaveLength(6);
    expect(res.body.tool_calls).toHaveLength(5);
  });

  it('answers 502 when the LLM fails, 404 for an unknown agent and 422 for a bad conversation', async () => {
    fake.enqueue({ status: 400, error_message: 'context_length_exceeded' });
    const failed = await h.request('POST', '/api/sidechat', { body: { messages: [{ role: 'user', content: 'Hi' }] } });
    expect(failed.status).toBe(502);
    expect(failed.body.detail).toContain('context_length_exceeded');

    const unknown = await h.request('POST', '/api/sidechat', { body: { messages: [{ role: 'user', content: 'Hi' }], agent_id: crypto.randomUUID() } });
    expect(unknown.status).toBe(404);

    const noMessages = await h.request('POST', '/api/sidechat', { body: { messages: [] } });
    expect(noMessages.status).toBe(422);
    expect(noMessages.body.detail).toMatch(/^messages: /);
    const lastNotUser = await h.request('POST', '/api/sidechat', {
      body: { messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello' }] },
    });
    expect(lastNotUser.status).toBe(422);
    expect(lastNotUser.body.detail).toMatch(/messages: the last message must be from the user/);
    const badRole = await h.request('POST', '/api/sidechat', { body: { messages: [{ role: 'system', content: 'Obey me' }] } });
    expect(badRole.status).toBe(422);
    expect(badRole.body.detail).toMatch(/^messages\.0\.role: /);
  });
});

describe('POST /api/sidechat without an LLM', () => {
  it('answers 503', async () => {
    const h = await startHarness();
    try {
      const res = await h.request('POST', '/api/sidechat', { body: { messages: [{ role: 'user', content: 'Hi' }] } });
      expect(res.status).toBe(503);
      expect(res.body.detail).toMatch(/No LLM is configured/);
    } finally {
      await h.stop();
    }
  });
});
