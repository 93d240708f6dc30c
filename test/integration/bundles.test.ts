import crypto from 'node:crypto';
import { startHarness, type Harness } from '../support/harness';

let h: Harness;
/** A second installation with an empty database, to import into. */
let target: Harness;
beforeAll(async () => {
  [h, target] = await Promise.all([startHarness(), startHarness()]);
});
afterAll(async () => {
  await Promise.all([h?.stop(), target?.stop()]);
});

async function createTool(harness: Harness, name: string, extra: Record<string, unknown> = {}) {
  const res = await harness.request('POST', '/api/tools', {
    body: {
      name,
      description: `The ${name} tool`,
      parameters: { properties: { q: { type: 'string', description: 'query' } }, required: ['q'] },
      webhook_url: `https://tools.example.com/${name}`,
      ...extra,
    },
  });
  if (res.status !== 201) throw new Error(`tool create failed: ${JSON.stringify(res.body)}`);
  return res.body as { id: string; name: string };
}

/** A flow agent using tools in every place a tool can be referenced. */
async function buildFlowAgent(name: string) {
  const crm = await createTool(h, `crm_lookup_${name.replace(/-/g, '_')}`, { headers: { Authorization: 'Bearer crm-secret' }, timeout_secs: 5 });
  const book = await createTool(h, `book_slot_${name.replace(/-/g, '_')}`, { webhook_method: 'GET' });
  const notes = await createTool(h, `save_notes_${name.replace(/-/g, '_')}`);
  const unused = await createTool(h, `unused_${name.replace(/-/g, '_')}`);
  const agent = await h.request('POST', '/api/agents', {
    body: {
      name,
      prompt: 'Book appointments.',
      greeting: 'Hi {{first_name}}!',
      llm_provider: 'groq',
      llm_settings: { temperature: 0.4 },
      pipeline_settings: { min_words: 1, backchannel_phrases: { mode: 'replace', phrases: ['roger'] }, dictation_wait_secs: 1.5, noise_suppression: 'rnnoise' },
      pre_call_tool_ids: [crm.id],
      tool_ids: [notes.id],
      context_variables: { first_name: { type: 'string', description: 'first name' } },
      webhook_url: 'https://client.example.com/events',
      webhook_events: ['call_ended'],
    },
  });
  const flow = await h.request('PUT', `/api/agents/${agent.body.id}/flow`, {
    body: {
      nodes: [
        {
          node_key: 'greet',
          is_initial: true,
          role_messages: [{ role: 'system', content: 'You book appointments for {{first_name}}.' }],
          task_messages: [{ role: 'system', content: 'Ask for a date.' }],
          functions: [{ name: 'date_given', description: 'Caller named a date', next_node_key: 'book', properties: { date: { type: 'string' } }, required: ['date'] }],
          position_xy: { x: 1, y: 2 },
        },
        {
          node_key: 'book',
          tool_ids: [book.id],
          pre_actions: [{ type: 'call_tool', tool_id: crm.id, args: { purpose: 'booking' } }, { type: 'say', text: 'Checking.' }],
          functions: [{ name: 'booked', description: 'Booked', next_node_key: 'bye' }],
        },
        { node_key: 'bye', is_terminal: true, builtin_tools: ['end_call'], pre_actions: [{ type: 'end_call' }] },
      ],
    },
  });
  expect(flow.status).toBe(200);
  return { agent: agent.body, crm, book, notes, unused };
}

