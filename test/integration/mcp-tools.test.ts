/**
 * MCP servers as a tool source (docs/tools.md, MCP servers), end to end: the API (headers sealed
 * and masked, refresh, test, ownership, the outbound guard), and text calls whose LLM calls MCP
 * tools on a real MCP server built with the SDK (test/fakes/mcp-server.ts) through the durable
 * tool activity: context merged in, events naming server and tool, failures, timeouts, isError
 * and a server that is down given to the LLM as errors, allowed_tools and the per-node filter, and
 * no tool list fetched on the turn path.
 */
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server';
import { createAgent, createNodes } from '../support/fixtures';
import { createSession } from '../support/users';
import { events, h, hangUp, lastMessage, llm, say, startText, toolNames, useTextCallStack } from '../support/text-call-stack';

useTextCallStack();

const SECRET = 'Bearer mcp-secret-7731';
let crm: FakeMcpServer;

beforeAll(async () => {
  crm = await startFakeMcpServer({ requiredHeaders: { authorization: SECRET } });
});
afterAll(async () => {
  await crm?.stop();
});
beforeEach(() => crm.reset());

async function addServer(body: Record<string, unknown>, token?: string) {
  const res = await h.request('POST', '/api/mcp-servers', { body, ...(token ? { token } : {}) });
  expect(res.status).toBe(201);
  return res.body;
}

async function refresh(id: string, token?: string) {
  return h.request('POST', `/api/mcp-servers/${id}/refresh`, token ? { token } : {});
}

describe('the mcp_servers resource', () => {
  it('seals headers, masks them on read, refreshes the tool list, and keeps a masked header on PATCH', async () => {
    const server = await addServer({ name: 'crm_api', url: crm.url, headers: { Authorization: SECRET }, timeout_secs: 5 });
    expect(server).toMatchObject({ name: 'crm_api', headers: { Authorization: '****7731' }, tools: [], refreshed_at: null, allowed_tools: null });
    const [raw] = (await h.db.sequelize.query(`SELECT headers_encrypted FROM mcp_servers WHERE id = '${server.id}'`))[0] as any[];
    expect(raw.headers_encrypted).not.toContain('mcp-secret');

    const refreshed = await refresh(server.id);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.transport).toBe('streamable_http');
    const lookup = refreshed.body.tools.find((t: any) => t.name === 'lookup_customer');
    expect(lookup).toMatchObject({ ref: 'crm_api/lookup_customer', allowed: true, description: expect.stringContaining('Look up a customer') });
    expect(lookup.input_schema.properties.customer_id).toMatchObject({ type: 'string' });
    expect(JSON.stringify(refreshed.body)).not.toContain('mcp-secret');

    // The form sends back what it loaded: the masked value keeps the stored secret.
    const patched = await h.request('PATCH', `/api/mcp-servers/${server.id}`, { body: { headers: { Authorization: '****7731' }, allowed_tools: ['lookup_customer'] } });
    expect(patched.status).toBe(200);
    expect(patched.body.tools.filter((t: any) => t.allowed).map((t: any) => t.name)).toEqual(['lookup_customer']);
    expect((await refresh(server.id)).status).toBe(200);

    // The test operation calls a tool as a call would.
    const tested = await h.request('POST', `/api/mcp-servers/${server.id}/test`, { body: { tool: 'lookup_customer', args: { customer_id: 'C-9' } } });
    expect(tested.status).toBe(200);
    expect(tested.body).toMatchObject({ response: { customer_id: 'C-9', plan: 'gold' }, error: null });
    const failing = await h.request('POST', `/api/mcp-servers/${server.id}/test`, { body: { tool: 'check_stock', args: { sku: 'X1' } } });
    expect(failing.body.error).toBe('the tool reported an error: sku X1 is not in the catalogue');

    // Without the header the server answers 401: a 502 naming it.
    const bare = await addServer({ name: 'crm_bare', url: crm.url });
    const refused = await refresh(bare.id);
    expect(refused.status).toBe(502);
    expect(refused.body.detail).toMatch(/HTTP 401/);
  });

  it('speaks the older HTTP+SSE transport', async () => {
    const server = await addServer({ name: 'crm_sse', url: crm.sseUrl, headers: { Authorization: SECRET } });
    const refreshed = await refresh(server.id);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.transport).toBe('sse');
    expect(refreshed.body.tools.length).toBeGreaterThan(3);
  });

  it('refuses a private address through the outbound guard, and an unknown or disallowed tool in an agent', async () => {
    const server = await addServer({ name: 'intranet', url: 'http://10.0.0.5/mcp' });
    const res = await refresh(server.id);
    expect(res.status).toBe(422);
    expect(res.body.detail).toBe('url: blocked: 10.0.0.5 is a private address; allow it with WEBHOOK_ALLOWED_NETWORKS');

    const limited = await addServer({ name: 'crm_limited', url: crm.url, headers: { Authorization: SECRET }, allowed_tools: ['lookup_customer'] });
    expect((await refresh(limited.id)).status).toBe(200);
    const agent = (mcp_tools: string[]) => h.request('POST', '/api/agents', { body: { name: `a-${mcp_tools.length}-${Date.now()}`, prompt: 'p', mcp_tools } });
    expect((await agent(['crm_limited/explode'])).body.detail).toBe('mcp_tools.0: explode is not in the allowed_tools of MCP server crm_limited');
    expect((await agent(['crm_limited/nope'])).body.detail).toMatch(/^mcp_tools.0: MCP server crm_limited has no tool nope/);
    expect((await agent(['nowhere/x'])).body.detail).toBe('mcp_tools.0: unknown MCP server nowhere');
    const ok = await agent(['crm_limited/lookup_customer']);
    expect(ok.status).toBe(201);
    expect(ok.body.mcp_tools).toEqual(['crm_limited/lookup_customer']);
  });

  it("lets a member change only their own servers; deleting one removes its references", async () => {
    const owner = await createSession(h);
    const other = await createSession(h);
    const server = await addServer({ name: 'crm_member', url: crm.url, headers: { Authorization: SECRET } }, owner.token);
    expect((await refresh(server.id, other.token)).status).toBe(403);
    expect((await h.request('PATCH', `/api/mcp-servers/${server.id}`, { token: other.token, body: { timeout_secs: 3 } })).status).toBe(403);
    expect((await h.request('GET', `/api/mcp-servers/${server.id}`, { token: other.token })).body.headers).toEqual({ Authorization: '****7731' });
    expect((await refresh(server.id, owner.token)).status).toBe(200);
    const agent = await h.request('POST', '/api/agents', { token: owner.token, body: { name: 'member-mcp', prompt: 'p', mcp_tools: ['crm_member/lookup_customer'] } });
    expect(agent.status).toBe(201);
    expect((await h.request('DELETE', `/api/mcp-servers/${server.id}`, { token: other.token })).status).toBe(403);
    expect((await h.request('DELETE', `/api/mcp-servers/${server.id}`, { token: owner.token })).status).toBe(204);
    const after = await h.request('GET', `/api/agents/${agent.body.id}`);
    expect(after.body).toMatchObject({ mcp_tools: [], version: agent.body.version + 1 });
  });
});

