import crypto from 'node:crypto';
import { inlineRefs } from '../support/openapi-doc';
import { insertCall } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/;

async function createAgent(body: Record<string, unknown>) {
  const res = await h.request('POST', '/api/agents', { body: { prompt: 'You are helpful.', ...body } });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function createTool(name: string) {
  const res = await h.request('POST', '/api/tools', {
    body: { name, description: `${name} tool`, parameters: { properties: {}, required: [] }, webhook_url: 'http://127.0.0.1:9/hook' },
  });
  if (res.status !== 201) throw new Error(`tool create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

describe('authentication', () => {
  it('answers 401 on every agent endpoint without a token', async () => {
    const id = crypto.randomUUID();
    for (const [method, path] of [
      ['GET', '/api/agents'],
      ['POST', '/api/agents'],
      ['GET', '/api/agents/stats'],
      ['GET', `/api/agents/${id}`],
      ['PATCH', `/api/agents/${id}`],
      ['DELETE', `/api/agents/${id}`],
      ['POST', `/api/agents/${id}/webhook-secret`],
    ]) {
      const res = await h.request(method!, path!, { token: null, body: method === 'GET' || method === 'DELETE' ? undefined : {} });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 401 });
    }
  });
});

describe('POST /api/agents', () => {
  it('creates an agent from name and prompt with every default, and returns the webhook secret once', async () => {
    const res = await h.request('POST', '/api/agents', { body: { name: 'minimal', prompt: 'Be brief.' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'minimal',
      prompt: 'Be brief.',
      greeting: null,
      stt_provider: 'deepgram',
      stt_model: null,
      stt_language: 'en',
      stt_mode: null,
      stt_settings: {},
      llm_provider: 'openai',
      llm_model: 'gpt-4o-mini',
      llm_settings: {},
      tts_provider: 'cartesia',
      tts_model: null,
      voice: null,
      tts_language: null,
      tts_settings: {},
      pipeline_settings: {
        idle_warn_secs: 25,
        idle_end_secs: 50,
        vad_confidence: 0.5,
        vad_start_secs: 0.2,
        vad_stop_secs: 0.2,
        vad_min_volume: 0.4,
        min_words: 3,
        dtmf_timeout_secs: 2,
        dtmf_max_digits: 32,
        noise_suppression: 'off',
      },
      pre_call_tool_ids: [],
      tool_ids: [],
      context_variables: {},
      webhook_url: null,
      webhook_events: [],
      version: 1,
      total_calls: 0,
      flow_nodes_count: 0,
    });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.created_at).toMatch(TIMESTAMP);
    expect(res.body.updated_at).toMatch(TIMESTAMP);
    expect(res.body.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(res.body.webhook_secret.slice(6), 'base64')).toHaveLength(32);
    expect(res.body).not.toHaveProperty('webhook_secret_encrypted');

    const stored = await h.db.models.Agent.findByPk(res.body.id);
    const sealed = stored!.get('webhook_secret_encrypted') as string;
    expect(sealed).not.toContain(res.body.webhook_secret.slice(6, 20));
    expect(h.box.decrypt(sealed)).toBe(res.body.webhook_secret);

    const got = await h.request('GET', `/api/agents/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty('webhook_secret');
    expect(got.body).not.toHaveProperty('webhook_secret_encrypted');
    const { webhook_secret: _secret, ...withoutSecret } = res.body;
    expect(got.body).toEqual(withoutSecret);
  });

  it('takes the default llm_model from the chosen llm_provider and keeps every given field', async () => {
    const toolId = await createTool('lookup_order');
    const body = {
      name: 'full-agent_1',
      prompt: 'Use lookup_order when asked about an order.',
      greeting: 'Hello {{first_name}}',
      stt_provider: 'sarvam',
      stt_model: 'saarika:v2',
      stt_language: 'hi-IN',
      stt_mode: 'translate',
      stt_settings: { punctuate: true },
      llm_provider: 'groq',
      llm_settings: { temperature: 0.3, max_tokens: 200 },
      tts_provider: 'elevenlabs',
      tts_model: 'eleven_turbo',
      voice: 'rachel',
      tts_language: 'hi',
      tts_settings: { stability: 0.5 },
      pipeline_settings: { idle_warn_secs: 10, idle_end_secs: 20 },
      pre_call_tool_ids: [toolId],
      tool_ids: [toolId, toolId],
      context_variables: { first_name: { type: 'string', description: 'caller first name' } },
      webhook_url: 'https://example.com/hooks',
      webhook_events: ['call_started', 'call_ended'],
    };
    const created = await createAgent(body);
    expect(created).toMatchObject({
      ...body,
      llm_model: 'llama-3.1-8b-instant',
      tool_ids: [toolId],
      pipeline_settings: { idle_warn_secs: 10, idle_end_secs: 20, vad_confidence: 0.5, min_words: 3 },
    });
  });

  it('rejects invalid fields with 422 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: 'has space' }, /^name: must be a slug/],
      [{ name: '-leading' }, /^name: /],
      [{ name: 'x'.repeat(65) }, /^name: /],
      [{ name: 'ok', prompt: '' }, /^prompt: /],
      [{ name: 'ok', nmae: 'typo' }, /unknown field\(s\): nmae/],
      [{ name: 'ok', stt_provider: 'nope' }, /^stt_provider: /],
      [{ name: 'ok', llm_provider: 'nope' }, /^llm_provider: /],
      [{ name: 'ok', tts_provider: 'nope' }, /^tts_provider: /],
      [{ name: 'ok', stt_language: 'english please' }, /^stt_language: /],
      [{ name: 'ok', llm_settings: { temperature: 2.5 } }, /^llm_settings\.temperature: /],
      [{ name: 'ok', llm_settings: { max_tokens: 0 } }, /^llm_settings\.max_tokens: /],
      [{ name: 'ok', llm_settings: { max_tokens: 1.5 } }, /^llm_settings\.max_tokens: /],
      [{ name: 'ok', llm_settings: { top_k: 3 } }, /^llm_settings: unknown field\(s\): top_k/],
      [{ name: 'ok', pipeline_settings: { vad_confidence: 1.5 } }, /^pipeline_settings\.vad_confidence: /],
      [{ name: 'ok', pipeline_settings: { vad_min_volume: -0.1 } }, /^pipeline_settings\.vad_min_volume: /],
      [{ name: 'ok', pipeline_settings: { vad_start_secs: 0 } }, /^pipeline_settings\.vad_start_secs: /],
      [{ name: 'ok', pipeline_settings: { idle_warn_secs: -1 } }, /^pipeline_settings\.idle_warn_secs: /],
      [{ name: 'ok', pipeline_settings: { min_words: 0 } }, /^pipeline_settings\.min_words: /],
      [{ name: 'ok', pipeline_settings: { min_words: 2.5 } }, /^pipeline_settings\.min_words: /],
      [{ name: 'ok', pipeline_settings: { backchannel_phrases: { mode: 'merge', phrases: [] } } }, /^pipeline_settings\.backchannel_phrases\.mode: /],
      [{ name: 'ok', pipeline_settings: { interrupt_phrases: { phrases: [''] } } }, /^pipeline_settings\.interrupt_phrases\.phrases\.0: /],
      [{ name: 'ok', pipeline_settings: { interrupt_phrases: ['stop'] } }, /^pipeline_settings\.interrupt_phrases: /],
      [{ name: 'ok', pipeline_settings: { dictation_wait_secs: 0 } }, /^pipeline_settings\.dictation_wait_secs: /],
      [{ name: 'ok', pipeline_settings: { false_interruption_secs: -1 } }, /^pipeline_settings\.false_interruption_secs: /],
      [{ name: 'ok', pipeline_settings: { noise_suppression: 'krisp' } }, /^pipeline_settings\.noise_suppression: /],
      [{ name: 'ok', pipeline_settings: { noise_suppression: true } }, /^pipeline_settings\.noise_suppression: /],
      [{ name: 'ok', pipeline_settings: { idle_warn_secs: 50, idle_end_secs: 50 } }, /^pipeline_settings\.idle_end_secs: must be greater than idle_warn_secs/],
      [{ name: 'ok', pipeline_settings: { idle_warn_secs: 60 } }, /^pipeline_settings\.idle_end_secs: /],
      [{ name: 'ok', stt_mode: 'translate' }, /^stt_mode: only allowed when stt_provider is sarvam/],
      [{ name: 'ok', stt_provider: 'sarvam', stt_mode: 'shout' }, /^stt_mode: /],
      [{ name: 'ok', webhook_url: 'ftp://example.com/x' }, /^webhook_url: /],
      [{ name: 'ok', webhook_url: 'not a url' }, /^webhook_url: /],
      [{ name: 'ok', webhook_events: ['call_started', 'party_started'] }, /^webhook_events\.1: /],
      [{ name: 'ok', context_variables: { city: 'string' } }, /^context_variables\.city: /],
      [{ name: 'ok', context_variables: { city: { description: 'no type' } } }, /^context_variables\.city\.type: /],
      [{ name: 'ok', tool_ids: ['not-a-uuid'] }, /^tool_ids\.0: /],
    ];
    for (const [body, detail] of cases) {
      const res = await h.request('POST', '/api/agents', { body: { prompt: 'p', ...body } });
      expect({ body, status: res.status, detail: res.body.detail }).toEqual({ body, status: 422, detail: expect.stringMatching(detail) });
    }
    const missing = await h.request('POST', '/api/agents', { body: { name: 'no-prompt' } });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toMatch(/^prompt: /);
  });

  it('rejects tool ids that do not exist with 422 naming the id', async () => {
    const ghost = crypto.randomUUID();
    const res = await h.request('POST', '/api/agents', { body: { name: 'ghost-tools', prompt: 'p', pre_call_tool_ids: [ghost] } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toBe(`pre_call_tool_ids.0: unknown tool ${ghost}`);
    expect(await h.db.models.Agent.count({ where: { name: 'ghost-tools' } })).toBe(0);
  });

  it('answers 409 for a duplicate name', async () => {
    await createAgent({ name: 'twin' });
    const res = await h.request('POST', '/api/agents', { body: { name: 'twin', prompt: 'again' } });
    expect(res.status).toBe(409);
    expect(res.body.detail).toBe('An agent named "twin" already exists');
  });
});