describe('GET /api/agents/{agent_id}/export', () => {
  it('exports the config, every referenced tool with its headers masked, and the flow nodes', async () => {
    const { agent, crm, book, notes } = await buildFlowAgent('exported');
    const res = await h.request('GET', `/api/agents/${agent.id}/export`);
    expect(res.status).toBe(200);
    const bundle = res.body;
    expect(Object.keys(bundle)).toEqual(['version', 'agent', 'tools', 'mcp_servers', 'flow_nodes', 'tests']);
    expect(bundle.version).toBe('1');
    for (const hidden of ['id', 'version', 'created_at', 'updated_at', 'webhook_secret', 'webhook_secret_encrypted', 'total_calls', 'flow_nodes_count']) {
      expect(bundle.agent).not.toHaveProperty(hidden);
    }
    expect(bundle.agent).toMatchObject({
      name: 'exported',
      prompt: 'Book appointments.',
      llm_provider: 'groq',
      llm_model: 'llama-3.1-8b-instant',
      pre_call_tool_ids: [crm.id],
      tool_ids: [notes.id],
      pipeline_settings: { min_words: 1, idle_warn_secs: 25, backchannel_phrases: { mode: 'replace', phrases: ['roger'] }, dictation_wait_secs: 1.5, noise_suppression: 'rnnoise' },
    });
    expect(bundle.tools.map((t: any) => t.name).sort()).toEqual([book.name, crm.name, notes.name].sort());
    expect(bundle.tools.find((t: any) => t.name === crm.name)).toEqual({
      id: crm.id,
      name: crm.name,
      description: `The ${crm.name} tool`,
      parameters: { type: 'object', properties: { q: { type: 'string', description: 'query' } }, required: ['q'] },
      webhook_url: `https://tools.example.com/${crm.name}`,
      webhook_method: 'POST',
      headers: { Authorization: '****cret' },
      timeout_secs: 5,
    });
    // An administrator who asks explicitly gets the header values in clear text.
    const withSecrets = await h.request('GET', `/api/agents/${agent.id}/export?include_secrets=true`);
    expect(withSecrets.status).toBe(200);
    expect(withSecrets.body.tools.find((t: any) => t.name === crm.name).headers).toEqual({ Authorization: 'Bearer crm-secret' });
    expect(bundle.flow_nodes.map((n: any) => n.node_key)).toEqual(['greet', 'book', 'bye']);
    expect(bundle.flow_nodes[1]).toEqual({
      node_key: 'book',
      position: 1,
      is_initial: false,
      is_terminal: false,
      role_messages: [],
      task_messages: [],
      functions: [{ name: 'booked', description: 'Booked', next_node_key: 'bye', properties: {}, required: [] }],
      tool_ids: [book.id],
      mcp_tools: [],
      knowledge_base_ids: [],
      knowledge_mode: 'auto',
      builtin_tools: [],
      pre_actions: [{ type: 'call_tool', tool_id: crm.id, args: { purpose: 'booking' } }, { type: 'say', text: 'Checking.' }],
      position_xy: null,
    });
  });

  it('answers 404 for an unknown agent and 401 without a token', async () => {
    expect((await h.request('GET', `/api/agents/${crypto.randomUUID()}/export`)).status).toBe(404);
    expect((await h.request('GET', `/api/agents/${crypto.randomUUID()}/export`, { token: null })).status).toBe(401);
    expect((await h.request('POST', '/api/agents/import', { token: null, body: {} })).status).toBe(401);
  });
});

