/**
 * A bounded fuzz of the whole API over a real socket: for every write operation of the OpenAPI
 * document, tens of malformed bodies (NUL bytes, lone surrogates, deep nesting, huge strings,
 * wrong types, bad URLs), plus malformed queries and path values of every operation. Nothing may
 * answer 500, nor any 5xx the operation does not document (503 "no LLM configured" for
 * generation, 502 "the provider refused" for outbound calls); NUL bytes, lone surrogates and deep
 * nesting are 422 `{detail}` everywhere.
 */
import crypto from 'node:crypto';
import { startHarness, type Harness } from '../support/harness';
import { JSON_MAX_DEPTH } from '../../src/api/http/clean-input';
import { inlineRefs } from '../support/openapi-doc';

let h: Harness;
let operations: Array<{ method: string; path: string; op: any }>;
const params: Record<string, string> = {};

/** Valid-looking bodies, so that a mutation of one field reaches the code behind validation. */
function baseBodies(): Record<string, Record<string, unknown>> {
  return {
    'POST /api/auth/login': { email: 'nobody@example.com', password: 'wrong-password' },
    'POST /api/auth/password-reset': { email: 'nobody@example.com' },
    'POST /api/auth/password-reset/confirm': { token: 'not-a-token', new_password: 'long-enough-password' },
    'POST /api/auth/password': { current_password: 'not-the-password', new_password: 'long-enough-password' },
    'POST /api/auth/api-keys': { name: 'fuzz' },
    'POST /api/users': { email: 'fuzzed@example.com', password: 'long-enough-password', role: 'member' },
    'POST /api/agents': { name: 'fuzz-agent', prompt: 'p', webhook_url: 'https://example.com/hook' },
    'PATCH /api/agents/{agent_id}': { prompt: 'p', greeting: 'hi', webhook_url: 'https://example.com/hook' },
    'PUT /api/agents/{agent_id}/flow': { nodes: [{ node_key: 'start', is_initial: true }] },
    'POST /api/agents/{agent_id}/nodes': { node_key: 'second', task_messages: [{ role: 'system', content: 'x' }] },
    'PATCH /api/agents/{agent_id}/nodes/{node_key}': { task_messages: [{ role: 'system', content: 'x' }] },
    'POST /api/agents/import': { version: '1', agent: { name: 'fuzz-import', prompt: 'p' }, tools: [], flow_nodes: [] },
    'POST /api/agents/generate': { description: 'a receptionist', language: 'en' },
    'POST /api/sidechat': { messages: [{ role: 'user', content: 'hi' }] },
    'POST /api/tools': { name: 'fuzz_tool', description: 'd', parameters: { properties: {} }, webhook_url: 'https://example.com/t', headers: { 'X-A': 'b' } },
    'PATCH /api/tools/{tool_id}': { description: 'd', webhook_url: 'https://example.com/t', headers: { 'X-A': 'b' } },
    'POST /api/tools/{tool_id}/test': { args: { q: 'x' } },
    'PUT /api/settings/telephony': { provider: 'twilio', public_base_url: 'https://voice.example.com', twilio_phone_number: '+14155550123' },
    'POST /api/settings/endpoints': { phone_number: '+14155550199', provider: 'twilio', label: 'l' },
    'PUT /api/settings/endpoints/{endpoint_id}': { label: 'l', is_active: true },
    'POST /api/calls/start': { phone_number: '+14155550123', agent_name: 'no-such-agent', direction: 'inbound', metadata: {}, custom_parameters: {} },
    'POST /api/calls/test': { agent_name: 'no-such-agent', custom_parameters: { first_name: 'A' } },
    'POST /api/calls/{call_id}/test/messages': { text: 'hello' },
    'POST /api/calls/end': { call_id: crypto.randomUUID() },
    'POST /api/calls/outbound': { phone_number: '+14155550123', agent_name: 'no-such-agent', custom_parameters: {} },
  };
}

const json = (value: unknown) => JSON.stringify(value);

