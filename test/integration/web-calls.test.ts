/**
 * Web calls through the API and the media gateway (docs/web-calls.md), over real sockets: who may
 * start one (a member, or a publishable key from an origin it allows, under its rate limits), what
 * the call is (an ordinary call record, admitted by gateway room), CORS on the token route only,
 * and the gateway refusing streams whose token is forged, expired, or used from another origin.
 * The whole conversation in a browser is test/browser/web-calls.test.ts.
 */
import crypto from 'node:crypto';
import WebSocket from 'ws';
import { startGateway, type RunningGateway } from '../../src/gateway/server';
import { webCallToken } from '../../src/providers/channels/web/token';
import { callWorkflowId } from '../../workflows/call-definitions';
import { getFreePort } from '../../src/temporal/dev-server';
import { createAgent } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { defaultProviderEnv, FakePool } from '../support/speech-vendors';

const SHOP = 'https://shop.example';
let h: Harness;
let gateway: RunningGateway | undefined;
let gatewayPort: number;
let agentId: string;
const speechFakes = new FakePool();

beforeAll(async () => {
  gatewayPort = await getFreePort();
  const speechEnv = await defaultProviderEnv(speechFakes);
  h = await startHarness({
    env: { ...speechEnv, GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}`, WEB_CALL_KEY_RATE_PER_MIN: '3', WEB_CALL_ADDRESS_RATE_PER_MIN: '4' },
  });
  agentId = (await createAgent(h.db, h.box, { name: 'support', greeting: 'Hi, support here.' })).id;
  await createAgent(h.db, h.box, { name: 'sales' });
});
afterAll(async () => {
  await gateway?.stop();
  await h?.stop();
  await speechFakes.stopAll();
});

const startWith = (key: string, origin: string | null, agent = 'support') =>
  fetch(`${h.api.url}/api/calls/web`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(origin ? { origin } : {}) },
    body: JSON.stringify({ agent_name: agent }),
  });
const createKey = (origins: string[]) => h.request('POST', `/api/agents/${agentId}/publishable-keys`, { body: { name: 'Shop', allowed_origins: origins } });

/** Opens /media/web, sends `start`, and resolves with how the gateway closed the socket. */
function stream(start: Record<string, unknown>, origin?: string): Promise<{ code: number; reason: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${gatewayPort}/media/web`, origin ? { origin } : {});
    ws.on('open', () => ws.send(JSON.stringify({ event: 'start', ...start })));
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    ws.on('error', reject);
  });
}