describe('bundles', () => {
  it('carry the MCP servers an agent uses without their secrets, and import them by name', async () => {
    const server = await addServer({ name: 'crm_bundle', url: crm.url, headers: { Authorization: SECRET } });
    expect((await refresh(server.id)).status).toBe(200);
    const agent = await h.request('POST', '/api/agents', { body: { name: 'bundled-mcp', prompt: 'p', mcp_tools: ['crm_bundle/lookup_customer'] } });
    await h.request('PUT', `/api/agents/${agent.body.id}/flow`, { body: { nodes: [{ node_key: 'start', is_initial: true, mcp_tools: ['crm_bundle/check_stock'] }] } });
    const bundle = (await h.request('GET', `/api/agents/${agent.body.id}/export`)).body;
    expect(bundle.mcp_servers).toEqual([expect.objectContaining({ name: 'crm_bundle', url: crm.url, headers: { Authorization: '****7731' } })]);
    expect(bundle.flow_nodes[0].mcp_tools).toEqual(['crm_bundle/check_stock']);
    expect(JSON.stringify(bundle)).not.toContain('mcp-secret');

    // Into an installation without the server: created from the bundle, its secret left for the owner to set.
    expect((await h.request('DELETE', `/api/mcp-servers/${server.id}`)).status).toBe(204);
    const imported = await h.request('POST', '/api/agents/import', { body: { ...bundle, agent: { ...bundle.agent, name: 'bundled-mcp-2' } } });
    expect(imported.status).toBe(201);
    expect(imported.body).toMatchObject({ mcp_servers_created: ['crm_bundle'], mcp_servers_reused: [], mcp_servers_without_secrets: ['crm_bundle'] });
    expect(imported.body.agent.mcp_tools).toEqual(['crm_bundle/lookup_customer']);
    const again = await h.request('POST', '/api/agents/import', { body: { ...bundle, agent: { ...bundle.agent, name: 'bundled-mcp-3' } } });
    expect(again.body).toMatchObject({ mcp_servers_created: [], mcp_servers_reused: ['crm_bundle'] });
  });
});

