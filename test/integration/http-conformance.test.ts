/**
 * HTTP as a generated client expects it, through the real API over a socket: access is checked
 * before the body (401/403 before 400/413/422), a known path with an unknown method is 405 with
 * `Allow`, a request Node's parser rejects still gets `{detail}` JSON, and every timestamp in a
 * response is in the spec's one form.
 */
import net from 'node:net';
import { createAgent } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { createSession, type Session } from '../support/users';

let h: Harness;
let member: Session;

beforeAll(async () => {
  h = await startHarness();
  member = await createSession(h, 'member');
});
afterAll(async () => {
  await h?.stop();
});

/** Sends raw bytes on a new connection and returns what came back before it closed. */
function rawRequest(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(h.api.port, '127.0.0.1', () => socket.write(bytes, 'latin1'));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer; got ${JSON.stringify(answer)}`)));
  });
}

describe('access before input', () => {
  it.each([
    ['malformed JSON', '{"name": ', 'application/json'],
    ['a JSON number where an object belongs', '-4.0e+16', 'application/json'],
    ['a NUL byte', '{"name": "a\\u0000b"}', 'application/json'],
  ])('an anonymous request with %s is told 401', async (_what, raw, type) => {
    const res = await h.request('POST', '/api/auth/api-keys', { raw, token: null, headers: { 'content-type': type } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ detail: expect.any(String) });
  });

  it('a member with a malformed body on an administrators-only route is told 403', async () => {
    const res = await h.request('POST', '/api/users', { raw: '{"email": ', token: member.token });
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/Administrator/);
  });

  it('a caller who may call the route is told what is wrong with the body', async () => {
    const malformed = await h.request('POST', '/api/agents', { raw: '{"name": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ detail: 'Malformed JSON body' });
    const nul = await h.request('POST', '/api/agents', { raw: '{"name": "a\\u0000b"}' });
    expect(nul.status).toBe(422);
    expect(nul.body.detail).toMatch(/^name: contains a NUL/);
  });

  it('public routes still validate their bodies', async () => {
    const res = await h.request('POST', '/api/auth/login', { raw: '{"email": ', token: null });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: 'Malformed JSON body' });
  });
});

describe('methods', () => {
  it('answers 405 with Allow for a known path and an unknown method', async () => {
    const res = await h.request('PUT', '/api/agents');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(res.body.detail).toMatch(/PUT is not allowed on \/api\/agents/);
  });

  it('matches paths with parameters', async () => {
    const res = await h.request('POST', '/api/agents/00000000-0000-4000-8000-000000000000');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')!.split(', ')).toEqual(expect.arrayContaining(['GET', 'DELETE']));
  });

  it('still answers 404 for a path that does not exist, and 401 before 405 without credentials', async () => {
    const missing = await h.request('GET', '/api/no-such-thing');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: 'No route for GET /api/no-such-thing' });
    const anonymous = await h.request('PUT', '/api/agents', { token: null });
    expect(anonymous.status).toBe(401);
  });
});

describe("requests Node's HTTP parser rejects", () => {
  it('answers a control byte in a header with {detail} JSON', async () => {
    const answer = await rawRequest('GET /api/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \x01abc\r\n\r\n');
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect(head).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(body!)).toEqual({ detail: expect.stringMatching(/Malformed request header/) });
  });

  it('answers headers over the limit with 431 and {detail} JSON', async () => {
    const answer = await rawRequest(`GET /api/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(answer.split('\r\n\r\n')[1]!)).toEqual({ detail: 'Request headers are too large' });
  });
});

describe('one timestamp form', () => {
  const SPEC_FORM = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

  /** Every string under a key that names a time, anywhere in a response. */
  function timestamps(value: unknown, out: Array<[string, unknown]> = [], key = ''): Array<[string, unknown]> {
    if (Array.isArray(value)) value.forEach((v) => timestamps(v, out, key));
    else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) timestamps(v, out, k);
    else if (/(_at|_time)$/.test(key) && value !== null) out.push([key, value]);
    return out;
  }

  it('gives agents, their versions, API keys and users in YYYY-MM-DDTHH:MM:SS', async () => {
    const agent = await createAgent(h.db, h.box, { name: 'timestamps' });
    const key = await h.request('POST', '/api/auth/api-keys', { body: { name: 'ts' } });
    expect(key.status).toBe(201);
    const bodies = await Promise.all(
      [`/api/agents/${agent.id}`, `/api/agents/${agent.id}/versions`, '/api/agents', '/api/auth/api-keys', '/api/users'].map(async (path) => {
        const res = await h.request('GET', path);
        expect(res.status).toBe(200);
        return res.body;
      }),
    );
    const found = timestamps(bodies);
    expect(found.length).toBeGreaterThan(4);
    for (const [k, v] of found) expect(`${k}=${v}`).toMatch(new RegExp(`^${k}=${SPEC_FORM.source.slice(1)}`));
  });
});
