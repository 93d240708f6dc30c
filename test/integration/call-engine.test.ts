/**
 * The conversation engine end to end, by text (test/support/text-call-stack.ts: real API over
 * HTTP, real Temporal workflow and worker, real PostgreSQL, a fake LLM and a local webhook
 * receiver): a freeform agent's turns, tools and end, and the idle timers. Flow agents, the agent
 * snapshot, client-managed calls and outgoing webhooks are in call-engine-flows.test.ts.
 */
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { callWorkflowId, utteranceSignal } from '../../workflows/call-definitions';
import type { FakeReply } from '../fakes/openai-server';
import { createAgent, createTool, eventually } from '../support/fixtures';
import { events, h, hangUp, hooks, lastMessage, llm, say, startText, systemText, toolNames, useTextCallStack } from '../support/text-call-stack';

useTextCallStack({ env: { WEBHOOK_RETRY_INITIAL_SECS: '1' } });

describe('freeform agent', () => {
  it('greets with substituted variables, calls a webhook tool with merged arguments, and records everything', async () => {
    const tool = await createTool(h.db, h.box, {
      name: 'get_balance',
      webhook_url: `${hooks.url}/balance`,
      headers: { authorization: 'Bearer client-secret' },
      parameters: { properties: { account_type: { type: 'string' } }, required: ['account_type'] },
    });
    await createAgent(h.db, h.box, {
      name: 'bank-agent',
      prompt: 'You are a bank assistant. Use get_balance for balance questions.',
      greeting: 'Hello {{name}}, this is {{Bank}} calling about {{missing}}{{empty}}.',
      tool_ids: [tool.id],
    });
    hooks.respond({ status: 200, body: { balance: 42, currency: 'EUR' } }, { path: '/balance' });
    llm.setResponder((body): FakeReply => {
      const last = lastMessage(body);
      if (last.role === 'user') return { tool_calls: [{ name: 'get_balance', arguments: { account_type: 'savings' } }], usage: { prompt_tokens: 100, completion_tokens: 10 } };
      if (last.role === 'tool') return { content: `Your balance is ${JSON.parse(last.content).balance} euros.`, usage: { prompt_tokens: 120, completion_tokens: 8 } };
      return { content: 'OK.' };
    });

    const { call_id, greeting } = await startText('bank-agent', { name: 'Asha', account: 'A-17', empty: '' });
    // Case-sensitive names, unknown placeholder kept, empty variable rendered empty.
    expect(greeting).toBe('Hello Asha, this is {{Bank}} calling about {{missing}}.');

    const turn = await say(call_id, 'What is my balance?');
    expect(turn).toEqual({ replies: ['Your balance is 42 euros.'], status: 'in_progress', node_key: null });

    // The webhook got the LLM's arguments merged with the call context, headers and an idempotency key.
    const webhookCall = hooks.requests.find((r) => r.path === '/balance')!;
    expect(webhookCall.method).toBe('POST');
    expect(webhookCall.body).toEqual({ phone_number: '+14155550123', direction: 'inbound', name: 'Asha', account: 'A-17', empty: '', account_type: 'savings' });
    expect(webhookCall.headers.authorization).toBe('Bearer client-secret');
    expect(webhookCall.headers['idempotency-key']).toMatch(new RegExp(`^${call_id}:`));

    // The LLM saw the prompt with the call-context line, the tools incl. end_call, and the tool result.
    const first = llm.requests[0]!.body;
    expect(systemText(first)).toContain('You are a bank assistant.');
    expect(systemText(first)).toContain('Call context: name: Asha, account: A-17, empty: ');
    expect(toolNames(first)).toEqual(['get_balance', 'end_call']);
    expect(first.stream).toBe(true);
    expect(lastMessage(llm.requests[1]!.body)).toMatchObject({ role: 'tool', content: '{"balance":42,"currency":"EUR"}' });

    const ended = await hangUp(call_id);
    expect(ended).toMatchObject({ status: 'completed', end_reason: 'user_ended', llm_prompt_tokens: 220, llm_completion_tokens: 18 });
    expect(ended.duration).toBeGreaterThanOrEqual(0);
    expect(ended.start_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    expect(ended.transcript.map((t: any) => [t.role, t.text])).toEqual([
      ['assistant', 'Hello Asha, this is {{Bank}} calling about {{missing}}.'],
      ['user', 'What is my balance?'],
      ['assistant', 'Your balance is 42 euros.'],
    ]);

    const trace = await events(call_id);
    expect(trace.map((e) => e.id)).toEqual(trace.map((_, i) => i + 1));
    const sorted = [...trace].sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    expect(sorted.map((e) => e.id)).toEqual(trace.map((e) => e.id));
    expect(trace.map((e) => e.event_type)).toEqual([
      'call_started',
      'agent_spoke',
      'user_spoke',
      'llm_usage',
      'ttfb_metric',
      'tool_called',
      'tool_result',
      'llm_usage',
      'ttfb_metric',
      'agent_spoke',
      'call_status',
      'call_ended',
    ]);
    expect(trace.find((e) => e.event_type === 'tool_called')!.data).toEqual({ function: 'get_balance', args: { account_type: 'savings' } });
    expect(trace.find((e) => e.event_type === 'tool_result')!.data).toMatchObject({ function: 'get_balance', result: { balance: 42, currency: 'EUR' }, status_code: 200, error: null });
    expect(trace.find((e) => e.event_type === 'llm_usage')!.data).toMatchObject({ prompt_tokens: 100, completion_tokens: 10 });
    expect(trace.find((e) => e.event_type === 'ttfb_metric')!.data).toMatchObject({ processor: 'llm' });
    expect(trace.find((e) => e.event_type === 'call_ended')!.data).toMatchObject({ status: 'completed', end_reason: 'user_ended' });

    // Operators can filter the call in the Temporal Web UI by these search attributes.
    const description = await h.temporal.workflow.getHandle(callWorkflowId(call_id)).describe();
    // Temporal's own attributes (BuildIds, TemporalChangeVersion of patched() code, the worker
    // deployment version the call is pinned to: worker-versioning.test.ts) are not ours.
    const attrs = Object.fromEntries(
      description.typedSearchAttributes
        .getAll()
        .filter((p) => p.key.name !== 'BuildIds' && !p.key.name.startsWith('Temporal'))
        .map((p) => [p.key.name, p.value]),
    );
    expect(attrs).toEqual({ AgentName: 'bank-agent', CallStatus: 'completed', Direction: 'inbound', PhoneNumber: '+14155550123' });
  });

  it('ends the call when the LLM calls end_call, and refuses messages afterwards', async () => {
    await createAgent(h.db, h.box, { name: 'bye-agent', greeting: 'Hi.' });
    llm.setResponder(() => ({ content: 'Goodbye!', tool_calls: [{ name: 'end_call', arguments: {} }] }));
    const { call_id } = await startText('bye-agent');
    const turn = await say(call_id, 'That is all, thanks.');
    expect(turn.replies).toEqual(['Goodbye!']);
    const call = await eventually(async () => {
      const res = await h.request('GET', `/api/calls/${call_id}`);
      return res.body.status === 'completed' ? res.body : null;
    });
    expect(call.end_reason).toBe('agent_ended');
    const after = await h.request('POST', `/api/calls/${call_id}/test/messages`, { body: { text: 'hello?' } });
    expect(after.status).toBe(409);
    expect(after.body.detail).toMatch(/ended/);
    // Ending an ended call is harmless.
    expect((await hangUp(call_id)).status).toBe('completed');
  });

  it('gives tool timeouts and HTTP errors to the LLM as errors and keeps the conversation going', async () => {
    const slow = await createTool(h.db, h.box, { name: 'slow_lookup', webhook_url: `${hooks.url}/slow`, timeout_secs: 1 });
    const broken = await createTool(h.db, h.box, { name: 'broken_lookup', webhook_url: `${hooks.url}/broken` });
    await createAgent(h.db, h.box, { name: 'error-agent', tool_ids: [slow.id, broken.id] });
    hooks.respond({ delay_ms: 2500, body: { late: true } }, { path: '/slow', times: 5 });
    hooks.respond({ status: 500, body: { error: 'database down' } }, { path: '/broken', times: 5 });
    llm.setResponder((body) => {
      const last = lastMessage(body);
      if (last.role === 'user') return { tool_calls: [{ name: last.content.includes('slow') ? 'slow_lookup' : 'broken_lookup', arguments: {} }] };
      return { content: `Sorry: ${last.content.slice(0, 60)}` };
    });
    const { call_id } = await startText('error-agent');

    const slowTurn = await say(call_id, 'try the slow one');
    expect(slowTurn.replies[0]).toMatch(/^Sorry: Error: the tool failed \(timeout after 1s\)/);
    const brokenTurn = await say(call_id, 'try the broken one');
    expect(brokenTurn.replies[0]).toMatch(/^Sorry: Error: the tool failed \(HTTP 500\)/);
    expect(brokenTurn.status).toBe('in_progress');

    await hangUp(call_id);
    const results = (await events(call_id)).filter((e) => e.event_type === 'tool_result');
    expect(results.map((e) => e.data.error)).toEqual(['timeout after 1s', 'HTTP 500']);
    expect(results[1]!.data).toMatchObject({ status_code: 500, result: { error: 'database down' } });
  });

  it('fires pre-call tools with the custom parameters and injects their results as context', async () => {
    const crm = await createTool(h.db, h.box, { name: 'crm_lookup', webhook_url: `${hooks.url}/crm` });
    await createAgent(h.db, h.box, { name: 'crm-agent', greeting: 'Hello {{first_name}}!', pre_call_tool_ids: [crm.id] });
    hooks.respond({ status: 200, body: { tier: 'gold', open_tickets: 2 } }, { path: '/crm' });
    llm.setResponder(() => ({ content: 'I see you are a gold customer.' }));
    const { call_id, greeting } = await startText('crm-agent', { first_name: 'Ravi', customer_id: 991 });
    expect(greeting).toBe('Hello Ravi!');
    expect(hooks.requests.find((r) => r.path === '/crm')!.body).toEqual({
      phone_number: '+14155550123',
      direction: 'inbound',
      first_name: 'Ravi',
      customer_id: 991,
    });
    await say(call_id, 'Hi there');
    expect(systemText(llm.requests[0]!.body)).toContain('Context from crm_lookup: {"tier":"gold","open_tickets":2}');
    await hangUp(call_id);
    const injected = (await events(call_id)).find((e) => e.event_type === 'context_injected')!;
    expect(injected.data).toMatchObject({ source: 'pre_call', tool: 'crm_lookup' });
  });

  it('ends the call with end_reason error and an error event when the LLM keeps failing', async () => {
    await createAgent(h.db, h.box, { name: 'fail-agent' });
    llm.failNext(10, 500);
    const { call_id } = await startText('fail-agent');
    const turn = await h.request('POST', `/api/calls/${call_id}/test/messages`, { body: { text: 'hello' } });
    expect(turn.status).toBe(200);
    expect(turn.body).toMatchObject({ replies: [], status: 'failed' });
    const call = await eventually(async () => {
      const res = await h.request('GET', `/api/calls/${call_id}`);
      return res.body.end_reason ? res.body : null;
    });
    expect(call).toMatchObject({ status: 'failed', end_reason: 'error' });
    expect(llm.requests.length).toBe(2); // LLM_RETRY_MAX_ATTEMPTS
    const error = (await events(call_id)).find((e) => e.event_type === 'error')!;
    expect(error.data.context).toBe('llm');
    expect(error.data.message).toMatch(/LLM request failed/);
  });

  it('treats a short utterance over the agent as a backchannel, not a turn (min_words)', async () => {
    await createAgent(h.db, h.box, { name: 'backchannel-agent' });
    llm.setResponder(() => ({ content: 'Sure.' }));
    const { call_id } = await startText('backchannel-agent');
    const handle = h.temporal.workflow.getHandle(callWorkflowId(call_id));
    await handle.signal(utteranceSignal, { text: 'uh huh', duringAgentSpeech: true });
    await handle.signal(utteranceSignal, { text: 'wait I have a question', duringAgentSpeech: true });
    const spoke = await eventually(async () => {
      const list = (await events(call_id)).filter((e) => e.event_type === 'user_spoke' || e.event_type === 'agent_spoke');
      return list.length >= 3 ? list : null;
    });
    expect(spoke.map((e) => [e.event_type, e.data.text, e.data.backchannel ?? false])).toEqual([
      ['user_spoke', 'uh huh', true],
      ['user_spoke', 'wait I have a question', false],
      ['agent_spoke', 'Sure.', false],
    ]);
    expect(llm.requests.length).toBe(1);
    await hangUp(call_id);
  });

  it("judges backchannels by meaning in the agent's language, with its own phrases", async () => {
    await createAgent(h.db, h.box, {
      name: 'backchannel-hindi',
      stt_language: 'hi-IN',
      pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 3, backchannel_phrases: { mode: 'add', phrases: ['sab badhiya'] } },
    });
    llm.setResponder(() => ({ content: 'Ji.' }));
    const { call_id } = await startText('backchannel-hindi');
    const handle = h.temporal.workflow.getHandle(callWorkflowId(call_id));
    await handle.signal(utteranceSignal, { text: 'haan ji, theek hai', duringAgentSpeech: true });
    await handle.signal(utteranceSignal, { text: 'sab badhiya', duringAgentSpeech: true });
    await handle.signal(utteranceSignal, { text: 'ruko', duringAgentSpeech: true });
    const spoke = await eventually(async () => {
      const list = (await events(call_id)).filter((e) => e.event_type === 'user_spoke' || e.event_type === 'agent_spoke');
      return list.length >= 4 ? list : null;
    });
    // Four words of assent are a backchannel; "ruko" (stop) is a turn, answered.
    expect(spoke.map((e) => [e.event_type, e.data.text, e.data.backchannel ?? false])).toEqual([
      ['user_spoke', 'haan ji, theek hai', true],
      ['user_spoke', 'sab badhiya', true],
      ['user_spoke', 'ruko', false],
      ['agent_spoke', 'Ji.', false],
    ]);
    await hangUp(call_id);
  });
});

