import crypto from 'node:crypto';
import { startHarness, type Harness } from '../support/harness';
import { inlineRefs } from '../support/openapi-doc';

let h: Harness;
let toolId: string;
beforeAll(async () => {
  h = await startHarness();
  const tool = await h.request('POST', '/api/tools', {
    body: {
      name: 'fetch_account',
      description: 'Fetch the caller account',
      parameters: { properties: { phone: { type: 'string' } }, required: [] },
      webhook_url: 'http://127.0.0.1:9/account',
    },
  });
  toolId = tool.body.id;
});
afterAll(async () => {
  await h.stop();
});

async function createAgent(name: string) {
  const res = await h.request('POST', '/api/agents', { body: { name, prompt: 'Flow agent' } });
  if (res.status !== 201) throw new Error(`create failed: ${JSON.stringify(res.body)}`);
  return res.body as { id: string; version: number };
}

const version = async (agentId: string) => (await h.request('GET', `/api/agents/${agentId}`)).body.version as number;

/** A three-node support flow: greet -> (billing | done), billing -> done. */
function supportFlow() {
  return [
    {
      node_key: 'greet',
      is_initial: true,
      role_messages: [{ role: 'system', content: 'You are the support line of ACME for {{first_name}}.' }],
      task_messages: [{ role: 'system', content: 'Ask what the caller needs.' }],
      functions: [
        {
          name: 'route_billing',
          description: 'The caller has a billing question',
          next_node_key: 'billing',
          properties: { topic: { type: 'string', description: 'short topic' } },
          required: ['topic'],
        },
        { name: 'finish', description: 'Nothing else needed', next_node_key: 'done' },
      ],
      tool_ids: [toolId],
      pre_actions: [
        { type: 'call_tool', tool_id: toolId, args: { source: 'flow' } },
        { type: 'say', text: 'One moment, {{first_name}}.' },
      ],
      position_xy: { x: 0, y: 0 },
    },
    {
      node_key: 'billing',
      task_messages: [{ role: 'system', content: 'Help with the bill.' }],
      functions: [
        { name: 'capture_amount', description: 'Record the disputed amount', properties: { amount: { type: 'number' } } },
        { name: 'resolved', description: 'Billing question resolved', next_node_key: 'done' },
      ],
    },
    { node_key: 'done', is_terminal: true, builtin_tools: ['end_call'], pre_actions: [{ type: 'say', text: 'Goodbye!' }, { type: 'end_call' }] },
  ];
}