describe('MCP tools in a call', () => {
  let serverName: string;
  beforeAll(async () => {
    serverName = 'crm';
    const server = await addServer({ name: serverName, url: crm.url, headers: { Authorization: SECRET }, timeout_secs: 1, allowed_tools: ['lookup_customer', 'explode', 'slow_report', 'check_stock', 'render_chart', 'strict_echo'] });
    expect((await refresh(server.id)).status).toBe(200);
  });

  it('runs the tool on the MCP server with the call context merged in, and gives the result to the LLM', async () => {
    await createAgent(h.db, h.box, { name: 'mcp-agent', prompt: 'Use crm__lookup_customer.', mcp_tools: ['crm/lookup_customer', 'crm/strict_echo'] });
    llm.setResponder((body) => {
      const last = lastMessage(body);
      if (last.role === 'user' && last.content.includes('echo')) return { tool_calls: [{ name: 'crm__strict_echo', arguments: { word: 'hi' } }] };
      if (last.role === 'user') return { tool_calls: [{ name: 'crm__lookup_customer', arguments: { customer_id: 'C-42' } }] };
      return { content: `Tool said: ${last.content}` };
    });
    const methodsBefore = crm.methods.length;
    const { call_id } = await startText('mcp-agent', { account: 'A-17' });
    const turn = await say(call_id, 'What plan am I on?');
    expect(turn.replies).toEqual(['Tool said: {"customer_id":"C-42","plan":"gold","balance":42}']);
    expect(crm.calls[0]).toMatchObject({
      tool: 'lookup_customer',
      args: { phone_number: '+14155550123', direction: 'inbound', account: 'A-17', customer_id: 'C-42' },
    });
    // A schema that forbids extra arguments gets only what it declares. The server restarted in
    // between (it forgot the session): the worker opens a new one and the call goes through.
    expect((await say(call_id, 'And again?')).replies).toHaveLength(1);
    crm.forgetSessions();
    const echo = await say(call_id, 'echo please');
    expect(echo.replies).toEqual(['Tool said: echo: hi']);
    expect(crm.calls[2]).toMatchObject({ tool: 'strict_echo', args: { word: 'hi' } });
    // The first two calls shared one session (the worker's pool); the third needed a new one.
    expect(crm.calls[1]!.session).toBe(crm.calls[0]!.session);
    expect(crm.calls[2]!.session).not.toBe(crm.calls[0]!.session);

    // The LLM saw the server's schemas, normalised: no $schema, top-level object.
    const offered = llm.requests[0]!.body.tools.find((t: any) => t.function.name === 'crm__lookup_customer').function;
    expect(offered.parameters).toEqual({ type: 'object', properties: { customer_id: { type: 'string', description: 'customer number' } }, required: ['customer_id'], additionalProperties: true });
    expect(toolNames(llm.requests[0]!.body)).toEqual(['crm__lookup_customer', 'crm__strict_echo', 'end_call']);

    await hangUp(call_id);
    const trace = await events(call_id);
    const called = trace.filter((e) => e.event_type === 'tool_called');
    expect(called[0]!.data).toEqual({ function: 'crm__lookup_customer', args: { customer_id: 'C-42' }, server: 'crm', tool: 'lookup_customer' });
    const result = trace.find((e) => e.event_type === 'tool_result')!.data;
    expect(result).toMatchObject({ function: 'crm__lookup_customer', server: 'crm', tool: 'lookup_customer', result: { plan: 'gold' }, error: null });
    expect(result.duration_ms).toBeGreaterThanOrEqual(0);
    // No tool list on the turn path; a session for the first tool call and one more after the
    // server forgot it.
    const during = crm.methods.slice(methodsBefore);
    expect(during).not.toContain('tools/list');
    expect(during.filter((m) => m === 'initialize')).toHaveLength(2);
    // The request the server refused (404, before reading it) was repeated on the new session.
    expect(during.filter((m) => m === 'tools/call')).toHaveLength(3);
  });

  it('gives a throwing tool, a timeout, isError and an image to the LLM sensibly, and the call carries on', async () => {
    await createAgent(h.db, h.box, { name: 'mcp-errors', mcp_tools: ['crm/explode', 'crm/slow_report', 'crm/check_stock', 'crm/render_chart'] });
    crm.slowMs = 2500;
    llm.setResponder((body) => {
      const last = lastMessage(body);
      if (last.role === 'user') return { tool_calls: [{ name: `crm__${last.content}`, arguments: last.content === 'check_stock' ? { sku: 'Z9' } : {} }] };
      return { content: `LLM got: ${last.content}` };
    });
    const { call_id } = await startText('mcp-errors');
    expect((await say(call_id, 'explode')).replies[0]).toBe(
      'LLM got: Error: the tool failed (the tool reported an error: database connection lost). Tell the caller you could not complete this right now.',
    );
    expect((await say(call_id, 'slow_report')).replies[0]).toMatch(/^LLM got: Error: the tool failed \(timeout after 1s\)/);
    expect((await say(call_id, 'check_stock')).replies[0]).toMatch(/^LLM got: Error: the tool failed \(the tool reported an error: sku Z9 is not in the catalogue\)/);
    expect((await say(call_id, 'render_chart')).replies[0]).toBe('LLM got: sales are up 12%\n[image/png image, 2 KB, not shown]');
    const turn = await say(call_id, 'check_stock');
    expect(turn.status).toBe('in_progress');
    await hangUp(call_id);
    const errors = (await events(call_id)).filter((e) => e.event_type === 'tool_result').map((e) => e.data.error);
    expect(errors).toEqual([
      'the tool reported an error: database connection lost',
      'timeout after 1s',
      'the tool reported an error: sku Z9 is not in the catalogue',
      null,
      'the tool reported an error: sku Z9 is not in the catalogue',
    ]);
  }, 30_000);

  it('tells the LLM when the MCP server is down', async () => {
    const down = await addServer({ name: 'gone', url: crm.url, headers: { Authorization: SECRET } });
    expect((await refresh(down.id)).status).toBe(200);
    // The URL changes under the stored list (what an outage looks like to the call).
    await h.db.models.McpServer.update({ url: 'http://127.0.0.1:9/mcp' }, { where: { id: down.id } });
    await createAgent(h.db, h.box, { name: 'mcp-down', mcp_tools: ['gone/lookup_customer'] });
    llm.setResponder((body) => {
      const last = lastMessage(body);
      if (last.role === 'user') return { tool_calls: [{ name: 'gone__lookup_customer', arguments: { customer_id: 'C-1' } }] };
      return { content: `LLM got: ${last.content.slice(0, 60)}` };
    });
    const { call_id } = await startText('mcp-down');
    const turn = await say(call_id, 'hello');
    expect(turn.replies[0]).toBe('LLM got: Error: the tool failed (connection refused). Tell the caller');
    expect(turn.status).toBe('in_progress');
    await hangUp(call_id);
  });

  it("offers a flow node's MCP tools only in that node", async () => {
    const agent = await createAgent(h.db, h.box, { name: 'mcp-flow', prompt: 'flow' });
    await createNodes(h.db, agent.id, [
      {
        node_key: 'greet',
        is_initial: true,
        functions: [{ name: 'to_billing', description: 'go to billing', properties: {}, required: [], next_node_key: 'billing' }],
      },
      { node_key: 'billing', mcp_tools: ['crm/lookup_customer'] },
    ]);
    llm.setResponder((body) => {
      const last = lastMessage(body);
      if (last.role === 'user' && last.content === 'lookup') return { tool_calls: [{ name: 'crm__lookup_customer', arguments: { customer_id: 'N-1' } }] };
      if (last.role === 'user') return { tool_calls: [{ name: 'to_billing', arguments: {} }] };
      return { content: `LLM got: ${last.content}` };
    });
    const { call_id } = await startText('mcp-flow');
    // In the first node the tool is neither offered nor run when the LLM names it anyway.
    expect((await say(call_id, 'lookup')).replies[0]).toBe('LLM got: Error: unknown function crm__lookup_customer.');
    expect(toolNames(llm.requests[0]!.body)).not.toContain('crm__lookup_customer');
    expect(crm.calls).toEqual([]);
    await say(call_id, 'billing please');
    const n = llm.requests.length;
    expect((await say(call_id, 'lookup')).replies[0]).toMatch(/^LLM got: \{"customer_id":"N-1"/);
    expect(toolNames(llm.requests[n]!.body)).toContain('crm__lookup_customer');
    await hangUp(call_id);
  });
});
