/**
 * The role table (docs/security.md, Roles) against every operation of the OpenAPI document: walked
 * anonymously, with forged tokens and as a member, over a real socket. Member-accessible writes
 * on resources an administrator owns are refused; the same writes on the member's own go through.
 */
import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';
import { startHarness, ADMIN_EMAIL, type Harness } from '../support/harness';
import { createSession, type Session } from '../support/users';

type Access = 'public' | 'member' | 'owner' | 'admin';

/** The role table. `owner`: any member, but only on what they own (an admin on anything). */
const ROLE_TABLE: Record<string, Access> = {
  'POST /api/auth/login': 'public',
  'POST /api/auth/password-reset': 'public',
  'POST /api/auth/password-reset/confirm': 'public',
  'GET /api/auth/me': 'member',
  'POST /api/auth/password': 'member',
  'GET /api/auth/api-keys': 'member',
  'POST /api/auth/api-keys': 'member',
  'DELETE /api/auth/api-keys/{key_id}': 'member',
  'GET /api/users': 'admin',
  'POST /api/users': 'admin',
  'DELETE /api/users/{user_id}': 'admin',
  'GET /api/agents/stats': 'member',
  'GET /api/agents': 'member',
  'POST /api/agents': 'member',
  'GET /api/agents/{agent_id}': 'member',
  'PATCH /api/agents/{agent_id}': 'owner',
  'DELETE /api/agents/{agent_id}': 'owner',
  'POST /api/agents/{agent_id}/webhook-secret': 'owner',
  'GET /api/agents/{agent_id}/flow': 'member',
  'PUT /api/agents/{agent_id}/flow': 'owner',
  'GET /api/agents/{agent_id}/nodes': 'member',
  'POST /api/agents/{agent_id}/nodes': 'owner',
  'GET /api/agents/{agent_id}/nodes/{node_key}': 'member',
  'PATCH /api/agents/{agent_id}/nodes/{node_key}': 'owner',
  'DELETE /api/agents/{agent_id}/nodes/{node_key}': 'owner',
  'GET /api/agents/{agent_id}/export': 'member',
  'POST /api/agents/import': 'member',
  'POST /api/agents/generate': 'member',
  'POST /api/sidechat': 'member',
  'GET /api/tools': 'member',
  'GET /api/tools/{tool_id}': 'member',
  'POST /api/tools': 'member',
  'PATCH /api/tools/{tool_id}': 'owner',
  'DELETE /api/tools/{tool_id}': 'owner',
  // MCP servers (docs/tools.md, MCP servers): as webhook tools.
  'GET /api/mcp-servers': 'member',
  'GET /api/mcp-servers/{server_id}': 'member',
  'POST /api/mcp-servers': 'member',
  'PATCH /api/mcp-servers/{server_id}': 'owner',
  'DELETE /api/mcp-servers/{server_id}': 'owner',
  'POST /api/mcp-servers/{server_id}/refresh': 'owner',
  'POST /api/mcp-servers/{server_id}/test': 'owner',
  // The platform's own MCP server (docs/mcp-server.md): any member; each tool then checks its route's role.
  'POST /mcp': 'member',
  // Campaigns (docs/campaigns.md): a campaign and its contacts are its owner's (or an admin's).
  'POST /api/campaigns': 'member',
  'GET /api/campaigns': 'member',
  'GET /api/campaigns/{campaign_id}': 'owner',
  'POST /api/campaigns/{campaign_id}/start': 'owner',
  'POST /api/campaigns/{campaign_id}/pause': 'owner',
  'POST /api/campaigns/{campaign_id}/resume': 'owner',
  'POST /api/campaigns/{campaign_id}/cancel': 'owner',
  'POST /api/campaigns/{campaign_id}/contacts': 'owner',
  'POST /api/campaigns/{campaign_id}/contacts.csv': 'owner',
  'GET /api/campaigns/{campaign_id}/contacts': 'owner',
  'GET /api/campaigns/{campaign_id}/contacts.csv': 'owner',
  // Each member's own do-not-call list (the handlers scope it to the caller).
  'GET /api/do-not-call': 'member',
  'POST /api/do-not-call': 'member',
  'DELETE /api/do-not-call/{entry_id}': 'member',
  'POST /api/tools/{tool_id}/test': 'owner',
  'GET /api/settings/telephony': 'admin',
  'PUT /api/settings/telephony': 'admin',
  'GET /api/settings/telephony/providers': 'admin',
  'GET /api/settings/endpoints': 'admin',
  'POST /api/settings/endpoints': 'admin',
  'PUT /api/settings/endpoints/{endpoint_id}': 'admin',
  'DELETE /api/settings/endpoints/{endpoint_id}': 'admin',
  'GET /api/calls': 'member',
  'GET /api/calls/{call_id}': 'member',
  'GET /api/calls/{call_id}/events': 'member',
  'GET /api/calls/{call_id}/events/stream': 'member',
  'GET /api/recordings/{call_id}': 'member',
  'POST /api/calls/start': 'member',
  'POST /api/calls/test': 'member',
  'POST /api/calls/{call_id}/test/messages': 'member',
  'POST /api/calls/end': 'member',
  'POST /api/calls/{call_id}/analyze': 'member',
  'POST /api/calls/outbound': 'admin',
  // Web calls (docs/web-calls.md): anyone may talk to an agent; its publishable keys are its owner's.
  'POST /api/calls/web': 'member',
  'GET /api/agents/{agent_id}/publishable-keys': 'member',
  'POST /api/agents/{agent_id}/publishable-keys': 'owner',
  'DELETE /api/agents/{agent_id}/publishable-keys/{key_id}': 'owner',
  // Agent tests (docs/agent-tests.md): an agent's suite is changed by its owner; anyone may run it.
  'GET /api/agents/{agent_id}/tests': 'member',
  'POST /api/agents/{agent_id}/tests': 'owner',
  'POST /api/agents/{agent_id}/tests/from-call/{call_id}': 'owner',
  'GET /api/agents/{agent_id}/tests/{test_id}': 'member',
  'PATCH /api/agents/{agent_id}/tests/{test_id}': 'owner',
  'DELETE /api/agents/{agent_id}/tests/{test_id}': 'owner',
  'GET /api/agents/{agent_id}/versions': 'member',
  'POST /api/agents/{agent_id}/test-runs': 'member',
  'GET /api/agents/{agent_id}/test-runs': 'member',
  'GET /api/test-runs/{run_id}': 'member',
  'POST /api/test-runs/{run_id}/cancel': 'member',
  // Knowledge bases (docs/knowledge-base.md): anyone may search one and use it; its documents are its owner's.
  'GET /api/knowledge-bases': 'member',
  'POST /api/knowledge-bases': 'member',
  'GET /api/knowledge-bases/{knowledge_base_id}': 'member',
  'PATCH /api/knowledge-bases/{knowledge_base_id}': 'owner',
  'DELETE /api/knowledge-bases/{knowledge_base_id}': 'owner',
  'POST /api/knowledge-bases/{knowledge_base_id}/search': 'member',
  'GET /api/knowledge-bases/{knowledge_base_id}/documents': 'member',
  'POST /api/knowledge-bases/{knowledge_base_id}/documents': 'owner',
  'GET /api/knowledge-bases/{knowledge_base_id}/documents/{document_id}': 'member',
  'POST /api/knowledge-bases/{knowledge_base_id}/documents/{document_id}/refresh': 'owner',
  'DELETE /api/knowledge-bases/{knowledge_base_id}/documents/{document_id}': 'owner',
};
// Provider callbacks (/telephony/...) are public by rule and must refuse unsigned requests.
const isProviderCallback = (path: string) => path.startsWith('/telephony/');