describe('starting a web call', () => {
  it('is refused with 503 while no media gateway runs', async () => {
    const res = await h.request('POST', '/api/calls/web', { body: { agent_name: 'support' } });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    gateway = await startGateway(h.gatewayDeps(), gatewayPort, '127.0.0.1');
  });

  it('gives a member an ordinary inbound call record with channel web, and a stream to connect', async () => {
    const res = await h.request('POST', '/api/calls/web', { body: { agent_name: 'support', custom_parameters: { first_name: 'Asha' } } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ call_id: expect.any(String), stream_url: `ws://127.0.0.1:${gatewayPort}/media/web`, token: expect.any(String), expires_at: expect.any(String) });
    const ttlMs = new Date(`${res.body.expires_at}Z`).getTime() - Date.now();
    expect(ttlMs).toBeGreaterThan(50_000);
    expect(ttlMs).toBeLessThanOrEqual(60_000);
    const call = (await h.request('GET', `/api/calls/${res.body.call_id}`)).body;
    expect(call).toMatchObject({ channel: 'web', direction: 'inbound', provider: null, status: 'in_progress', agent_name: 'support', context: { first_name: 'Asha' } });
    const listed = (await h.request('GET', '/api/calls?agent_name=support')).body.calls;
    expect(listed.map((c: { id: string; channel: string }) => [c.id, c.channel])).toContainEqual([res.body.call_id, 'web']);
    // In the Temporal UI: the search attributes and the summary say what it is.
    const described = await h.temporal.workflow.getHandle(callWorkflowId(res.body.call_id)).describe();
    expect(described.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value])).toEqual(
      expect.arrayContaining([['AgentName', 'support'], ['Direction', 'inbound'], ['PhoneNumber', 'web']]),
    );
    expect(await described.staticSummary()).toMatch(/inbound web call/);
  });

  it('answers 401, 404 and 422 with a detail', async () => {
    expect((await h.request('POST', '/api/calls/web', { body: { agent_name: 'support' }, token: null })).status).toBe(401);
    const unknown = await h.request('POST', '/api/calls/web', { body: { agent_name: 'nobody' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toMatch(/nobody not found/);
    const bad = await h.request('POST', '/api/calls/web', { body: { agent_name: 'support', custom_parameters: { 'not a name': 1 } } });
    expect(bad.status).toBe(422);
    await createAgent(h.db, h.box, { name: 'mute', tts_provider: 'elevenlabs' });
    const unready = await h.request('POST', '/api/calls/web', { body: { agent_name: 'mute' } });
    expect(unready.status).toBe(422);
    expect(unready.body.detail).toMatch(/ELEVENLABS_API_KEY is not set/);
  });
});

describe('publishable keys', () => {
  let pk: string;

  it('are created for origins only, shown once and stored hashed', async () => {
    const bad = await createKey(['https://shop.example/checkout']);
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/not an origin/);
    const created = await createKey([SHOP, 'http://localhost:5173']);
    expect(created.status).toBe(201);
    pk = created.body.key;
    expect(pk).toMatch(/^pk_/);
    const listed = (await h.request('GET', `/api/agents/${agentId}/publishable-keys`)).body;
    expect(listed).toEqual([expect.objectContaining({ id: created.body.id, allowed_origins: [SHOP, 'http://localhost:5173'], key_prefix: pk.slice(0, 10), revoked_at: null })]);
    expect(JSON.stringify(listed)).not.toContain(pk);
    const row = await h.db.models.PublishableKey.findByPk(created.body.id);
    expect(row!.get('key_hash')).not.toContain(pk.slice(3));
  });

  it('start a call to their agent from an allowed origin only, with CORS for that origin', async () => {
    const ok = await startWith(pk, SHOP);
    expect(ok.status).toBe(201);
    expect(ok.headers.get('access-control-allow-origin')).toBe(SHOP);
    const body = (await ok.json()) as { call_id: string };
    const call = (await h.request('GET', `/api/calls/${body.call_id}`)).body;
    expect(call.metadata).toEqual({ origin: SHOP, publishable_key_id: expect.any(String) });

    const foreign = await startWith(pk, 'https://evil.example');
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    expect((await startWith(pk, null)).status).toBe(403);
    const other = await startWith(pk, SHOP, 'sales');
    expect(other.status).toBe(403);
    expect(((await other.json()) as { detail: string }).detail).toMatch(/another agent/);
  });

  it('answer CORS preflights only for an origin some key allows, and only on the token route', async () => {
    const preflight = (path: string, origin: string) => fetch(`${h.api.url}${path}`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
    const allowed = await preflight('/api/calls/web', SHOP);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(allowed.headers.get('access-control-allow-headers')).toMatch(/authorization/);
    expect(allowed.headers.get('access-control-allow-credentials')).toBeNull();
    expect((await preflight('/api/calls/web', 'https://evil.example')).status).toBe(403);
    const elsewhere = await preflight('/api/agents', SHOP);
    expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('read nothing else of the API', async () => {
    for (const [method, path] of [['GET', '/api/agents'], ['GET', '/api/calls'], ['GET', `/api/agents/${agentId}/publishable-keys`], ['POST', '/api/calls/test']]) {
      const res = await fetch(`${h.api.url}${path}`, { method: method!, headers: { authorization: `Bearer ${pk}`, origin: SHOP } });
      expect({ path, status: res.status }).toEqual({ path, status: 401 });
    }
  });

  it('are rate limited per key and per client address', async () => {
    // The key has started one call (limit 3 a minute), and so has the address (limit 4, any key).
    expect((await startWith(pk, SHOP)).status).toBe(201);
    expect((await startWith(pk, SHOP)).status).toBe(201);
    const overKey = await startWith(pk, SHOP);
    expect(overKey.status).toBe(429);
    expect(Number(overKey.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(overKey.headers.get('access-control-allow-origin')).toBe(SHOP);
    const second = (await createKey([SHOP])).body.key as string;
    const overAddress = await startWith(second, SHOP);
    expect(overAddress.status).toBe(429);
    expect(((await overAddress.json()) as { detail: string }).detail).toMatch(/Too many web calls/);
  });

  it('stop working at once when revoked', async () => {
    const [key] = (await h.request('GET', `/api/agents/${agentId}/publishable-keys`)).body.filter((k: { key_prefix: string }) => k.key_prefix === pk.slice(0, 10));
    const revoked = await h.request('DELETE', `/api/agents/${agentId}/publishable-keys/${key.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).not.toBeNull();
    const res = await startWith(pk, SHOP);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/Invalid or revoked publishable key/);
  });
});

describe('the /media/web stream', () => {
  const secret = () => h.config.JWT_SECRET!;
  const inAMinute = () => Math.floor(Date.now() / 1000) + 60;

  it('refuses a forged, an expired, a foreign-origin token and an unsupported rate', async () => {
    const callId = crypto.randomUUID();
    expect(await stream({ call_id: callId, token: 'forged' })).toEqual({ code: 1008, reason: 'invalid stream token' });
    const expired = webCallToken(secret(), { callId, expiresAtSecs: Math.floor(Date.now() / 1000) - 1, origin: null });
    expect(await stream({ call_id: callId, token: expired })).toEqual({ code: 1008, reason: 'stream token expired' });
    const bound = webCallToken(secret(), { callId, expiresAtSecs: inAMinute(), origin: SHOP });
    expect(await stream({ call_id: callId, token: bound }, 'https://evil.example')).toEqual({ code: 1008, reason: 'stream from an origin the key does not allow' });
    // Another call's token names that call only.
    const other = webCallToken(secret(), { callId: crypto.randomUUID(), expiresAtSecs: inAMinute(), origin: null });
    expect(await stream({ call_id: callId, token: other })).toEqual({ code: 1008, reason: 'invalid stream token' });
    expect((await stream({ call_id: callId, token: bound, sample_rate: 44100 }, SHOP)).reason).toMatch(/unsupported sample_rate 44100/);
    // The right origin passes the token check and reaches the call lookup (no such call here).
    expect((await stream({ call_id: callId, token: bound }, SHOP)).reason).toMatch(/unknown call/);
  });
});