/** Values that break one field, as JSON text; `strict` ones must be refused with 422 on every route. */
const FIELD_MUTATIONS: Array<{ name: string; json: string; strict?: boolean }> = [
  { name: 'NUL', json: json('a\u0000b'), strict: true },
  { name: 'lone high surrogate', json: '"x\\ud800"', strict: true },
  { name: 'lone low surrogate', json: '"\\udc00x"', strict: true },
  { name: 'NUL in a nested key', json: json({ ['k\u0000']: 'v' }), strict: true },
  { name: 'deep nesting', json: '['.repeat(5000) + ']'.repeat(5000), strict: true },
  { name: 'huge string', json: json('x'.repeat(200_000)) },
  { name: 'number', json: '12345' },
  { name: 'negative', json: '-1' },
  { name: 'huge number', json: '1e308' },
  { name: 'array', json: json(['a', 1, null]) },
  { name: 'object', json: json({ a: { b: 'c' } }) },
  { name: 'null', json: 'null' },
  { name: 'boolean', json: 'true' },
  { name: 'not a url', json: json('not a url') },
  { name: 'broken url', json: json('http://[::1') },
  { name: 'unix url', json: json('http://unix:/var/run/x.sock:/a') },
  { name: 'empty', json: '""' },
];

/** The base body with one field replaced by raw JSON text (deep values never go through JSON.stringify here). */
function withField(base: Record<string, unknown>, field: string, raw: string): string {
  const marker = `__FUZZ_${crypto.randomBytes(6).toString('hex')}__`;
  return JSON.stringify({ ...base, [field]: marker }).replace(`"${marker}"`, () => raw);
}

/** Whole bodies that are malformed as such (raw text sent as JSON). */
const RAW_BODIES: Array<{ name: string; raw: string; strict?: boolean }> = [
  { name: 'null', raw: 'null' },
  { name: 'array', raw: '[1,2,3]' },
  { name: 'string', raw: '"text"' },
  { name: 'number', raw: '42' },
  { name: 'truncated', raw: '{"a":' },
  { name: 'escaped lone surrogate', raw: '{"name":"\\ud800"}', strict: true },
  { name: 'escaped NUL', raw: '{"name":"a\\u0000"}', strict: true },
  { name: 'nested 5000 deep', raw: `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`, strict: true },
  { name: 'prototype keys', raw: '{"__proto__":{"role":"admin"},"constructor":{"prototype":{"x":1}}}' },
];

beforeAll(async () => {
  h = await startHarness();
  const tool = await h.request('POST', '/api/tools', { body: { name: 'fuzz_target', description: 'x', parameters: { properties: {} }, webhook_url: 'http://127.0.0.1:9/x' } });
  const agent = await h.request('POST', '/api/agents', { body: { name: 'fuzz-target', prompt: 'p' } });
  await h.request('POST', `/api/agents/${agent.body.id}/nodes`, { body: { node_key: 'start', is_initial: true } });
  const endpoint = await h.request('POST', '/api/settings/endpoints', { body: { phone_number: '+14155550123', provider: 'twilio' } });
  const callId = crypto.randomUUID();
  await h.db.models.Call.create({ id: callId, agent_name: 'fuzz-target', phone_number: '+14155550100', direction: 'inbound', status: 'completed', workflow_id: `call-${callId}`, metadata: { channel: 'text' } });
  Object.assign(params, { agent_id: agent.body.id, node_key: 'start', tool_id: tool.body.id, endpoint_id: endpoint.body.id, call_id: callId, key_id: crypto.randomUUID(), user_id: crypto.randomUUID(), agent_name: 'fuzz-target' });
  const doc = inlineRefs((await h.request('GET', '/api/openapi.json', { token: null })).body);
  operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
});
afterAll(async () => {
  await h.stop();
});

const fill = (path: string, override: Record<string, string> = {}) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => override[name] ?? encodeURIComponent(params[name] ?? crypto.randomUUID()));

interface Outcome {
  request: string;
  status: number;
  detail?: unknown;
}

/** Upstream statuses an operation documents (the LLM or the telephony provider), never 500. */
const documented5xx = (op: any) => Object.keys(op?.responses ?? {}).map(Number).filter((s) => s > 500);

function check(outcomes: Outcome[], request: string, res: { status: number; body: any }, strict: boolean, op?: any) {
  const serverError = res.status >= 500 && !documented5xx(op).includes(res.status);
  const ok = !serverError && (!strict || res.status === 422) && (res.status < 400 || typeof res.body?.detail === 'string' || res.body === '');
  if (!ok) outcomes.push({ request, status: res.status, detail: res.body?.detail ?? res.body });
}

