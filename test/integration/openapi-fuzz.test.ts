/**
 * A property-based fuzz of the API from its OpenAPI document (fast-check): requests made from
 * each operation's own schemas (path, query and body; mostly valid, some broken), sent over the
 * real socket as an administrator, as a member and without a token. Whatever the request, the
 * answer has a documented status, is never a 5xx the operation does not document (500 never),
 * has a body inside its documented schema, and an error is JSON `{detail}`. Bounded to a few
 * hundred requests; test/security/fuzz.test.ts sends the hostile inputs (NUL, nesting, sizes).
 */
import crypto from 'node:crypto';
import fc from 'fast-check';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { SchemaArbitraries } from '../support/openapi-arbitraries';
import { OpenApiValidator } from '../support/openapi-validator';
import { startHarness, type Harness } from '../support/harness';
import { createSession } from '../support/users';

// FUZZ_RUNS=5000 (and FUZZ_SEED=<n> to repeat a run) for a longer search by hand.
const RUNS = Number(process.env.FUZZ_RUNS ?? 450);

/**
 * Operations left out, and why: each would leave work running that outlives its request (a call
 * or campaign workflow, with no worker in this file, or a real provider dial), or never ends.
 */
const SKIPPED = new Set([
  'GET /api/calls/{call_id}/events/stream', // an event stream stays open
  'POST /api/calls/test', // waits for a greeting from a call workflow
  'POST /api/calls/start', // starts a call workflow
  'POST /api/calls/outbound', // dials the stored provider
  'POST /api/calls/web', // starts a call workflow
  'POST /api/campaigns', // starts a campaign workflow
  'POST /api/agents/{agent_id}/test-runs', // starts a test-run workflow
  // JSON-RPC: its protocol errors are the MCP transport's, not {detail}; mcp-server.test.ts sends
  // it each documented kind of request through the SDK's client and by hand.
  'POST /mcp',
]);

let h: Harness;
let llm: FakeOpenAI;
let doc: any;
let validator: OpenApiValidator;
let tokens: Record<'admin' | 'member' | 'anonymous', string | null>;
const seeds: Record<string, string> = {};

beforeAll(async () => {
  llm = await startFakeOpenAI();
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url, LLM_RETRY_MAX_ATTEMPTS: '1' } });
  const member = await createSession(h, 'member');
  tokens = { admin: await h.adminToken(), member: member.token, anonymous: null };
  const tool = await h.request('POST', '/api/tools', { body: { name: 'fuzz_target', description: 'x', parameters: { properties: {} }, webhook_url: 'http://127.0.0.1:9/x' } });
  const agent = await h.request('POST', '/api/agents', { body: { name: 'fuzz-target', prompt: 'p' } });
  await h.request('POST', `/api/agents/${agent.body.id}/nodes`, { body: { node_key: 'start', is_initial: true } });
  const endpoint = await h.request('POST', '/api/settings/endpoints', { body: { phone_number: '+14155550123', provider: 'twilio' } });
  const callId = crypto.randomUUID();
  await h.db.models.Call.create({ id: callId, agent_id: agent.body.id, agent_name: 'fuzz-target', phone_number: '+14155550100', direction: 'inbound', status: 'completed', workflow_id: `call-${callId}`, metadata: {} });
  Object.assign(seeds, { agent_id: agent.body.id, tool_id: tool.body.id, endpoint_id: endpoint.body.id, call_id: callId, node_key: 'start', agent_name: 'fuzz-target' });
  doc = (await h.request('GET', '/api/openapi.json', { token: null })).body;
  validator = new OpenApiValidator(doc);
});
afterAll(async () => {
  await h?.stop();
  await llm?.stop();
});

interface Operation {
  method: string;
  path: string;
  op: any;
}

interface Sent {
  method: string;
  path: string;
  url: string;
  role: keyof typeof tokens;
  body?: unknown;
}