describe('PUT and GET /api/agents/{agent_id}/flow', () => {
  it('stores a complete graph in order with every node field, and counts the agent as a flow agent', async () => {
    const agent = await createAgent('support-flow');
    const put = await h.request('PUT', `/api/agents/${agent.id}/flow`, { body: { nodes: supportFlow() } });
    expect(put.status).toBe(200);
    expect(put.body.problems).toEqual([]);
    expect(put.body.nodes.map((n: any) => [n.node_key, n.position])).toEqual([
      ['greet', 0],
      ['billing', 1],
      ['done', 2],
    ]);
    const greet = put.body.nodes[0];
    expect(greet).toMatchObject({
      agent_id: agent.id,
      is_initial: true,
      is_terminal: false,
      tool_ids: [toolId],
      builtin_tools: [],
      position_xy: { x: 0, y: 0 },
      pre_actions: [
        { type: 'call_tool', tool_id: toolId, args: { source: 'flow' } },
        { type: 'say', text: 'One moment, {{first_name}}.' },
      ],
    });
    expect(greet.functions[1]).toEqual({ name: 'finish', description: 'Nothing else needed', next_node_key: 'done', properties: {}, required: [] });
    expect(greet.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(greet.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    expect(put.body.nodes[1]).toMatchObject({ is_initial: false, position_xy: null, pre_actions: [] });
    expect(put.body.nodes[2]).toMatchObject({ is_terminal: true, builtin_tools: ['end_call'] });

    const get = await h.request('GET', `/api/agents/${agent.id}/flow`);
    expect(get.body).toEqual(put.body);
    const fetched = await h.request('GET', `/api/agents/${agent.id}`);
    expect(fetched.body).toMatchObject({ flow_nodes_count: 3, version: 2 });

    // Replacing the graph removes nodes that are not in it any more.
    const replaced = await h.request('PUT', `/api/agents/${agent.id}/flow`, { body: { nodes: [{ node_key: 'only', is_initial: true }] } });
    expect(replaced.body.nodes.map((n: any) => n.node_key)).toEqual(['only']);
    expect(await version(agent.id)).toBe(3);

    // An empty graph turns the agent back into a freeform agent.
    const empty = await h.request('PUT', `/api/agents/${agent.id}/flow`, { body: { nodes: [] } });
    expect(empty.body).toEqual({ nodes: [], problems: [] });
    expect((await h.request('GET', `/api/agents/${agent.id}`)).body.flow_nodes_count).toBe(0);
  });

  it('orders nodes by explicit position', async () => {
    const agent = await createAgent('positions');
    const nodes = [
      { node_key: 'c', position: 5, is_terminal: true },
      { node_key: 'a', position: 1, is_initial: true, functions: [{ name: 'next', description: 'go on', next_node_key: 'b' }] },
      { node_key: 'b', position: 2, functions: [{ name: 'next', description: 'go on', next_node_key: 'c' }] },
    ];
    const put = await h.request('PUT', `/api/agents/${agent.id}/flow`, { body: { nodes } });
    expect(put.status).toBe(200);
    expect(put.body.nodes.map((n: any) => n.node_key)).toEqual(['a', 'b', 'c']);
  });

  it('rejects invalid graphs with 422 naming the field, leaving the stored graph untouched', async () => {
    const agent = await createAgent('strict-graph');
    await h.request('PUT', `/api/agents/${agent.id}/flow`, { body: { nodes: supportFlow() } });
    const ghost = crypto.randomUUID();
    const start = { node_key: 'start', is_initial: true };
    const cases: Array<[unknown[], RegExp]> = [
      [[start, { node_key: 'start' }], /^nodes\.1\.node_key: duplicate node_key "start"/],
      [[{ node_key: 'a' }], /^nodes: no initial node/],
      [[start, { node_key: 'b', is_initial: true }], /^nodes\.1\.is_initial: more than one initial node: start, b/],
      [
        [{ ...start, functions: [{ name: 'go', description: 'go', next_node_key: 'nowhere' }] }],
        /^nodes\.0\.functions\.0\.next_node_key: node "start" function "go" points to unknown node "nowhere"/,
      ],
      [
        [{ ...start, functions: [{ name: 'go', description: 'go', next_node_key: 'b' }] }, { node_key: 'b' }, { node_key: 'island' }, { node_key: 'rock' }],
        /^nodes: unreachable from the initial node "start": island, rock$/,
      ],
      [[{ ...start, tool_ids: [ghost] }], new RegExp(`^nodes\\.0\\.tool_ids\\.0: unknown tool ${ghost}`)],
      [[{ ...start, pre_actions: [{ type: 'call_tool', tool_id: ghost }] }], new RegExp(`^nodes\\.0\\.pre_actions\\.0\\.tool_id: unknown tool ${ghost}`)],
      [[{ ...start, builtin_tools: ['hold_music'] }], /^nodes\.0\.builtin_tools\.0: /],
      [[{ ...start, functions: [{ name: 'GoNext', description: 'x' }] }], /^nodes\.0\.functions\.0\.name: must be snake_case/],
      [
        [{ ...start, functions: [{ name: 'go', description: 'x' }, { name: 'go', description: 'y' }] }],
        /^nodes\.0\.functions\.1\.name: duplicate function name "go"/,
      ],
      [[{ ...start, functions: [{ name: 'end_call', description: 'x' }] }], /^nodes\.0\.functions\.0\.name: "end_call" is a builtin tool name/],
      [[{ ...start, tool_ids: [toolId], functions: [{ name: 'fetch_account', description: 'x' }] }], /^nodes\.0\.functions\.0\.name: "fetch_account" is also the name of a tool/],
      [[{ ...start, functions: [{ name: 'go', description: 'x', required: ['missing'] }] }], /^nodes\.0\.functions\.0\.required\.0: "missing" is not one of the properties/],
      [[{ ...start, pre_actions: [{ type: 'say' }] }], /^nodes\.0\.pre_actions\.0\.text: /],
      [[{ ...start, pre_actions: [{ type: 'dance' }] }], /^nodes\.0\.pre_actions\.0\.type: type must be one of say, call_tool, end_call/],
      [[{ ...start, pre_actions: [{ type: 'end_call', text: 'bye' }] }], /^nodes\.0\.pre_actions\.0: unknown field\(s\): text/],
      [[{ ...start, role_messages: [{ role: 'robot', content: 'x' }] }], /^nodes\.0\.role_messages\.0\.role: /],
      [[{ ...start, position_xy: { x: 'left' } }], /^nodes\.0\.position_xy\.x: /],
      [[{ ...start, node_key: 'has space' }], /^nodes\.0\.node_key: /],
      [[{ ...start, colour: 'red' }], /^nodes\.0: unknown field\(s\): colour/],
    ];
    for (const [nodes, detail] of cases) {
      const res = await h.request('PUT', `/api/agents/${agent.id}/flow`, { body: { nodes } });
      expect({ nodes, status: res.status, detail: res.body.detail }).toEqual({ nodes, status: 422, detail: expect.stringMatching(detail) });
    }
    const after = await h.request('GET', `/api/agents/${agent.id}/flow`);
    expect(after.body.nodes.map((n: any) => n.node_key)).toEqual(['greet', 'billing', 'done']);
    expect(await version(agent.id)).toBe(2);
  });

  it('answers 404 for an unknown agent and 401 without a token', async () => {
    const id = crypto.randomUUID();
    expect((await h.request('GET', `/api/agents/${id}/flow`)).status).toBe(404);
    expect((await h.request('PUT', `/api/agents/${id}/flow`, { body: { nodes: [] } })).status).toBe(404);
    expect((await h.request('GET', `/api/agents/${id}/nodes`)).status).toBe(404);
    expect((await h.request('POST', `/api/agents/${id}/nodes`, { body: { node_key: 'x' } })).status).toBe(404);
    expect((await h.request('GET', `/api/agents/${id}/nodes/x`)).status).toBe(404);
    for (const [method, path] of [
      ['GET', `/api/agents/${id}/flow`],
      ['PUT', `/api/agents/${id}/flow`],
      ['GET', `/api/agents/${id}/nodes`],
      ['POST', `/api/agents/${id}/nodes`],
      ['GET', `/api/agents/${id}/nodes/x`],
      ['PATCH', `/api/agents/${id}/nodes/x`],
      ['DELETE', `/api/agents/${id}/nodes/x`],
    ]) {
      expect((await h.request(method!, path!, { token: null })).status).toBe(401);
    }
  });
});

describe('single-node endpoints', () => {
  it('builds a graph node by node, reporting its problems until it is complete', async () => {
    const agent = await createAgent('node-by-node');
    const base = `/api/agents/${agent.id}/nodes`;

    const first = await h.request('POST', base, {
      body: { node_key: 'ask', functions: [{ name: 'answered', description: 'Caller answered', next_node_key: 'thanks' }] },
    });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ node_key: 'ask', position: 0, is_initial: false, agent_id: agent.id });
    let flow = await h.request('GET', `/api/agents/${agent.id}/flow`);
    expect(flow.body.problems).toEqual(['no initial node: set is_initial on the entry node', 'node "ask" function "answered" points to unknown node "thanks"']);

    const dup = await h.request('POST', base, { body: { node_key: 'ask' } });
    expect(dup.status).toBe(409);
    expect(dup.body.detail).toBe('A node with node_key "ask" already exists in this agent');

    expect((await h.request('POST', base, { body: { node_key: 'thanks', is_terminal: true, builtin_tools: ['end_call'] } })).body.position).toBe(1);
    const initial = await h.request('PATCH', `${base}/ask`, { body: { is_initial: true } });
    expect(initial.status).toBe(200);
    expect(initial.body.is_initial).toBe(true);
    flow = await h.request('GET', `/api/agents/${agent.id}/flow`);
    expect(flow.body.problems).toEqual([]);

    const second = await h.request('POST', base, { body: { node_key: 'other', is_initial: true } });
    expect(second.status).toBe(422);
    expect(second.body.detail).toBe('is_initial: node "ask" is already the initial node; unset it first');
    expect((await h.request('POST', base, { body: { node_key: 'orphan' } })).status).toBe(201);
    flow = await h.request('GET', `/api/agents/${agent.id}/flow`);
    expect(flow.body.problems).toEqual(['unreachable from the initial node "ask": orphan']);

    const list = await h.request('GET', base);
    expect(list.body.map((n: any) => n.node_key)).toEqual(['ask', 'thanks', 'orphan']);
    const one = await h.request('GET', `${base}/thanks`);
    expect(one.body).toMatchObject({ node_key: 'thanks', is_terminal: true, builtin_tools: ['end_call'] });
    expect((await h.request('GET', `${base}/nope`)).status).toBe(404);
    expect((await h.request('GET', `${base}/nope`)).body.detail).toBe('Flow node not found');

    // POST + POST + PATCH + POST after creation (version 1) and a rejected POST in between.
    expect(await version(agent.id)).toBe(5);
  });

  it('keeps at most one initial node under concurrent requests', async () => {
    const agent = await createAgent('racing');
    const results = await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((key) => h.request('POST', `/api/agents/${agent.id}/nodes`, { body: { node_key: key, is_initial: true } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 422, 422, 422, 422]);
    expect(await h.db.models.FlowNode.count({ where: { agent_id: agent.id, is_initial: true } })).toBe(1);
    expect(await version(agent.id)).toBe(2);
  });

  it('renames a node together with the transitions that point at it', async () => {
    const agent = await createAgent('renamer');
    await h.request('PUT', `/api/agents/${agent.id}/flow`, {
      body: {
        nodes: [
          { node_key: 'start', is_initial: true, functions: [{ name: 'next', description: 'go', next_node_key: 'middle' }] },
          { node_key: 'middle', functions: [{ name: 'again', description: 'loop', next_node_key: 'middle' }, { name: 'back', description: 'b', next_node_key: 'start' }] },
        ],
      },
    });
    const taken = await h.request('PATCH', `/api/agents/${agent.id}/nodes/middle`, { body: { node_key: 'start' } });
    expect(taken.status).toBe(409);

    const res = await h.request('PATCH', `/api/agents/${agent.id}/nodes/middle`, { body: { node_key: 'centre', position_xy: { x: 10, y: 20 } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ node_key: 'centre', position_xy: { x: 10, y: 20 } });
    expect(res.body.functions.map((f: any) => f.next_node_key)).toEqual(['centre', 'start']);
    const flow = await h.request('GET', `/api/agents/${agent.id}/flow`);
    expect(flow.body.nodes[0].functions[0].next_node_key).toBe('centre');
    expect(flow.body.problems).toEqual([]);
    expect((await h.request('GET', `/api/agents/${agent.id}/nodes/middle`)).status).toBe(404);
  });

  it('validates a patched node as a whole: shape, tools, builtins, function names', async () => {
    const agent = await createAgent('node-patch');
    await h.request('PUT', `/api/agents/${agent.id}/flow`, { body: { nodes: [{ node_key: 'start', is_initial: true }] } });
    expect((await h.request('POST', `/api/agents/${agent.id}/nodes`, { body: { node_key: 'spare', position: 9 } })).status).toBe(201);
    const url = `/api/agents/${agent.id}/nodes/spare`;
    const ghost = crypto.randomUUID();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ is_initial: true }, /^is_initial: node "start" is already the initial node/],
      [{ tool_ids: [ghost] }, new RegExp(`^tool_ids\\.0: unknown tool ${ghost}`)],
      [{ pre_actions: [{ type: 'call_tool', tool_id: ghost }] }, new RegExp(`^pre_actions\\.0\\.tool_id: unknown tool ${ghost}`)],
      [{ builtin_tools: ['hang_up'] }, /^builtin_tools\.0: /],
      [{ functions: [{ name: 'a', description: 'x' }, { name: 'a', description: 'y' }] }, /^functions\.1\.name: duplicate function name/],
      [{ functions: [{ name: 'Bad Name', description: 'x' }] }, /^functions\.0\.name: must be snake_case/],
      [{ position: -1 }, /^position: /],
      [{ is_terminal: 'yes' }, /^is_terminal: /],
      [{ colour: 'red' }, /unknown field\(s\): colour/],
    ];
    for (const [body, detail] of cases) {
      const res = await h.request('PATCH', url, { body });
      expect({ body, status: res.status, detail: res.body.detail }).toEqual({ body, status: 422, detail: expect.stringMatching(detail) });
    }
    const ok = await h.request('PATCH', url, {
      body: { tool_ids: [toolId], pre_actions: [{ type: 'call_tool', tool_id: toolId }, { type: 'end_call' }], task_messages: [{ role: 'system', content: 'Wrap up' }] },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ node_key: 'spare', position: 9, tool_ids: [toolId], task_messages: [{ role: 'system', content: 'Wrap up' }] });
    expect((await h.request('PATCH', `/api/agents/${agent.id}/nodes/absent`, { body: { is_terminal: true } })).status).toBe(404);
  });

  it('deletes a node, leaving transitions to it reported as problems, and bumps the version', async () => {
    const agent = await createAgent('node-delete');
    await h.request('PUT', `/api/agents/${agent.id}/flow`, { body: { nodes: supportFlow() } });
    const before = await version(agent.id);
    const res = await h.request('DELETE', `/api/agents/${agent.id}/nodes/billing`);
    expect(res.status).toBe(204);
    expect(await version(agent.id)).toBe(before + 1);
    const flow = await h.request('GET', `/api/agents/${agent.id}/flow`);
    expect(flow.body.nodes.map((n: any) => n.node_key)).toEqual(['greet', 'done']);
    expect(flow.body.problems).toEqual(['node "greet" function "route_billing" points to unknown node "billing"']);
    expect((await h.request('DELETE', `/api/agents/${agent.id}/nodes/billing`)).status).toBe(404);
  });

  it('loses the tool references of nodes when the tool is deleted', async () => {
    const agent = await createAgent('tool-gone');
    const tool = await h.request('POST', '/api/tools', {
      body: { name: 'short_lived', description: 'x', parameters: { properties: {}, required: [] }, webhook_url: 'http://127.0.0.1:9/x' },
    });
    await h.request('PUT', `/api/agents/${agent.id}/flow`, {
      body: { nodes: [{ node_key: 'start', is_initial: true, tool_ids: [tool.body.id], pre_actions: [{ type: 'call_tool', tool_id: tool.body.id }] }] },
    });
    expect((await h.request('DELETE', `/api/tools/${tool.body.id}`)).status).toBe(204);
    const flow = await h.request('GET', `/api/agents/${agent.id}/flow`);
    expect(flow.body.nodes[0]).toMatchObject({ tool_ids: [], pre_actions: [] });
  });
});

describe('OpenAPI', () => {
  it('documents the flow endpoints', async () => {
    const doc = inlineRefs((await h.request('GET', '/api/openapi.json')).body);
    expect(Object.keys(doc.paths['/api/agents/{agent_id}/flow'])).toEqual(['get', 'put']);
    expect(Object.keys(doc.paths['/api/agents/{agent_id}/nodes/{node_key}'])).toEqual(['get', 'patch', 'delete']);
    const preActions = JSON.stringify(doc.paths['/api/agents/{agent_id}/nodes'].post.requestBody);
    expect(preActions).toContain('call_tool');
  });
});
