import net from 'node:net';
import { startHarness, type Harness } from '../support/harness';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver';
import { TOOL_TIMEOUT_DEFAULT_SECS, TOOL_TIMEOUT_MAX_SECS } from '../../src/shared/catalog';

let h: Harness;
let hook: WebhookReceiver;
beforeAll(async () => {
  h = await startHarness();
  hook = await startWebhookReceiver();
});
afterAll(async () => {
  await hook.stop();
  await h.stop();
});
beforeEach(() => hook.reset());

const lookupTool = (overrides: Record<string, unknown> = {}) => ({
  name: 'lookup_order',
  description: 'Look up an order by its number when the caller asks about an order',
  parameters: {
    properties: { order_id: { type: 'string', description: 'the order number' }, verbose: { type: 'boolean' } },
    required: ['order_id'],
  },
  webhook_url: `${hook.url}/orders`,
  ...overrides,
});

async function createTool(overrides: Record<string, unknown> = {}) {
  const res = await h.request('POST', '/api/tools', { body: lookupTool(overrides) });
  expect(res.status).toBe(201);
  return res.body;
}

describe('tool CRUD', () => {
  it('creates a tool with defaults, lists it and gets it by id', async () => {
    const tool = await createTool({ name: 'crud_defaults' });
    expect(tool).toMatchObject({
      name: 'crud_defaults',
      webhook_method: 'POST',
      headers: {},
      timeout_secs: TOOL_TIMEOUT_DEFAULT_SECS,
      parameters: { properties: { order_id: { type: 'string', description: 'the order number' } }, required: ['order_id'] },
    });
    expect(tool.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(tool.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    expect(tool.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);

    const one = await h.request('GET', `/api/tools/${tool.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(tool);
    const list = await h.request('GET', '/api/tools');
    expect(list.status).toBe(200);
    expect(list.body.map((t: any) => t.id)).toContain(tool.id);
  });

  it('stores headers encrypted and answers them masked', async () => {
    const headers = { Authorization: 'Bearer sk-client-secret-123', 'X-Tenant': 'acme' };
    const tool = await createTool({ name: 'crud_headers', headers });
    expect(tool.headers).toEqual({ Authorization: '****-123', 'X-Tenant': '****' });
    expect((await h.request('GET', `/api/tools/${tool.id}`)).body.headers).toEqual(tool.headers);
    const row = await h.db.models.Tool.findByPk(tool.id);
    const sealed = row!.get('headers_encrypted') as string;
    expect(sealed).toMatch(/^v1:/);
    expect(sealed).not.toContain('sk-client-secret-123');
    expect(JSON.parse(h.box.decrypt(sealed))).toEqual(headers);

    // A form that sends the masked values back keeps the stored secrets; a new value replaces one.
    const patched = await h.request('PATCH', `/api/tools/${tool.id}`, { body: { headers: { ...tool.headers, 'X-Tenant': 'globex' } } });
    expect(patched.status).toBe(200);
    const after = (await h.db.models.Tool.findByPk(tool.id))!.get('headers_encrypted') as string;
    expect(JSON.parse(h.box.decrypt(after))).toEqual({ Authorization: 'Bearer sk-client-secret-123', 'X-Tenant': 'globex' });
  });

  it('rejects a duplicate name with 409', async () => {
    await createTool({ name: 'crud_duplicate' });
    const dup = await h.request('POST', '/api/tools', { body: lookupTool({ name: 'crud_duplicate' }) });
    expect(dup.status).toBe(409);
    expect(dup.body.detail).toMatch(/crud_duplicate/);
  });

  it.each([
    [{ name: 'Lookup Order' }, /^name: /],
    [{ name: '1lookup' }, /^name: /],
    [{ name: 'a'.repeat(65) }, /^name: /],
    [{ description: '' }, /^description: /],
    [{ webhook_url: 'ftp://example.com/x' }, /^webhook_url: /],
    [{ webhook_url: 'not a url' }, /^webhook_url: /],
    [{ webhook_method: 'PUT' }, /^webhook_method: /],
    [{ timeout_secs: 0 }, /^timeout_secs: /],
    [{ timeout_secs: TOOL_TIMEOUT_MAX_SECS + 1 }, /^timeout_secs: /],
    [{ timeout_secs: 2.5 }, /^timeout_secs: /],
    [{ headers: { 'X-Count': 3 } }, /^headers\.X-Count: /],
    [{ headers: { 'bad header': 'x' } }, /^headers\.bad header: /],
    [{ parameters: undefined }, /^parameters: /],
    [{ parameters: { properties: { q: { type: 'text' } } } }, /^parameters\.properties\.q\.type: /],
    [{ parameters: { properties: { q: { type: 'string' } }, required: ['missing'] } }, /^parameters\.required\.0: "missing" is not one of the properties/],
    [{ parameters: { properties: { 'has space': { type: 'string' } } } }, /^parameters\.properties\.has space: /],
  ])('rejects invalid input %j with 422 naming the field', async (overrides, detail) => {
    const res = await h.request('POST', '/api/tools', { body: lookupTool(overrides) });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(detail);
  });

  it('accepts every JSON Schema parameter type and keeps extra keywords such as enum', async () => {
    const properties = {
      s: { type: 'string', enum: ['a', 'b'] },
      n: { type: 'number' },
      i: { type: 'integer' },
      b: { type: 'boolean' },
      o: { type: 'object' },
      a: { type: 'array', items: { type: 'string' } },
    };
    const tool = await createTool({ name: 'all_types', parameters: { properties } });
    expect(tool.parameters).toEqual({ type: 'object', properties, required: [] });
  });

  it('keeps a parameters schema whole: "type": "object" and its other keywords, as sent', async () => {
    const parameters = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false, description: 'a search' };
    const tool = await createTool({ name: 'whole_schema', parameters });
    expect(tool.parameters).toEqual(parameters);
    expect((await h.request('GET', `/api/tools/${tool.id}`)).body.parameters).toEqual(parameters);
    const wrongType = await h.request('POST', '/api/tools', { body: { name: 'array_schema', description: 'd', webhook_url: 'https://example.com/t', parameters: { ...parameters, type: 'array' } } });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.detail).toMatch(/^parameters\.type/);
  });

  it('updates fields partially, keeps the name fixed, and can clear headers', async () => {
    const tool = await createTool({ name: 'patch_me', headers: { 'X-Key': 'one' } });
    const patched = await h.request('PATCH', `/api/tools/${tool.id}`, {
      body: { name: 'patch_me', description: 'Updated description', webhook_method: 'GET', timeout_secs: 5 },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'patch_me',
      description: 'Updated description',
      webhook_method: 'GET',
      timeout_secs: 5,
      headers: { 'X-Key': '****' },
      webhook_url: tool.webhook_url,
      parameters: tool.parameters,
    });

    const renamed = await h.request('PATCH', `/api/tools/${tool.id}`, { body: { name: 'other_name' } });
    expect(renamed.status).toBe(422);
    expect(renamed.body.detail).toMatch(/^name: cannot be changed/);

    const invalid = await h.request('PATCH', `/api/tools/${tool.id}`, { body: { timeout_secs: 0 } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail).toMatch(/^timeout_secs: /);

    const cleared = await h.request('PATCH', `/api/tools/${tool.id}`, { body: { headers: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.headers).toEqual({});
    expect((await h.db.models.Tool.findByPk(tool.id))!.get('headers_encrypted')).toBeNull();
  });

  it('answers 404 for unknown ids, 422 for malformed ids and 401 without credentials', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const [method, path] of [
      ['GET', `/api/tools/${unknown}`],
      ['PATCH', `/api/tools/${unknown}`],
      ['DELETE', `/api/tools/${unknown}`],
      ['POST', `/api/tools/${unknown}/test`],
    ] as const) {
      const res = await h.request(method, path, method === 'GET' || method === 'DELETE' ? {} : { body: {} });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Tool not found' });
    }
    const malformed = await h.request('GET', '/api/tools/not-a-uuid');
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail).toMatch(/^path\.tool_id: /);
    expect((await h.request('GET', '/api/tools', { token: null })).status).toBe(401);
    expect((await h.request('POST', '/api/tools', { token: null, body: lookupTool() })).status).toBe(401);
  });
});

describe('tool deletion', () => {
  it('removes the tool from agents, flow nodes and call_tool pre-actions and bumps agent versions, in one go', async () => {
    const doomed = await createTool({ name: 'doomed_tool' });
    const kept = await createTool({ name: 'kept_tool' });
    const { Agent, FlowNode } = h.db.models;
    const agentBase = { prompt: 'p', stt_provider: 'deepgram', stt_language: 'en', llm_provider: 'openai', llm_model: 'gpt-4o-mini', tts_provider: 'cartesia' };
    const freeform = await Agent.create({ ...agentBase, name: 'freeform-agent', tool_ids: [doomed.id, kept.id], pre_call_tool_ids: [doomed.id] });
    const flow = await Agent.create({ ...agentBase, name: 'flow-agent', version: 4 });
    const untouched = await Agent.create({ ...agentBase, name: 'untouched-agent', tool_ids: [kept.id] });
    const node = await FlowNode.create({
      agent_id: flow.get('id') as string,
      node_key: 'greet',
      is_initial: true,
      tool_ids: [kept.id, doomed.id],
      pre_actions: [
        { type: 'say', text: 'hello' },
        { type: 'call_tool', tool_id: doomed.id, args: { a: 1 } },
        { type: 'call_tool', tool_id: kept.id },
      ],
    });

    const res = await h.request('DELETE', `/api/tools/${doomed.id}`);
    expect(res.status).toBe(204);
    expect(res.body).toBe('');
    expect((await h.request('GET', `/api/tools/${doomed.id}`)).status).toBe(404);
    expect((await h.request('GET', `/api/tools/${kept.id}`)).status).toBe(200);

    await freeform.reload();
    expect(freeform.get('tool_ids')).toEqual([kept.id]);
    expect(freeform.get('pre_call_tool_ids')).toEqual([]);
    expect(freeform.get('version')).toBe(2);
    await node.reload();
    expect(node.get('tool_ids')).toEqual([kept.id]);
    expect(node.get('pre_actions')).toEqual([{ type: 'say', text: 'hello' }, { type: 'call_tool', tool_id: kept.id }]);
    await flow.reload();
    expect(flow.get('version')).toBe(5);
    await untouched.reload();
    expect(untouched.get('tool_ids')).toEqual([kept.id]);
    expect(untouched.get('version')).toBe(1);
  });
});

describe('tool test operation', () => {
  it('POSTs the args as JSON with the custom headers and reports the parsed response', async () => {
    const tool = await createTool({ name: 'test_post', headers: { Authorization: 'Bearer client-token', 'X-Tenant': 'acme' } });
    hook.respond({ status: 200, body: { status: 'shipped', eta_days: 2 } });
    const res = await h.request('POST', `/api/tools/${tool.id}/test`, { body: { args: { order_id: 'A-17', verbose: true } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status_code: 200, response: { status: 'shipped', eta_days: 2 }, error: null });
    expect(Number.isInteger(res.body.duration_ms)).toBe(true);
    expect(hook.requests).toHaveLength(1);
    const [req] = hook.requests;
    expect(req).toMatchObject({ method: 'POST', path: '/orders', body: { order_id: 'A-17', verbose: true } });
    expect(req!.headers['content-type']).toMatch(/application\/json/);
    expect(req!.headers.authorization).toBe('Bearer client-token');
    expect(req!.headers['x-tenant']).toBe('acme');
  });

  it('sends GET arguments as a query string, objects JSON-encoded, and accepts plain-text answers', async () => {
    const tool = await createTool({ name: 'test_get', webhook_method: 'GET', webhook_url: `${hook.url}/lookup?source=voice` });
    hook.respond({ status: 200, body: 'order A-17 is shipped' });
    const res = await h.request('POST', `/api/tools/${tool.id}/test`, { body: { args: { order_id: 'A-17', filter: { year: 2024 }, n: 3 } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status_code: 200, response: 'order A-17 is shipped', error: null });
    const [req] = hook.requests;
    expect(req!.method).toBe('GET');
    expect(req!.raw).toBe('');
    expect(req!.query).toEqual({ source: 'voice', order_id: 'A-17', filter: '{"year":2024}', n: '3' });
  });

  it('sends an empty object when no args are given', async () => {
    const tool = await createTool({ name: 'test_no_args' });
    const res = await h.request('POST', `/api/tools/${tool.id}/test`);
    expect(res.status).toBe(200);
    expect(hook.requests[0]!.body).toEqual({});
  });

  it('reports a non-2xx answer in error with its status and body', async () => {
    const tool = await createTool({ name: 'test_500' });
    hook.respond({ status: 500, body: { message: 'database down' } });
    const res = await h.request('POST', `/api/tools/${tool.id}/test`, { body: { args: { order_id: '1' } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status_code: 500, response: { message: 'database down' }, error: 'HTTP 500' });
  });

  it('reports invalid JSON served as application/json in error', async () => {
    const tool = await createTool({ name: 'test_bad_json' });
    hook.respond({ status: 200, body: '{"broken":', content_type: 'application/json' });
    const res = await h.request('POST', `/api/tools/${tool.id}/test`, { body: { args: {} } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status_code: 200, response: '{"broken":', error: 'response is not valid JSON' });
  });

  it('reports a timeout after timeout_secs', async () => {
    const tool = await createTool({ name: 'test_timeout', timeout_secs: 1 });
    hook.respond({ status: 200, body: { late: true }, delay_ms: 3000 });
    const res = await h.request('POST', `/api/tools/${tool.id}/test`, { body: { args: {} } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status_code: null, response: null, error: 'timeout after 1s' });
    expect(res.body.duration_ms).toBeGreaterThanOrEqual(900);
    expect(res.body.duration_ms).toBeLessThan(2900);
  });

  it('reports a refused connection and a DNS failure', async () => {
    const port = await closedPort();
    const refused = await createTool({ name: 'test_refused', webhook_url: `http://127.0.0.1:${port}/x` });
    const res = await h.request('POST', `/api/tools/${refused.id}/test`, { body: { args: {} } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status_code: null, response: null, error: 'connection refused' });

    const dns = await createTool({ name: 'test_dns', webhook_url: 'http://tool-host.invalid/x' });
    const dnsRes = await h.request('POST', `/api/tools/${dns.id}/test`, { body: { args: {} } });
    expect(dnsRes.status).toBe(200);
    expect(dnsRes.body).toMatchObject({ status_code: null, error: 'DNS lookup failed for tool-host.invalid' });
  });

  it('rejects args that are not an object with 422', async () => {
    const tool = await createTool({ name: 'test_bad_args' });
    const res = await h.request('POST', `/api/tools/${tool.id}/test`, { body: { args: [1, 2] } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/^args: /);
  });
});

/** A port nothing listens on: bind, note the port, close. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