/** One request of an operation: path values (a seeded resource or anything its schema allows), query and body. */
function requestOf(arbitraries: SchemaArbitraries, { method, path, op }: Operation): fc.Arbitrary<Sent> {
  const params = (op.parameters ?? []) as Array<{ name: string; in: string; required: boolean; schema: any }>;
  // A delete gets other values than the seeded resources, which the rest of the run needs.
  const pathValue = (p: { name: string; schema: any }) =>
    seeds[p.name] && method !== 'delete' ? fc.oneof({ arbitrary: fc.constant(seeds[p.name]!), weight: 3 }, { arbitrary: arbitraries.value(p.schema), weight: 1 }) : arbitraries.value(p.schema);
  const pathArb = fc.record(Object.fromEntries(params.filter((p) => p.in === 'path').map((p) => [p.name, pathValue(p)])));
  const queryParams = params.filter((p) => p.in === 'query');
  // The query as one object schema, so that optional parameters are mostly left out, as fields are.
  const querySchema = { type: 'object', properties: Object.fromEntries(queryParams.map((p) => [p.name, p.schema])), required: queryParams.filter((p) => p.required).map((p) => p.name) };
  const queryOf = (broken: boolean) =>
    broken
      ? fc.record(Object.fromEntries(queryParams.map((p) => [p.name, arbitraries.value(p.schema, { broken })])), { requiredKeys: [] })
      : (arbitraries.value(querySchema) as fc.Arbitrary<Record<string, unknown>>);
  // One query in five may hold broken values: with every parameter broken now and then, hardly any would pass.
  const queryArb = fc.oneof({ arbitrary: queryOf(false), weight: 4 }, { arbitrary: queryOf(true), weight: 1 });
  const bodySchema = op.requestBody?.content?.['application/json']?.schema;
  const bodyArb = bodySchema ? arbitraries.value(bodySchema, { broken: true }) : fc.constant(undefined);
  const role = fc.constantFrom<keyof typeof tokens>('admin', 'admin', 'member', 'anonymous');
  return fc.record({ pathValues: pathArb, query: queryArb, body: bodyArb, role }).map(({ pathValues, query, body, role }) => {
    const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(pathValues[name])));
    const search = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined).map(([k, v]): [string, string] => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]));
    return { method: method.toUpperCase(), path, url: `${filled}${search.size ? `?${search}` : ''}`, role, body };
  });
}

async function send(request: Sent) {
  const headers: Record<string, string> = {};
  if (tokens[request.role]) headers.authorization = `Bearer ${tokens[request.role]}`;
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${h.api.url}${request.url}`, { method: request.method, headers, body: request.body === undefined ? undefined : JSON.stringify(request.body) });
  const contentType = res.headers.get('content-type') ?? '';
  const text = await res.text();
  let body: unknown = text;
  if (contentType.startsWith('application/json')) {
    try {
      body = JSON.parse(text);
    } catch {
      return { status: res.status, contentType, body, problem: 'JSON content type with a body that is not JSON' };
    }
  }
  return { status: res.status, contentType, body, problem: null as string | null };
}

it(`answers ${RUNS} requests made from the document as documented, as admin, member and anonymous`, async () => {
  const arbitraries = new SchemaArbitraries(doc.components.schemas);
  const operations: Operation[] = Object.entries(doc.paths as Record<string, Record<string, any>>)
    .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ method, path, op })))
    .filter((o) => !SKIPPED.has(`${o.method.toUpperCase()} ${o.path}`));
  const anyRequest = fc.oneof(...operations.map((o) => requestOf(arbitraries, o)));

  const problems = new Map<string, string>();
  const statuses = new Map<number, number>();
  const covered = new Set<string>();
  await fc.assert(
    fc.asyncProperty(anyRequest, async (request) => {
      const answer = await send(request);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (answer.status < 300) covered.add(`${request.method} ${request.path}`);
      const documented = validator.problem(request.method, request.path, answer);
      const server = answer.status === 500 ? 'a 500' : null;
      const problem = answer.problem ?? server ?? documented;
      const key = `${request.method} ${request.path} as ${request.role}: ${problem}`;
      if (problem && !problems.has(key)) {
        problems.set(key, `${request.method} ${request.url} ${JSON.stringify(request.body)?.slice(0, 300)} → ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
      }
    }),
    { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31), endOnFailure: true },
  );
  if (process.env.FUZZ_REPORT) console.log(JSON.stringify(Object.fromEntries(statuses)), [...covered].sort().join('\n'));
  // Each problem once, with one request that shows it.
  expect([...problems].map(([what, example]) => `${what}\n    e.g. ${example}`)).toEqual([]);
  // The requests reached past validation too: some answers were 2xx.
  expect([...statuses].filter(([status]) => status < 300).reduce((n, [, count]) => n + count, 0)).toBeGreaterThan(RUNS / 10);
}, 120_000);

it('would report an answer outside its schema, an undocumented status and a non-JSON error', () => {
  const json = 'application/json; charset=utf-8';
  expect(validator.problem('GET', '/api/agents/{agent_id}', { status: 200, contentType: json, body: { id: 'not-an-agent' } })).toMatch(/outside its schema/);
  expect(validator.problem('GET', '/api/calls/{call_id}', { status: 200, contentType: json, body: { created_at: '2026-01-01T00:00:00Z' } })).toMatch(/outside its schema/);
  expect(validator.problem('GET', '/api/agents', { status: 418, contentType: json, body: { detail: 'x' } })).toBe('undocumented status 418');
  expect(validator.problem('GET', '/api/agents', { status: 401, contentType: 'text/html', body: '<h1>no</h1>' })).toMatch(/^error 401 as text\/html/);
  expect(validator.problem('GET', '/api/agents', { status: 401, contentType: json, body: { message: 'x' } })).toMatch(/outside its schema/);
  expect(validator.problem('GET', '/api/agents', { status: 401, contentType: json, body: { detail: 'Missing token' } })).toBeNull();
});
