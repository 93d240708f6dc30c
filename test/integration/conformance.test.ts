/**
 * Promises of the spec a user meets first, through the real API, workflow, worker and PostgreSQL:
 * the prompt and declared variables follow the substitution rules, the call list carries
 * transcripts, unset settings read as null, and client-managed calls are left to the client.
 */
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { createAgent, createNodes } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { loadTelephonySettings } from '../../src/providers/telephony/settings-store';
import { DEFAULT_MAX_CONCURRENT } from '../../src/api/telephony/provider-fields';

let h: Harness;
let llm: FakeOpenAI;

beforeAll(async () => {
  llm = await startFakeOpenAI();
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url }, worker: true });
});
afterAll(async () => {
  await h?.stop();
  await llm?.stop();
});
beforeEach(() => llm.reset());

const systemText = (body: any) => body.messages.filter((m: any) => m.role === 'system').map((m: any) => m.content).join('\n');
const declared = (...names: string[]) => Object.fromEntries(names.map((n) => [n, { type: 'string', description: n }]));

async function startText(agent_name: string, custom_parameters: Record<string, string | number> = {}) {
  const res = await h.request('POST', '/api/calls/test', { body: { agent_name, custom_parameters } });
  expect(res.status).toBe(201);
  return res.body as { call_id: string; greeting: string | null };
}

async function say(callId: string, text: string) {
  const res = await h.request('POST', `/api/calls/${callId}/test/messages`, { body: { text } });
  expect(res.status).toBe(200);
  return res.body as { replies: string[]; status: string };
}

async function hangUp(callId: string) {
  const res = await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
  expect(res.status).toBe(200);
  return res.body;
}

describe('custom_parameters substitution (spec rule 4)', () => {
  it('substitutes the agent prompt at call start, like the greeting', async () => {
    await createAgent(h.db, h.box, { name: 'prompt-vars', prompt: 'You serve {{first_name}} from {{city}}. Ask about {{topic}}.' });
    llm.setResponder(() => ({ content: 'Hello.' }));
    const { call_id } = await startText('prompt-vars', { first_name: 'Asha', city: 'Pune' });
    await say(call_id, 'hi');
    const system = systemText(llm.requests[0]!.body);
    expect(system).toContain('You serve Asha from Pune. Ask about {{topic}}.');
    expect(system).not.toContain('{{first_name}}');
    await hangUp(call_id);
  });

  it('renders a declared but missing variable empty and leaves an undeclared one as written', async () => {
    await createAgent(h.db, h.box, {
      name: 'declared-vars',
      prompt: 'Customer {{first_name}}, plan {{plan}}, ref {{other}}.',
      greeting: 'Hi {{first_name}}!{{other}}',
      context_variables: declared('first_name', 'plan'),
    });
    llm.setResponder(() => ({ content: 'OK.' }));
    const { call_id, greeting } = await startText('declared-vars', { plan: 'gold' });
    expect(greeting).toBe('Hi !{{other}}');
    await say(call_id, 'hi');
    expect(systemText(llm.requests[0]!.body)).toContain('Customer , plan gold, ref {{other}}.');
    // Only what the caller supplied is call context and tool arguments.
    expect(systemText(llm.requests[0]!.body)).toContain('Call context: plan: gold');
    await hangUp(call_id);
  });

  it('renders declared missing variables empty in flow node messages too', async () => {
    const agent = await createAgent(h.db, h.box, { name: 'declared-flow', context_variables: declared('clinic') });
    await createNodes(h.db, agent.id, [
      { node_key: 'greet', is_initial: true, task_messages: [{ role: 'system', content: 'Welcome to {{clinic}}; ask for {{date}}.' }] },
    ]);
    llm.setResponder(() => ({ content: 'Which date?' }));
    const { call_id } = await startText('declared-flow');
    await say(call_id, 'hello');
    expect(systemText(llm.requests[0]!.body)).toContain('Welcome to ; ask for {{date}}.');
    await hangUp(call_id);
  });
});