describe('idle timers', () => {
  it('prompts the silent caller after idle_warn_secs and ends the call after idle_end_secs', async () => {
    await createAgent(h.db, h.box, {
      name: 'idle-agent',
      greeting: 'Hello?',
      pipeline_settings: { idle_warn_secs: 1, idle_end_secs: 3, vad_confidence: 0.5, vad_start_secs: 0.2, vad_stop_secs: 0.2, vad_min_volume: 0.4, min_words: 3 },
    });
    llm.setResponder((body) => (systemText(body).includes('silent for a while') ? { content: 'Are you still there?' } : { content: 'OK.' }));
    const { call_id } = await startText('idle-agent');
    const call = await eventually(async () => {
      const res = await h.request('GET', `/api/calls/${call_id}`);
      return res.body.status === 'completed' ? res.body : null;
    }, 15_000);
    expect(call.end_reason).toBe('idle_timeout');
    expect(call.duration).toBeGreaterThanOrEqual(2.5);
    expect(call.transcript.map((t: any) => t.text)).toEqual(['Hello?', 'Are you still there?']);
    expect(toolNames(llm.requests[0]!.body)).toEqual([]);
  });

  it('resets the timers when the caller speaks', async () => {
    await createAgent(h.db, h.box, {
      name: 'idle-reset-agent',
      pipeline_settings: { idle_warn_secs: 2, idle_end_secs: 3, vad_confidence: 0.5, vad_start_secs: 0.2, vad_stop_secs: 0.2, vad_min_volume: 0.4, min_words: 3 },
    });
    llm.setResponder(() => ({ content: 'Mm-hm.' }));
    const { call_id } = await startText('idle-reset-agent');
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 1200));
      const turn = await say(call_id, `still here ${i}`);
      expect(turn.status).toBe('in_progress');
    }
    await hangUp(call_id);
    expect((await events(call_id)).some((e) => e.data?.source === 'idle_timer')).toBe(false);
  });
});