describe('fuzzing the API', () => {
  it('answers malformed bodies of every write operation with 4xx, never 5xx', async () => {
    const bases = baseBodies();
    const failures: Outcome[] = [];
    let sent = 0;
    for (const { method, path, op } of operations.filter((o) => ['POST', 'PUT', 'PATCH'].includes(o.method))) {
      const key = `${method} ${path}`;
      const base = bases[key] ?? {};
      const schemaFields = Object.keys(op.requestBody?.content?.['application/json']?.schema?.properties ?? {});
      const fields = [...new Set([...Object.keys(base), ...schemaFields])].slice(0, 8);
      for (const field of fields) {
        for (const mutation of FIELD_MUTATIONS) {
          const res = await h.request(method, fill(path), { raw: withField(base, field, mutation.json) });
          sent++;
          check(failures, `${key} ${field}=${mutation.name}`, res, !!mutation.strict, op);
        }
      }
      for (const raw of RAW_BODIES) {
        const res = await h.request(method, fill(path), { raw: raw.raw });
        sent++;
        check(failures, `${key} body=${raw.name}`, res, !!raw.strict, op);
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(1000);
  }, 600_000);

  it('answers malformed path values and queries of every operation with 4xx, never 5xx', async () => {
    const failures: Outcome[] = [];
    const pathValues: Array<{ name: string; value: string; strict?: boolean }> = [
      { name: 'NUL', value: 'a%00b', strict: true },
      { name: 'invalid UTF-8', value: '%ED%A0%80' },
      { name: 'traversal', value: '..%2F..%2Fsecrets.json' },
      { name: 'long', value: 'x'.repeat(4000) },
      { name: 'unicode', value: encodeURIComponent('नमस्ते') },
    ];
    for (const { method, path, op } of operations) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      for (const name of names) {
        for (const value of pathValues) {
          const res = await h.request(method, fill(path, { [name]: value.value }), method === 'GET' || method === 'DELETE' ? {} : { body: {} });
          check(failures, `${method} ${path} ${name}=${value.name}`, res, !!value.strict, op);
        }
      }
    }
    const queries: Array<{ q: string; strict?: boolean }> = [
      { q: 'agent_name=%00', strict: true },
      { q: 'agent_name=%ED%A0%80' },
      { q: 'status=%00', strict: true },
      { q: 'page=1e400' },
      { q: 'page=-1' },
      { q: 'page_size=abc' },
      { q: 'created_after=2024-13-45' },
      { q: 'created_after=99999-01-01' },
      { q: `agent_name=${'x'.repeat(6000)}` },
      { q: 'status=completed&status=failed' },
      { q: 'agent_name[]=a' },
    ];
    for (const { q, strict } of queries) {
      const res = await h.request('GET', `/api/calls?${q}`);
      check(failures, `GET /api/calls?${q.slice(0, 40)}`, res, !!strict);
    }
    for (const q of ['include_secrets=%00', 'include_secrets=maybe', 'include_secrets=true&include_secrets=false']) {
      const res = await h.request('GET', `/api/agents/${params.agent_id}/export?${q}`);
      check(failures, `export?${q}`, res, q.includes('%00'));
    }
    expect(failures).toEqual([]);
  });

  it(`documents the nesting limit: ${JSON_MAX_DEPTH} levels pass the edge, one more is refused`, async () => {
    const nest = (levels: number) => JSON.parse('{"a":'.repeat(levels) + '1' + '}'.repeat(levels));
    const ok = await h.request('POST', '/api/calls/test', { body: { agent_name: 'no-such-agent', custom_parameters: {}, extra: nest(JSON_MAX_DEPTH - 2) } });
    expect(ok.status).toBe(422);
    expect(ok.body.detail).toMatch(/unknown|Unrecognized|extra/i);
    const tooDeep = await h.request('POST', '/api/calls/test', { body: { agent_name: 'no-such-agent', extra: nest(JSON_MAX_DEPTH + 1) } });
    expect(tooDeep.status).toBe(422);
    expect(tooDeep.body.detail).toMatch(new RegExp(`nested deeper than ${JSON_MAX_DEPTH} levels`));
  });
});