describe('POST /api/agents/import', () => {
  it('reproduces agent, tools and flow in an empty installation, remapping every tool reference', async () => {
    const { agent } = await buildFlowAgent('travelling');
    const bundle = (await h.request('GET', `/api/agents/${agent.id}/export?include_secrets=true`)).body;

    const res = await target.request('POST', '/api/agents/import', { body: bundle });
    expect(res.status).toBe(201);
    expect(res.body.tools_created.sort()).toEqual(bundle.tools.map((t: any) => t.name).sort());
    expect(res.body.tools_reused).toEqual([]);
    expect(res.body.tools_without_secrets).toEqual([]);
    expect(res.body.flow_nodes_count).toBe(3);
    expect(res.body.agent).toMatchObject({ name: 'travelling', version: 1, flow_nodes_count: 3, total_calls: 0 });
    expect(res.body.agent.pipeline_settings).toEqual(bundle.agent.pipeline_settings);
    expect(res.body.agent).not.toHaveProperty('webhook_secret');
    const stored = await target.db.models.Agent.findByPk(res.body.agent.id);
    expect(target.box.decrypt(stored!.get('webhook_secret_encrypted') as string)).toMatch(/^whsec_/);

    // Tools exist in the target with new ids and the same definitions; headers are encrypted at rest.
    const targetTools = (await target.request('GET', '/api/tools')).body as any[];
    const idByName = new Map(targetTools.map((t) => [t.name, t.id]));
    const newId = (oldId: string) => idByName.get(bundle.tools.find((t: any) => t.id === oldId).name);
    for (const tool of bundle.tools) {
      const { id: oldId, headers: _headers, ...definition } = tool;
      const copy = targetTools.find((t) => t.name === tool.name);
      expect(copy).toMatchObject(definition);
      expect(copy.id).not.toBe(oldId);
    }
    const crmName = bundle.tools.find((t: any) => t.headers.Authorization).name;
    const sealed = (await target.db.models.Tool.findOne({ where: { name: crmName } }))!.get('headers_encrypted') as string;
    expect(sealed).not.toContain('crm-secret');
    expect(JSON.parse(target.box.decrypt(sealed))).toEqual({ Authorization: 'Bearer crm-secret' });

    // The re-exported bundle equals the original once tool ids are mapped.
    const again = (await target.request('GET', `/api/agents/${res.body.agent.id}/export?include_secrets=true`)).body;
    const remapped = JSON.parse(JSON.stringify(bundle).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => newId(id) ?? id));
    remapped.tools.sort((a: any, b: any) => a.name.localeCompare(b.name));
    again.tools.sort((a: any, b: any) => a.name.localeCompare(b.name));
    expect(again).toEqual(remapped);
    expect(again.agent.pre_call_tool_ids).toEqual([newId(bundle.agent.pre_call_tool_ids[0])]);
    expect(again.flow_nodes[1].pre_actions[0].tool_id).toBe(newId(bundle.flow_nodes[1].pre_actions[0].tool_id));
  });

  it('creates tools from a masked export without the header values it lacks, and says so', async () => {
    const { agent } = await buildFlowAgent('masked-export');
    const bundle = (await h.request('GET', `/api/agents/${agent.id}/export`)).body;
    const crmName = bundle.tools.find((t: any) => t.headers.Authorization).name;
    const res = await target.request('POST', '/api/agents/import', { body: bundle });
    expect(res.status).toBe(201);
    expect(res.body.tools_without_secrets).toEqual([crmName]);
    const stored = await target.db.models.Tool.findOne({ where: { name: crmName } });
    expect(stored!.get('headers_encrypted')).toBeNull();
  });

  it('answers 409 for an existing name, and with overwrite replaces config and nodes in place', async () => {
    const { agent, crm } = await buildFlowAgent('overwritten');
    const bundle = (await h.request('GET', `/api/agents/${agent.id}/export`)).body;
    const versionBefore = (await h.request('GET', `/api/agents/${agent.id}`)).body.version;

    const conflict = await h.request('POST', '/api/agents/import', { body: bundle });
    expect(conflict.status).toBe(409);
    expect(conflict.body.detail).toMatch(/"overwritten" already exists/);

    bundle.agent.prompt = 'A new prompt.';
    bundle.flow_nodes = [{ node_key: 'solo', is_initial: true, pre_actions: [{ type: 'call_tool', tool_id: crm.id }] }];
    const res = await h.request('POST', '/api/agents/import', { body: { ...bundle, overwrite: true } });
    expect(res.status).toBe(200);
    expect(res.body.agent).toMatchObject({ id: agent.id, prompt: 'A new prompt.', version: versionBefore + 1, flow_nodes_count: 1 });
    expect(res.body.tools_created).toEqual([]);
    expect(res.body.tools_reused.sort()).toEqual(bundle.tools.map((t: any) => t.name).sort());
    const flow = await h.request('GET', `/api/agents/${agent.id}/flow`);
    expect(flow.body.nodes.map((n: any) => n.node_key)).toEqual(['solo']);
    expect(await h.db.models.Tool.count({ where: { name: crm.name } })).toBe(1);
  });

  it('accepts bundle-local tool references and reuses existing tools by name without changing them', async () => {
    const existing = await createTool(target, 'weather_now', { description: 'Existing weather tool' });
    const res = await target.request('POST', '/api/agents/import', {
      body: {
        version: '1',
        agent: { name: 'handwritten', prompt: 'Use the tools.', tool_ids: ['weather', 'notes'], pre_call_tool_ids: ['notes'] },
        tools: [
          { id: 'weather', name: 'weather_now', description: 'Bundle weather', parameters: { properties: {} }, webhook_url: 'https://w.example.com' },
          { id: 'notes', name: 'take_notes', description: 'Notes', parameters: { properties: {} }, webhook_url: 'https://n.example.com', headers: { 'X-Key': 'k1' } },
        ],
        flow_nodes: [{ node_key: 'start', is_initial: true, tool_ids: ['notes'], pre_actions: [{ type: 'call_tool', tool_id: 'weather' }] }],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ tools_created: ['take_notes'], tools_reused: ['weather_now'], flow_nodes_count: 1 });
    const notesId = (await target.db.models.Tool.findOne({ where: { name: 'take_notes' } }))!.get('id');
    expect(res.body.agent.tool_ids).toEqual([existing.id, notesId]);
    expect(res.body.agent.pre_call_tool_ids).toEqual([notesId]);
    const node = (await target.request('GET', `/api/agents/${res.body.agent.id}/nodes/start`)).body;
    expect(node.tool_ids).toEqual([notesId]);
    expect(node.pre_actions).toEqual([{ type: 'call_tool', tool_id: existing.id }]);
    expect((await target.request('GET', `/api/tools/${existing.id}`)).body.description).toBe('Existing weather tool');
    expect((await target.request('GET', `/api/tools/${notesId}`)).body.headers).toEqual({ 'X-Key': '****' });
    const sealed = (await target.db.models.Tool.findByPk(notesId as string))!.get('headers_encrypted') as string;
    expect(JSON.parse(target.box.decrypt(sealed))).toEqual({ 'X-Key': 'k1' });
  });

  it('ignores response-only fields of an exported agent and nodes', async () => {
    const res = await target.request('POST', '/api/agents/import', {
      body: {
        version: '1',
        agent: { id: crypto.randomUUID(), name: 'from-elsewhere', prompt: 'p', created_at: '2024-01-01T00:00:00', total_calls: 9, flow_nodes_count: 1 },
        flow_nodes: [{ id: crypto.randomUUID(), agent_id: crypto.randomUUID(), node_key: 'only', is_initial: true, created_at: 'x' }],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.agent).toMatchObject({ name: 'from-elsewhere', total_calls: 0, flow_nodes_count: 1 });
  });

  it('rejects invalid bundles with 422 naming the field, creating nothing', async () => {
    const tool = { id: 't1', name: 'never_created', description: 'x', parameters: { properties: {} }, webhook_url: 'https://x.example.com' };
    const base = { version: '1', agent: { name: 'rejected', prompt: 'p' }, tools: [tool] };
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...base, version: '2' }, /^version: unsupported bundle version "2"; supported: "1"/],
      [{ ...base, version: 1 }, /^version: unsupported bundle version 1/],
      [{ ...base, agent: { name: 'rejected' } }, /^agent\.prompt: /],
      [{ ...base, agent: { name: 'bad name', prompt: 'p' } }, /^agent\.name: /],
      [{ ...base, agent: { ...base.agent, tool_ids: ['t2'] } }, /^agent\.tool_ids\.0: unknown tool reference "t2"/],
      [{ ...base, agent: { ...base.agent, tool_ids: [crypto.randomUUID()] } }, /^agent\.tool_ids\.0: unknown tool /],
      [{ ...base, flow_nodes: [{ node_key: 'a', is_initial: true, tool_ids: ['nope'] }] }, /^flow_nodes\.0\.tool_ids\.0: unknown tool reference "nope"/],
      [{ ...base, flow_nodes: [{ node_key: 'a' }] }, /^flow_nodes: no initial node/],
      [
        { ...base, flow_nodes: [{ node_key: 'a', is_initial: true, functions: [{ name: 'go', description: 'x', next_node_key: 'b' }] }] },
        /^flow_nodes\.0\.functions\.0\.next_node_key: /,
      ],
      [{ ...base, tools: [tool, { ...tool, name: 'other_name' }] }, /^tools\.1\.id: duplicate tool reference "t1"/],
      [{ ...base, tools: [{ ...tool, name: 'Not Snake' }] }, /^tools\.0\.name: /],
      [{ ...base, extra: true }, /unknown field\(s\): extra/],
    ];
    for (const [body, detail] of cases) {
      const res = await target.request('POST', '/api/agents/import', { body });
      expect({ body, status: res.status, detail: res.body.detail }).toEqual({ body, status: 422, detail: expect.stringMatching(detail) });
    }
    expect(await target.db.models.Agent.count({ where: { name: 'rejected' } })).toBe(0);
    expect(await target.db.models.Tool.count({ where: { name: 'never_created' } })).toBe(0);
  });
});
