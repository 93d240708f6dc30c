/**
 * The platform as an MCP server (docs/mcp-server.md), driven by the SDK's own client over a real
 * socket: a member's API key creates an agent, runs a text test call and reads its transcript,
 * runs the agent's tests (an MCP tool mocked like a webhook tool) and reads the result; the REST
 * route's roles and ownership hold for every tool (another member's agent, an admin-only operation),
 * and /mcp without credentials is refused.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server';
import { waitForRun } from '../support/booking-agent';
import { createSession, type Session } from '../support/users';
import { h, lastMessage, llm, useTextCallStack } from '../support/text-call-stack';

useTextCallStack({ env: { OPENAI_API_KEY: 'sk-test' } });

let member: Session;
let apiKey: string;
let crm: FakeMcpServer;
const clients: Client[] = [];

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${h.api.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ type: string; text: string }> };
  const text = result.content[0]!.text;
  return { isError: result.isError === true, text, body: result.isError ? null : JSON.parse(text) };
}

beforeAll(async () => {
  member = await createSession(h);
  const key = await h.request('POST', '/api/auth/api-keys', { token: member.token, body: { name: 'mcp client' } });
  apiKey = key.body.key;
  expect(apiKey).toMatch(/^vap_/);
  crm = await startFakeMcpServer();
  const server = await h.request('POST', '/api/mcp-servers', { body: { name: 'crm', url: crm.url } });
  expect((await h.request('POST', `/api/mcp-servers/${server.body.id}/refresh`)).status).toBe(200);
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await crm?.stop();
});

it('lists the platform tools', async () => {
  const client = await connect(apiKey);
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(
    ['create_agent', 'end_call', 'get_agent', 'get_call', 'get_test_run', 'list_agents', 'list_calls', 'list_tools', 'place_outbound_call', 'run_agent_tests', 'send_test_message', 'start_test_call', 'update_agent'].sort(),
  );
});

it("lets a member's API key create an agent, talk to it in a text test call and read the transcript", async () => {
  const client = await connect(apiKey);
  llm.setResponder((body) => (lastMessage(body).role === 'user' ? { content: `You said: ${lastMessage(body).content}` } : { content: 'OK.' }));
  const created = await call(client, 'create_agent', { agent: { name: 'mcp-made', prompt: 'Be brief.', greeting: 'Hello from MCP.' } });
  expect(created.isError).toBe(false);
  expect(created.body).toMatchObject({ name: 'mcp-made', owner_id: member.id });

  const started = await call(client, 'start_test_call', { agent_name: 'mcp-made' });
  expect(started.body).toMatchObject({ greeting: 'Hello from MCP.' });
  const turn = await call(client, 'send_test_message', { call_id: started.body.call_id, text: 'ping' });
  expect(turn.body).toMatchObject({ replies: ['You said: ping'], status: 'in_progress' });
  await call(client, 'end_call', { call_id: started.body.call_id });
  const detail = await call(client, 'get_call', { call_id: started.body.call_id });
  expect(detail.body.status).toBe('completed');
  expect(detail.body.transcript.map((t: any) => [t.role, t.text])).toEqual([
    ['assistant', 'Hello from MCP.'],
    ['user', 'ping'],
    ['assistant', 'You said: ping'],
  ]);
  const listed = await call(client, 'list_calls', { filters: { agent_name: 'mcp-made' } });
  expect(listed.body.calls.map((c: any) => c.id)).toEqual([started.body.call_id]);

  // A validation error is the route's 422, as the tool's error.
  const invalid = await call(client, 'create_agent', { agent: { name: 'Not A Slug!', prompt: 'p' } });
  expect(invalid.isError).toBe(true);
  expect(invalid.text).toMatch(/^HTTP 422: name:/);
});

it("enforces the REST route's roles and ownership: another member's agent, an admin-only operation", async () => {
  const other = await createSession(h);
  const theirs = await h.request('POST', '/api/agents', { token: other.token, body: { name: 'not-yours', prompt: 'p' } });
  const client = await connect(apiKey);
  const update = await call(client, 'update_agent', { agent_id: theirs.body.id, changes: { prompt: 'hijacked' } });
  expect(update).toMatchObject({ isError: true, text: 'HTTP 403: Only the owner of this agent or an administrator may change it' });
  expect((await h.request('GET', `/api/agents/${theirs.body.id}`)).body.prompt).toBe('p');
  const outbound = await call(client, 'place_outbound_call', { call: { agent_name: 'not-yours', phone_number: '+14155550100' } });
  expect(outbound).toMatchObject({ isError: true, text: 'HTTP 403: Administrator role required' });
  // Reading agents is a member's right on REST too (docs/security.md, Roles): the same here.
  expect((await call(client, 'get_agent', { agent_id: theirs.body.id })).body.name).toBe('not-yours');
  // A JWT works as well as an API key.
  const withJwt = await connect(member.token);
  expect((await call(withJwt, 'list_agents')).isError).toBe(false);
});

it("runs an agent's tests with an MCP tool mocked like a webhook tool, and reads the result", async () => {
  const client = await connect(apiKey);
  const agent = await call(client, 'create_agent', { agent: { name: 'mcp-tested', prompt: 'Look customers up.', mcp_tools: ['crm/lookup_customer'] } });
  expect(agent.isError).toBe(false);
  const test = await h.request('POST', `/api/agents/${agent.body.id}/tests`, {
    token: member.token,
    body: {
      name: 'looks up',
      kind: 'scripted',
      script: ['Which plan am I on? I am C-7'],
      tool_mocks: { 'crm/lookup_customer': [{ plan: 'silver' }] },
      expectations: [{ type: 'tool_called', tool: 'crm__lookup_customer', args: { customer_id: 'C-7' } }, { type: 'said', phrase: 'silver' }],
    },
  });
  expect(test.status).toBe(201);
  llm.setResponder((body) => {
    const last = lastMessage(body);
    if (last.role === 'user') return { tool_calls: [{ name: 'crm__lookup_customer', arguments: { customer_id: 'C-7' } }] };
    if (last.role === 'tool') return { content: `You are on the ${JSON.parse(last.content).plan} plan.` };
    return { content: 'OK.' };
  });
  const started = await call(client, 'run_agent_tests', { agent_id: agent.body.id });
  expect(started.isError).toBe(false);
  await waitForRun(h, started.body.id, 30_000);
  const run = await call(client, 'get_test_run', { run_id: started.body.id });
  expect(run.body).toMatchObject({ status: 'completed', passed: true });
  // Mocked: the MCP server was not called.
  expect(crm.calls).toEqual([]);
}, 40_000);

it('refuses /mcp without valid credentials', async () => {
  const anonymous = await fetch(`${h.api.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
  expect(anonymous.status).toBe(401);
  expect(await anonymous.json()).toEqual({ detail: 'Missing bearer token' });
  await expect(connect('vap_not-a-real-key')).rejects.toThrow(/Invalid or revoked API key/);
  expect((await fetch(`${h.api.url}/mcp`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(405);
});

it('answers as its OpenAPI entry documents: JSON-RPC results, transport errors and {detail} errors', async () => {
  const doc = (await h.request('GET', '/api/openapi.json', { token: null })).body;
  const op = doc.paths['/mcp'].post;
  expect(op.operationId).toBe('postMcp');
  // Every tool the server has is named in the entry.
  for (const name of ['create_agent', 'start_test_call', 'get_call', 'run_agent_tests']) expect(op.description).toContain(`\`${name}\``);
  const documented = Object.keys(op.responses).map(Number);
  const send = async (body: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${h.api.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const listed = await send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }));
  expect(listed).toMatchObject({ status: 200, body: { jsonrpc: '2.0', id: 7, result: { tools: expect.any(Array) } } });
  const notified = await send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  expect(notified).toEqual({ status: 202, body: null });
  const unknown = await send(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'no/such' }));
  expect(unknown).toMatchObject({ status: 200, body: { id: 8, error: { code: -32601 } } });
  const malformed = await send('{"jsonrpc": ');
  expect(malformed).toEqual({ status: 400, body: { detail: expect.any(String) } });
  const notRpc = await send(JSON.stringify({ hello: 'world' }));
  // Refusals carry the JSON-RPC error an MCP client reads and the `detail` every API error has.
  expect(notRpc).toMatchObject({ status: 400, body: { jsonrpc: '2.0', error: { code: expect.any(Number) }, detail: expect.any(String) } });
  const unacceptable = await send(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }), { accept: 'application/json' });
  expect(unacceptable).toMatchObject({ status: 406, body: { jsonrpc: '2.0', error: { message: expect.stringMatching(/text\/event-stream/) }, detail: expect.stringMatching(/Accept/) } });
  const wrongType = await send(JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/list' }), { 'content-type': 'text/plain' });
  expect(wrongType).toMatchObject({ status: 415, body: { detail: expect.stringMatching(/Content-Type/) } });
  for (const status of [listed, notified, unknown, malformed, notRpc, unacceptable, wrongType].map((r) => r.status)) expect(documented).toContain(status);
});