describe('GET /api/calls', () => {
  it('lists each call with its transcript, which include_transcript=false leaves out', async () => {
    await createAgent(h.db, h.box, { name: 'list-transcript', greeting: 'Welcome.' });
    llm.setResponder(() => ({ content: 'Right.' }));
    const { call_id } = await startText('list-transcript');
    await say(call_id, 'one question');
    await hangUp(call_id);

    const res = await h.request('GET', '/api/calls?agent_name=list-transcript');
    expect(res.status).toBe(200);
    expect(res.body.calls).toHaveLength(1);
    const [listed] = res.body.calls;
    expect(listed.transcript.map((t: any) => [t.role, t.text])).toEqual([
      ['assistant', 'Welcome.'],
      ['user', 'one question'],
      ['assistant', 'Right.'],
    ]);
    expect(listed.transcript[0].timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
    const detail = (await h.request('GET', `/api/calls/${call_id}`)).body;
    expect(listed.transcript).toEqual(detail.transcript);

    const slim = await h.request('GET', '/api/calls?agent_name=list-transcript&include_transcript=false');
    expect(slim.status).toBe(200);
    expect(slim.body.calls[0]).not.toHaveProperty('transcript');
    expect(slim.body.calls[0].id).toBe(call_id);
    const bad = await h.request('GET', '/api/calls?include_transcript=maybe');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^query\.include_transcript: /);
  });
});

describe('GET /api/settings/telephony', () => {
  it('returns null for an unset max_concurrent, while calls are capped at the documented default', async () => {
    const fresh = await h.request('GET', '/api/settings/telephony');
    for (const provider of ['twilio', 'exotel', 'plivo']) expect(fresh.body[`${provider}_max_concurrent`]).toBeNull();

    const set = await h.request('PUT', '/api/settings/telephony', {
      body: { provider: 'twilio', public_base_url: 'https://voice.example.com', twilio_max_concurrent: 3 },
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ twilio_max_concurrent: 3, exotel_max_concurrent: null, plivo_max_concurrent: null });
    const cleared = await h.request('PUT', '/api/settings/telephony', {
      body: { provider: 'twilio', public_base_url: 'https://voice.example.com', twilio_max_concurrent: null },
    });
    expect(cleared.body.twilio_max_concurrent).toBeNull();
    expect((await h.request('GET', '/api/settings/telephony')).body.twilio_max_concurrent).toBeNull();
    // What telephony code applies when the field is null.
    expect((await loadTelephonySettings(h.db, h.box)).vendors.twilio!.max_concurrent).toBe(DEFAULT_MAX_CONCURRENT);
  });
});

describe('POST /api/calls/start (client-managed)', () => {
  it('leaves the call to the client: no greeting, no idle end, metadata as sent', async () => {
    await createAgent(h.db, h.box, {
      name: 'client-managed',
      greeting: 'Hello from the server!',
      pipeline_settings: { idle_warn_secs: 1, idle_end_secs: 2, vad_confidence: 0.5, vad_start_secs: 0.2, vad_stop_secs: 0.2, vad_min_volume: 0.4, min_words: 3 },
    });
    llm.setResponder(() => ({ content: 'How can I help?' }));
    const metadata = { crm_id: 'x1', channel: 'sip-trunk-7', nested: { a: [1, 2] } };
    const started = await h.request('POST', '/api/calls/start', {
      body: { phone_number: '+919876543210', agent_name: 'client-managed', direction: 'outbound', metadata },
    });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ status: 'in_progress', channel: 'manual' });
    expect(started.body.metadata).toEqual(metadata);
    const callId = started.body.id as string;

    // Longer than idle_warn_secs + idle_end_secs: the server neither spoke nor ended the call.
    await new Promise((r) => setTimeout(r, 5000));
    const idle = (await h.request('GET', `/api/calls/${callId}`)).body;
    expect(idle).toMatchObject({ status: 'in_progress', end_reason: null, transcript: [] });
    expect(llm.requests).toHaveLength(0);

    // The client's own messages are answered.
    expect(await say(callId, 'I need help')).toMatchObject({ replies: ['How can I help?'], status: 'in_progress' });
    await new Promise((r) => setTimeout(r, 3000));
    expect((await h.request('GET', `/api/calls/${callId}`)).body.status).toBe('in_progress');
    expect(llm.requests).toHaveLength(1);

    const ended = await hangUp(callId);
    expect(ended).toMatchObject({ status: 'completed', end_reason: 'user_ended', metadata });
    expect(ended.transcript.map((t: any) => t.text)).toEqual(['I need help', 'How can I help?']);
    const listed = (await h.request('GET', '/api/calls?agent_name=client-managed')).body.calls[0];
    expect(listed.metadata).toEqual(metadata);
  }, 30_000);
});
