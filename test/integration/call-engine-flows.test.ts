/**
 * The conversation engine end to end, by text (test/support/text-call-stack.ts): flow agents moving
 * across nodes, the agent snapshot a call keeps, client-managed calls and the outgoing webhooks.
 */
import { Webhook } from 'standardwebhooks';
import { createAgent, createNodes, createTool, eventually } from '../support/fixtures';
import { events, h, hangUp, hooks, lastMessage, llm, say, startText, systemText, toolNames, useTextCallStack } from '../support/text-call-stack';

useTextCallStack({ env: { WEBHOOK_RETRY_INITIAL_SECS: '1' } });

describe('flow agent', () => {
  it('moves across three nodes to a terminal node, substituting variables and arguments on entry', async () => {
    const lookup = await createTool(h.db, h.box, { name: 'slot_lookup', webhook_url: `${hooks.url}/slots`, webhook_method: 'GET' });
    hooks.respond({ status: 200, body: { free: ['10:00', '14:00'] } }, { path: '/slots', times: 3 });
    const agent = await createAgent(h.db, h.box, { name: 'clinic-flow', prompt: 'You book clinic appointments.', greeting: 'Welcome to {{clinic}}.' });
    await createNodes(h.db, agent.id, [
      {
        node_key: 'ask_name',
        is_initial: true,
        role_messages: [{ role: 'system', content: 'You work for {{clinic}}.' }],
        task_messages: [{ role: 'system', content: 'Ask for the patient name.' }],
        functions: [{ name: 'save_name', description: 'Save the name for {{clinic}}', next_node_key: 'ask_date', properties: { patient: { type: 'string' } }, required: ['patient'] }],
      },
      {
        node_key: 'ask_date',
        task_messages: [{ role: 'system', content: 'Ask {{patient}} for a date.' }],
        tool_ids: [lookup.id],
        pre_actions: [{ type: 'call_tool', tool_id: lookup.id, args: { clinic: '{{clinic}}' } }],
        functions: [{ name: 'save_date', description: 'Save the date', next_node_key: 'confirm', properties: { date: { type: 'string' } }, required: ['date'] }],
      },
      {
        node_key: 'confirm',
        is_terminal: true,
        builtin_tools: ['end_call'],
        task_messages: [{ role: 'system', content: 'Confirm {{patient}} on {{date}} and end the call.' }],
        pre_actions: [{ type: 'say', text: 'Booked {{patient}} for {{date}}.' }],
      },
    ]);
    llm.setResponder((body) => {
      const last = lastMessage(body);
      const tools = toolNames(body);
      if (last.role === 'user' && tools.includes('save_name')) return { tool_calls: [{ name: 'save_name', arguments: { patient: 'Meera' } }] };
      if (last.role === 'tool' && tools.includes('save_date')) return { content: 'Which date suits you?' };
      if (last.role === 'user' && tools.includes('save_date')) return { tool_calls: [{ name: 'save_date', arguments: { date: 'Friday' } }] };
      if (tools.includes('end_call')) return { content: 'Goodbye!', tool_calls: [{ name: 'end_call', arguments: {} }] };
      return { content: 'Hmm.' };
    });

    const { call_id, greeting } = await startText('clinic-flow', { clinic: 'Sunrise Clinic' });
    expect(greeting).toBe('Welcome to Sunrise Clinic.');
    const first = await say(call_id, 'My name is Meera');
    expect(first).toEqual({ replies: ['Which date suits you?'], status: 'in_progress', node_key: 'ask_date' });
    const second = await say(call_id, 'Friday please');
    expect(second.replies).toEqual(['Booked Meera for Friday.', 'Goodbye!']);
    expect(second.node_key).toBe('confirm');

    // Node messages and function descriptions are substituted with variables, incl. captured arguments.
    const nameTurn = llm.requests[0]!.body;
    expect(systemText(nameTurn)).toContain('You work for Sunrise Clinic.');
    expect(nameTurn.tools[0].function.description).toBe('Save the name for Sunrise Clinic');
    const dateTurn = llm.requests[1]!.body;
    expect(systemText(dateTurn)).toContain('Ask Meera for a date.');
    expect(systemText(dateTurn)).toContain('Context from slot_lookup: {"free":["10:00","14:00"]}');
    expect(toolNames(dateTurn)).toEqual(['save_date', 'slot_lookup']);
    const confirmTurn = llm.requests[llm.requests.length - 1]!.body;
    expect(systemText(confirmTurn)).toContain('Confirm Meera on Friday and end the call.');
    expect(toolNames(confirmTurn)).toEqual(['end_call']);
    // GET tools get their arguments as a query string.
    expect(hooks.requests.find((r) => r.path === '/slots')!.query).toMatchObject({ clinic: 'Sunrise Clinic', phone_number: '+14155550123' });

    const call = await eventually(async () => {
      const res = await h.request('GET', `/api/calls/${call_id}`);
      return res.body.status === 'completed' ? res.body : null;
    });
    expect(call).toMatchObject({ end_reason: 'agent_ended', current_node_key: 'confirm' });
    const trace = await events(call_id);
    const flow = trace.filter((e) => e.event_type === 'node_entered' || e.event_type === 'node_transition').map((e) => [e.event_type, e.data]);
    expect(flow).toEqual([
      ['node_entered', { node_key: 'ask_name' }],
      ['node_transition', { from: 'ask_name', to: 'ask_date', function: 'save_name' }],
      ['node_entered', { node_key: 'ask_date' }],
      ['node_transition', { from: 'ask_date', to: 'confirm', function: 'save_date' }],
      ['node_entered', { node_key: 'confirm' }],
    ]);
  });
});