let h: Harness;
let member: Session;
let operations: Array<{ method: string; path: string }>;
const params: Record<string, string> = {};

beforeAll(async () => {
  h = await startHarness();
  member = await createSession(h, 'member');
  const other = await createSession(h, 'member');
  const tool = await h.request('POST', '/api/tools', {
    body: { name: 'admin_tool', description: 'x', parameters: { properties: {} }, webhook_url: 'https://tools.example.com/x', headers: { Authorization: 'Bearer admin-tool-secret' } },
  });
  const agent = await h.request('POST', '/api/agents', { body: { name: 'admin-agent', prompt: 'p' } });
  const mcpServer = await h.request('POST', '/api/mcp-servers', { body: { name: 'admin_mcp', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer admin-mcp-secret' } } });
  await h.request('POST', `/api/agents/${agent.body.id}/nodes`, { body: { node_key: 'start', is_initial: true } });
  const knowledgeBase = await h.request('POST', '/api/knowledge-bases', { body: { name: 'admin-kb' } });
  const endpoint = await h.request('POST', '/api/settings/endpoints', { body: { phone_number: '+14155550123', provider: 'twilio', inbound_agent_name: 'admin-agent' } });
  const key = await h.request('POST', '/api/auth/api-keys', { body: { name: 'admin key' } });
  // With a Twilio token stored, unsigned provider callbacks are refused for their missing signature.
  await h.request('PUT', '/api/settings/telephony', { body: { provider: 'twilio', public_base_url: h.api.url, twilio_auth_token: 'twilio-token-9876' } });
  const callId = crypto.randomUUID();
  await h.db.models.Call.create({ id: callId, agent_name: 'admin-agent', phone_number: '+14155550100', direction: 'inbound', status: 'completed', workflow_id: `call-${callId}` });
  // An administrators' campaign (owner_id null), as POST /api/campaigns by an admin stores it.
  const campaignId = crypto.randomUUID();
  await h.db.models.Campaign.create({ id: campaignId, name: 'admin-campaign', owner_id: null, agent_name: 'admin-agent', status: 'draft', timezone: 'UTC', workflow_id: `campaign-${campaignId}` });
  Object.assign(params, {
    campaign_id: campaignId,
    agent_id: agent.body.id,
    node_key: 'start',
    tool_id: tool.body.id,
    server_id: mcpServer.body.id,
    knowledge_base_id: knowledgeBase.body.id,
    endpoint_id: endpoint.body.id,
    key_id: key.body.id,
    user_id: other.id,
    call_id: callId,
    agent_name: 'admin-agent',
  });
  const doc = await h.request('GET', '/api/openapi.json', { token: null });
  operations = Object.entries(doc.body.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
    Object.keys(ops).map((method) => ({ method: method.toUpperCase(), path })),
  );
});
afterAll(async () => {
  await h.stop();
});

const fill = (path: string) => path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? crypto.randomUUID()));
const send = (op: { method: string; path: string }, token: string | null) =>
  h.request(op.method, fill(op.path), { token, ...(op.method === 'GET' || op.method === 'DELETE' ? {} : { body: {} }) });

describe('the role table', () => {
  it('covers every operation of the OpenAPI document, and the document states each role', async () => {
    const doc = (await h.request('GET', '/api/openapi.json', { token: null })).body;
    const unlisted = operations.filter((op) => !isProviderCallback(op.path) && !(`${op.method} ${op.path}` in ROLE_TABLE));
    expect(unlisted).toEqual([]);
    for (const op of operations) {
      const declared = doc.paths[op.path][op.method.toLowerCase()];
      const expected = isProviderCallback(op.path) ? 'public' : ROLE_TABLE[`${op.method} ${op.path}`];
      expect({ op, role: declared['x-required-role'], owner: declared['x-owner-or-admin'] ?? false }).toEqual({
        op,
        role: expected === 'owner' ? 'member' : expected,
        owner: expected === 'owner',
      });
    }
  });
});

describe('walking every operation', () => {
  it('anonymously: 401 on everything but the public operations, which never answer 5xx', async () => {
    for (const op of operations) {
      const res = await send(op, null);
      const access = isProviderCallback(op.path) ? 'public' : ROLE_TABLE[`${op.method} ${op.path}`];
      if (access === 'public') {
        expect({ op, status: res.status }).toEqual({ op, status: expect.any(Number) });
        expect(res.status).not.toBe(401);
        expect(res.status).toBeLessThan(500);
        // Provider callbacks refuse a request that carries no provider signature (403 today; any 4xx refuses).
        if (isProviderCallback(op.path)) expect({ op, refused: res.status >= 400 && res.status < 500 }).toEqual({ op, refused: true });
      } else {
        expect({ op, status: res.status }).toEqual({ op, status: 401 });
        expect(typeof res.body.detail).toBe('string');
      }
    }
  });

  it('with forged tokens: 401 on every authenticated operation', async () => {
    const admin = await h.db.models.User.findOne({ where: { email: ADMIN_EMAIL } });
    const sub = admin!.get('id') as string;
    const forged = [
      jwt.sign({ email: ADMIN_EMAIL, role: 'admin', tv: 0 }, 'not-the-server-secret-at-all', { subject: sub, expiresIn: 600 }),
      `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify({ sub, email: ADMIN_EMAIL, role: 'admin', exp: Math.floor(Date.now() / 1000) + 600 })).toString('base64url')}.`,
      jwt.sign({ email: 'ghost@example.com', role: 'admin' }, h.config.JWT_SECRET!, { subject: crypto.randomUUID(), expiresIn: 600 }),
      jwt.sign({ email: ADMIN_EMAIL, role: 'admin' }, h.config.JWT_SECRET!, { subject: 'not-a-uuid', expiresIn: 600 }),
      `vap_${crypto.randomBytes(32).toString('base64url')}`,
      `pk_${crypto.randomBytes(24).toString('base64url')}`,
    ];
    for (const op of operations.filter((o) => !isProviderCallback(o.path) && ROLE_TABLE[`${o.method} ${o.path}`] !== 'public')) {
      for (const token of forged) {
        const res = await send(op, token);
        expect({ op, token: token.slice(0, 12), status: res.status }).toEqual({ op, token: token.slice(0, 12), status: 401 });
      }
    }
  });

  it('as a member: 403 on admin operations and on what an administrator owns; the rest is allowed', async () => {
    for (const op of operations.filter((o) => !isProviderCallback(o.path))) {
      const access = ROLE_TABLE[`${op.method} ${op.path}`]!;
      if (access === 'public') continue;
      const res = await send(op, member.token);
      if (access === 'admin' || access === 'owner') {
        expect({ op, status: res.status }).toEqual({ op, status: 403 });
        expect(res.body.detail).toMatch(access === 'admin' ? /Administrator role required/ : /Only the owner/);
      } else {
        expect({ op, status: res.status, allowed: ![401, 403].includes(res.status) && res.status < 500 }).toEqual({ op, status: res.status, allowed: true });
      }
    }
    // Nothing the member tried changed the administrator's resources.
    expect((await h.request('GET', `/api/agents/${params.agent_id}/nodes`)).body).toHaveLength(1);
    expect((await h.request('GET', `/api/tools/${params.tool_id}`)).status).toBe(200);
    expect((await h.request('GET', `/api/knowledge-bases/${params.knowledge_base_id}`)).body.name).toBe('admin-kb');
  });
});

describe('a publishable key', () => {
  it('is refused (401) by every operation but POST /api/calls/web', async () => {
    const created = await h.request('POST', `/api/agents/${params.agent_id}/publishable-keys`, { body: { name: 'site', allowed_origins: ['https://shop.example'] } });
    expect(created.status).toBe(201);
    const pk = created.body.key as string;
    for (const op of operations.filter((o) => !isProviderCallback(o.path) && ROLE_TABLE[`${o.method} ${o.path}`] !== 'public')) {
      const res = await send(op, pk);
      if (op.method === 'POST' && op.path === '/api/calls/web') expect({ op, status: res.status }).toEqual({ op, status: 422 });
      else {
        expect({ op, status: res.status }).toEqual({ op, status: 401 });
        expect(res.body.detail).toMatch(/publishable key can only start web calls/);
      }
    }
  });
});

describe('ownership', () => {
  it("lets a member change, test and delete their own agents and tools, and use an administrator's tool in them", async () => {
    const asMember = { token: member.token };
    const tool = await h.request('POST', '/api/tools', { ...asMember, body: { name: 'member_tool', description: 'x', parameters: { properties: {} }, webhook_url: 'http://127.0.0.1:9/m' } });
    expect(tool.status).toBe(201);
    const agent = await h.request('POST', '/api/agents', { ...asMember, body: { name: 'member-agent', prompt: 'p', tool_ids: [params.tool_id, tool.body.id] } });
    expect(agent.status).toBe(201);
    expect(agent.body.webhook_secret).toMatch(/^whsec_/);
    // Answers say who owns what, so a client can tell what the user may change.
    expect(agent.body.owner_id).toBe(member.id);
    expect(tool.body.owner_id).toBe(member.id);
    expect((await h.request('GET', `/api/tools/${params.tool_id}`, asMember)).body.owner_id).not.toBe(member.id);
    expect((await h.request('PATCH', `/api/agents/${agent.body.id}`, { ...asMember, body: { prompt: 'q' } })).status).toBe(200);
    expect((await h.request('PUT', `/api/agents/${agent.body.id}/flow`, { ...asMember, body: { nodes: [{ node_key: 'a', is_initial: true }] } })).status).toBe(200);
    expect((await h.request('POST', `/api/agents/${agent.body.id}/webhook-secret`, asMember)).status).toBe(200);
    expect((await h.request('PATCH', `/api/tools/${tool.body.id}`, { ...asMember, body: { description: 'y' } })).status).toBe(200);
    const tested = await h.request('POST', `/api/tools/${tool.body.id}/test`, { ...asMember, body: { args: {} } });
    expect(tested.status).toBe(200);
    expect(tested.body.status_code).toBeNull();
    // An administrator may change anything.
    expect((await h.request('PATCH', `/api/agents/${agent.body.id}`, { body: { prompt: 'by admin' } })).status).toBe(200);
    // Another member may not.
    const other = await createSession(h, 'member');
    expect((await h.request('DELETE', `/api/agents/${agent.body.id}`, { token: other.token })).status).toBe(403);
    expect((await h.request('DELETE', `/api/tools/${tool.body.id}`, { token: other.token })).status).toBe(403);
    expect((await h.request('DELETE', `/api/agents/${agent.body.id}`, asMember)).status).toBe(204);
    expect((await h.request('DELETE', `/api/tools/${tool.body.id}`, asMember)).status).toBe(204);
  });

  it("refuses a member's import over an agent they do not own, and their request for secrets in an export", async () => {
    const bundle = (await h.request('GET', `/api/agents/${params.agent_id}/export`, { token: member.token })).body;
    const overwrite = await h.request('POST', '/api/agents/import', { token: member.token, body: { ...bundle, overwrite: true } });
    expect(overwrite.status).toBe(403);
    const secrets = await h.request('GET', `/api/agents/${params.agent_id}/export?include_secrets=true`, { token: member.token });
    expect(secrets.status).toBe(403);
  });

  it('lets only an administrator hang up a phone call', async () => {
    const callId = crypto.randomUUID();
    await h.db.models.Call.create({ id: callId, agent_name: 'admin-agent', phone_number: '+14155550100', direction: 'outbound', status: 'completed', provider: 'twilio', workflow_id: `call-${callId}` });
    const res = await h.request('POST', '/api/calls/end', { token: member.token, body: { call_id: callId } });
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/administrator/);
  });

  it("lists only the member's own API keys and cannot revoke another user's", async () => {
    const own = await h.request('POST', '/api/auth/api-keys', { token: member.token, body: { name: 'mine' } });
    const list = await h.request('GET', '/api/auth/api-keys', { token: member.token });
    expect(list.body.map((k: any) => k.id)).toEqual([own.body.id]);
    expect((await h.request('DELETE', `/api/auth/api-keys/${params.key_id}`, { token: member.token })).status).toBe(404);
    expect((await h.request('GET', '/api/auth/me', { token: (await h.adminToken()) })).status).toBe(200);
  });
});

describe('secret-bearing fields', () => {
  it('are masked for everyone, administrators included', async () => {
    for (const token of [await h.adminToken(), member.token]) {
      const tools = (await h.request('GET', '/api/tools', { token })).body as any[];
      const text = JSON.stringify(tools);
      expect(text).not.toContain('admin-tool-secret');
      expect(tools.find((t) => t.id === params.tool_id).headers).toEqual({ Authorization: '****cret' });
      const agent = await h.request('GET', `/api/agents/${params.agent_id}`, { token });
      expect(agent.body).not.toHaveProperty('webhook_secret');
      expect(JSON.stringify((await h.request('GET', `/api/agents/${params.agent_id}/export`, { token })).body)).not.toContain('admin-tool-secret');
    }
    const settings = await h.request('GET', '/api/settings/telephony');
    expect(settings.body.twilio_auth_token).toBe('****9876');
  });
});