describe('GET /api/agents and /api/agents/{agent_id}', () => {
  it('lists agents with total_calls and flow_nodes_count', async () => {
    const a = await createAgent({ name: 'counted' });
    await insertCall(h.db, a, 'completed', 30);
    await insertCall(h.db, a, 'failed');
    await h.request('PUT', `/api/agents/${a.id}/flow`, { body: { nodes: [{ node_key: 'start', is_initial: true }] } });

    const list = await h.request('GET', '/api/agents');
    expect(list.status).toBe(200);
    const listed = list.body.find((x: any) => x.id === a.id);
    expect(listed).toMatchObject({ name: 'counted', total_calls: 2, flow_nodes_count: 1 });
    expect(list.body.every((x: any) => !('webhook_secret_encrypted' in x) && !('webhook_secret' in x))).toBe(true);
    const names = list.body.map((x: any) => x.name);
    expect(names).toEqual([...names].sort());

    const one = await h.request('GET', `/api/agents/${a.id}`);
    expect(one.body).toMatchObject({ total_calls: 2, flow_nodes_count: 1, version: 2 });
  });

  it('answers 404 for an unknown id and 422 for a malformed one', async () => {
    const unknown = await h.request('GET', `/api/agents/${crypto.randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe('Agent not found');
    const malformed = await h.request('GET', '/api/agents/not-a-uuid');
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail).toMatch(/^path\.agent_id: /);
  });
});

describe('PATCH /api/agents/{agent_id}', () => {
  it('merges nested settings key by key and increments version on every update', async () => {
    const a = await createAgent({
      name: 'patchy',
      llm_settings: { temperature: 0.2, max_tokens: 100 },
      stt_settings: { punctuate: true, diarize: false },
      pipeline_settings: { min_words: 2, backchannel_phrases: { phrases: ['sab theek'] } },
    });
    const res = await h.request('PATCH', `/api/agents/${a.id}`, {
      body: { pipeline_settings: { idle_warn_secs: 5, interrupt_phrases: { mode: 'replace', phrases: ['halt'] }, noise_suppression: 'rnnoise' }, llm_settings: { temperature: 1.5 }, stt_settings: { diarize: true, model_tier: 'x' } },
    });
    expect(res.status).toBe(200);
    expect(res.body.pipeline_settings).toEqual({
      idle_warn_secs: 5,
      idle_end_secs: 50,
      vad_confidence: 0.5,
      vad_start_secs: 0.2,
      vad_stop_secs: 0.2,
      vad_min_volume: 0.4,
      min_words: 2,
      backchannel_phrases: { mode: 'add', phrases: ['sab theek'] },
      interrupt_phrases: { mode: 'replace', phrases: ['halt'] },
      dictation_wait_secs: 1.2,
      false_interruption_secs: 1,
      dtmf_timeout_secs: 2,
      dtmf_max_digits: 32,
      noise_suppression: 'rnnoise',
    });
    expect(res.body.llm_settings).toEqual({ temperature: 1.5, max_tokens: 100 });
    expect(res.body.stt_settings).toEqual({ punctuate: true, diarize: true, model_tier: 'x' });
    expect(res.body.version).toBe(2);
    expect(res.body.prompt).toBe(a.prompt);

    const second = await h.request('PATCH', `/api/agents/${a.id}`, {
      body: { pipeline_settings: { min_words: null, interrupt_phrases: null }, llm_settings: { max_tokens: null }, stt_settings: { punctuate: null }, greeting: 'Hi' },
    });
    expect(second.status).toBe(200);
    expect(second.body.pipeline_settings.min_words).toBe(3);
    expect(second.body.pipeline_settings.noise_suppression).toBe('rnnoise');
    expect((await h.request('GET', `/api/agents/${a.id}`)).body.pipeline_settings.noise_suppression).toBe('rnnoise');
    expect(second.body.pipeline_settings.interrupt_phrases).toEqual({ mode: 'add', phrases: [] });
    expect(second.body.pipeline_settings.backchannel_phrases).toEqual({ mode: 'add', phrases: ['sab theek'] });
    expect(second.body.llm_settings).toEqual({ temperature: 1.5 });
    expect(second.body.stt_settings).toEqual({ diarize: true, model_tier: 'x' });
    expect(second.body.greeting).toBe('Hi');
    expect(second.body.version).toBe(3);

    const cleared = await h.request('PATCH', `/api/agents/${a.id}`, { body: { greeting: null, webhook_url: null } });
    expect(cleared.body).toMatchObject({ greeting: null, webhook_url: null, version: 4 });
    expect((await h.request('GET', `/api/agents/${a.id}`)).body.version).toBe(4);
  });

  it('validates the merged result, so cross-field rules hold after a partial update', async () => {
    const a = await createAgent({ name: 'crossfield' });
    const idle = await h.request('PATCH', `/api/agents/${a.id}`, { body: { pipeline_settings: { idle_warn_secs: 60 } } });
    expect(idle.status).toBe(422);
    expect(idle.body.detail).toMatch(/^pipeline_settings\.idle_end_secs: must be greater than idle_warn_secs \(60\)/);
    const mode = await h.request('PATCH', `/api/agents/${a.id}`, { body: { stt_mode: 'transcribe' } });
    expect(mode.status).toBe(422);
    expect(mode.body.detail).toMatch(/^stt_mode: /);
    const typo = await h.request('PATCH', `/api/agents/${a.id}`, { body: { promt: 'x' } });
    expect(typo.status).toBe(422);
    expect(typo.body.detail).toMatch(/unknown field\(s\): promt/);
    const nullName = await h.request('PATCH', `/api/agents/${a.id}`, { body: { name: null } });
    expect(nullName.status).toBe(422);
    expect(nullName.body.detail).toMatch(/^name: /);
    const ghost = crypto.randomUUID();
    const tools = await h.request('PATCH', `/api/agents/${a.id}`, { body: { tool_ids: [ghost] } });
    expect(tools.status).toBe(422);
    expect(tools.body.detail).toBe(`tool_ids.0: unknown tool ${ghost}`);
    // Nothing of the rejected updates was stored.
    const after = await h.request('GET', `/api/agents/${a.id}`);
    expect(after.body).toMatchObject({ version: 1, tool_ids: [], pipeline_settings: { idle_warn_secs: 25 } });
  });

  it('drops what belonged to the previous provider unless the request sets it', async () => {
    const a = await createAgent({ name: 'switcher', stt_provider: 'sarvam', stt_mode: 'translate' });
    const stt = await h.request('PATCH', `/api/agents/${a.id}`, { body: { stt_provider: 'deepgram' } });
    expect(stt.body).toMatchObject({ stt_provider: 'deepgram', stt_mode: null });
    const llm = await h.request('PATCH', `/api/agents/${a.id}`, { body: { llm_provider: 'groq' } });
    expect(llm.body).toMatchObject({ llm_provider: 'groq', llm_model: 'llama-3.1-8b-instant' });
    await h.request('PATCH', `/api/agents/${a.id}`, { body: { llm_model: 'llama-3.3-70b' } });
    const custom = await h.request('PATCH', `/api/agents/${a.id}`, { body: { llm_provider: 'azure' } });
    expect(custom.body).toMatchObject({ llm_provider: 'azure', llm_model: 'llama-3.3-70b' });
  });

  it('renames the agent in telephony endpoints, and answers 409 for a taken name and 404 for an unknown agent', async () => {
    const a = await createAgent({ name: 'old-name' });
    await createAgent({ name: 'taken-name' });
    const ep = await h.db.models.TelephonyEndpoint.create({ phone_number: '+15550002222', provider: 'twilio', inbound_agent_name: 'old-name', outbound_agent_name: 'old-name' });
    const other = await h.db.models.TelephonyEndpoint.create({ phone_number: '+15550003333', provider: 'twilio', inbound_agent_name: 'taken-name' });

    const taken = await h.request('PATCH', `/api/agents/${a.id}`, { body: { name: 'taken-name' } });
    expect(taken.status).toBe(409);

    const renamed = await h.request('PATCH', `/api/agents/${a.id}`, { body: { name: 'new-name' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('new-name');
    await ep.reload();
    await other.reload();
    expect(ep.get('inbound_agent_name')).toBe('new-name');
    expect(ep.get('outbound_agent_name')).toBe('new-name');
    expect(other.get('inbound_agent_name')).toBe('taken-name');

    const unknown = await h.request('PATCH', `/api/agents/${crypto.randomUUID()}`, { body: { prompt: 'x' } });
    expect(unknown.status).toBe(404);
  });
});

describe('DELETE /api/agents/{agent_id}', () => {
  it('deletes the agent and its flow nodes, keeps its calls and unmaps its telephony endpoints', async () => {
    const a = await createAgent({ name: 'doomed' });
    await h.request('PUT', `/api/agents/${a.id}/flow`, { body: { nodes: [{ node_key: 'start', is_initial: true }] } });
    const call = await insertCall(h.db, a, 'completed', 12);
    const ep = await h.db.models.TelephonyEndpoint.create({ phone_number: '+15550004444', provider: 'plivo', inbound_agent_name: 'doomed', outbound_agent_name: 'doomed' });

    const res = await h.request('DELETE', `/api/agents/${a.id}`);
    expect(res.status).toBe(204);
    expect(res.body).toBe('');
    expect((await h.request('GET', `/api/agents/${a.id}`)).status).toBe(404);
    expect(await h.db.models.FlowNode.count({ where: { agent_id: a.id } })).toBe(0);
    await call.reload();
    expect(call.get('agent_id')).toBeNull();
    expect(call.get('agent_name')).toBe('doomed');
    await ep.reload();
    expect(ep.get('inbound_agent_name')).toBeNull();
    expect(ep.get('outbound_agent_name')).toBeNull();

    expect((await h.request('DELETE', `/api/agents/${a.id}`)).status).toBe(404);
  });
});

it('documents pipeline_settings.noise_suppression in the OpenAPI document as an enum', async () => {
  const doc = inlineRefs((await h.request('GET', '/api/openapi.json', { token: null })).body);
  const pipeline = doc.paths['/api/agents'].post.requestBody.content['application/json'].schema.properties.pipeline_settings;
  expect(pipeline.properties.noise_suppression).toMatchObject({ type: 'string', enum: ['off', 'rnnoise'], default: 'off' });
});