describe('agent snapshot', () => {
  it('keeps running on the agent as it was when the call started', async () => {
    const agent = await createAgent(h.db, h.box, { name: 'snapshot-agent', prompt: 'Original prompt.' });
    llm.setResponder(() => ({ content: 'Fine.' }));
    const { call_id } = await startText('snapshot-agent');
    await h.db.models.Agent.update({ prompt: 'Edited prompt.', version: 2 }, { where: { id: agent.id } });
    await say(call_id, 'hello');
    expect(systemText(llm.requests[0]!.body)).toContain('Original prompt.');
    const call = await hangUp(call_id);
    expect(call.agent_version).toBe(1);
  });
});

describe('client-managed calls', () => {
  it('registers a call with POST /api/calls/start and completes it with POST /api/calls/end', async () => {
    await createAgent(h.db, h.box, { name: 'manual-agent' });
    const started = await h.request('POST', '/api/calls/start', {
      body: { phone_number: '+919876543210', agent_name: 'manual-agent', direction: 'outbound', metadata: { crm_id: 'x1' } },
    });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ status: 'in_progress', direction: 'outbound', agent_name: 'manual-agent', channel: 'manual', metadata: { crm_id: 'x1' } });
    const ended = await hangUp(started.body.id);
    expect(ended).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
    expect(ended.end_time).not.toBeNull();
  });

  it('validates requests', async () => {
    const badPhone = await h.request('POST', '/api/calls/start', { body: { phone_number: '12345', agent_name: 'x', direction: 'inbound', metadata: {} } });
    expect(badPhone.status).toBe(422);
    expect(badPhone.body.detail).toMatch(/^phone_number: /);
    const unknownAgent = await h.request('POST', '/api/calls/test', { body: { agent_name: 'nobody' } });
    expect(unknownAgent.status).toBe(404);
    const unknownCall = await h.request('POST', '/api/calls/end', { body: { call_id: '00000000-0000-4000-8000-000000000000' } });
    expect(unknownCall.status).toBe(404);
    const emptyText = await h.request('POST', '/api/calls/00000000-0000-4000-8000-000000000000/test/messages', { body: { text: ' ' } });
    expect(emptyText.status).toBe(422);
  });
});

describe('outgoing webhooks', () => {
  it('delivers subscribed events signed per Standard Webhooks, retrying through a receiver outage', async () => {
    const secret = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');
    await createAgent(
      h.db,
      h.box,
      { name: 'hook-agent', greeting: 'Hi', webhook_url: `${hooks.url}/events`, webhook_events: ['call_started', 'call_ended'] },
      secret,
    );
    // The receiver is down for its first three requests.
    hooks.respond({ status: 503 }, { path: '/events', times: 3 });
    llm.setResponder(() => ({ content: 'Noted.' }));
    const { call_id } = await startText('hook-agent');
    await say(call_id, 'Just testing');
    await hangUp(call_id);

    const delivered = await eventually(async () => {
      const ok = hooks.requests.filter((r) => r.path === '/events');
      const types = new Set(ok.map((r) => (r.body as any).type));
      return ok.length >= 5 && types.has('call_started') && types.has('call_ended') ? ok : null;
    }, 30_000);
    const verifier = new Webhook(secret);
    for (const req of delivered) {
      expect(() => verifier.verify(req.raw, req.headers as Record<string, string>)).not.toThrow();
    }
    // Every attempt for one event carries the same webhook-id; each id got exactly one 2xx answer.
    const ids = new Set(delivered.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(2);
    const ended = delivered.find((r) => (r.body as any).type === 'call_ended')!.body as any;
    expect(ended).toMatchObject({ call_id, agent_name: 'hook-agent', data: { status: 'completed', end_reason: 'user_ended' } });
    expect(ended.data.transcript).toEqual([
      { role: 'assistant', text: 'Hi' },
      { role: 'user', text: 'Just testing' },
      { role: 'assistant', text: 'Noted.' },
    ]);
    expect(ended.data.usage.llm_prompt_tokens).toBeGreaterThan(0);
  });
});
