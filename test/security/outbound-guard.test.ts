/**
 * The outbound request guard (SSRF). Loopback targets are refused end to end, through the API and
 * the activities, with a real listener proving nothing arrives; private, link-local and IPv6 ranges
 * are checked at the address check with a stubbed resolver — this machine may send only to
 * 127.0.0.0/8, so no traffic goes anywhere else.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import got from 'got';
import { MockActivityEnvironment } from '@temporalio/testing';
import { startHarness, testConfig, type Harness } from '../support/harness';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver';
import { OutboundGuard, outboundGuard, parseAllowList, type Resolver } from '../../src/security/outbound-guard';
import { loadConfig } from '../../src/config';
import { createToolActivities } from '../../activities/tools';
import { createWebhookActivities } from '../../activities/webhooks';
import { createLogger } from '../../src/shared/logger';

const stubResolver = (answers: Record<string, string[]>): Resolver & { calls: string[] } => {
  const calls: string[] = [];
  const resolver = async (hostname: string) => {
    calls.push(hostname);
    const addresses = answers[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
  };
  return Object.assign(resolver, { calls });
};

describe('the address check (no traffic: stubbed resolver)', () => {
  const guard = outboundGuard({});

  it.each([
    ['10.1.2.3', 'a private'],
    ['172.16.5.4', 'a private'],
    ['192.168.0.10', 'a private'],
    ['169.254.169.254', 'a link-local'],
    ['100.64.0.1', 'a carrier-grade NAT'],
    ['127.0.0.1', 'a loopback'],
    ['127.255.255.254', 'a loopback'],
    ['0.0.0.0', 'an unspecified'],
    ['255.255.255.255', 'a broadcast'],
    ['224.0.0.251', 'a multicast'],
    ['198.18.0.1', 'a reserved'],
    ['::1', 'a loopback'],
    ['::', 'an unspecified'],
    ['fe80::1', 'a link-local'],
    ['fd12:3456:789a::1', 'a unique-local'],
    ['fc00::1', 'a unique-local'],
    ['ff02::1', 'a multicast'],
    ['fec0::1', 'a site-local'],
    ['::ffff:10.0.0.1', 'a private'],
    ['::ffff:127.0.0.1', 'a loopback'],
    ['::ffff:169.254.169.254', 'a link-local'],
    ['64:ff9b::7f00:1', 'a reserved'],
    ['2002:7f00:1::', 'a reserved'],
  ])('refuses %s as %s address', (address, what) => {
    expect(guard.addressProblem(address)).toMatch(new RegExp(`^blocked: .* is ${what} address; allow it with WEBHOOK_ALLOWED_NETWORKS$`));
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:93.184.216.34'])('lets the public address %s through', (address) => {
    expect(guard.addressProblem(address)).toBeNull();
  });

  it.each([
    ['http://2130706433/x', '127.0.0.1'],
    ['http://0x7f000001/x', '127.0.0.1'],
    ['http://0177.0.0.1/x', '127.0.0.1'],
    ['http://127.1/x', '127.0.0.1'],
    ['http://0/x', '0.0.0.0'],
    ['http://[::ffff:7f00:1]/x', '127.0.0.1'],
    ['http://[0:0:0:0:0:ffff:a00:1]/x', '10.0.0.1'],
    ['http://[::1]:8233/x', '::1'],
    ['https://10.0.0.5:8443/x', '10.0.0.5'],
  ])('sees through the literal address form of %s', (url, address) => {
    expect(guard.urlProblem(new URL(url))).toBe(`blocked: ${address} is ${guard.addressProblem(address)!.split(' is ')[1]}`);
  });

  it.each([
    ['ftp://example.com/x', /only http and https/],
    ['file:///etc/passwd', /only http and https/],
    ['gopher://example.com/', /only http and https/],
    ['http://unix:/var/run/docker.sock:/containers/json', /Unix sockets are not allowed/],
    ['unix:/tmp/x.sock:/a', /only http and https/],
  ])('refuses %s', (url, message) => {
    expect(guard.urlProblem(new URL(url))).toMatch(message);
  });

  it('checks every address a name resolves to, and names them in the refusal', async () => {
    const resolver = stubResolver({
      'metadata.attacker.test': ['169.254.169.254'],
      'mixed.attacker.test': ['93.184.216.34', '10.0.0.8'],
      'v6.attacker.test': ['fd00::5'],
      'mapped.attacker.test': ['::ffff:192.168.1.1'],
      'public.example.test': ['93.184.216.34', '2606:4700:4700::1111'],
    });
    const g = new OutboundGuard(parseAllowList(undefined), resolver);
    await expect(g.resolve('metadata.attacker.test')).rejects.toThrow(
      'blocked: metadata.attacker.test resolves to 169.254.169.254, a link-local address; allow it with WEBHOOK_ALLOWED_NETWORKS',
    );
    await expect(g.resolve('mixed.attacker.test')).rejects.toThrow(/resolves to 10\.0\.0\.8, a private address/);
    await expect(g.resolve('v6.attacker.test')).rejects.toThrow(/resolves to fd00::5, a unique-local address/);
    await expect(g.resolve('mapped.attacker.test')).rejects.toThrow(/resolves to 192\.168\.1\.1, a private address/);
    await expect(g.resolve('public.example.test')).resolves.toEqual({ address: '93.184.216.34', family: 4 });
    await expect(g.resolve('nowhere.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('opens exactly the networks and host names of WEBHOOK_ALLOWED_NETWORKS', async () => {
    const resolver = stubResolver({ 'crm.internal': ['10.20.0.7'], 'other.internal': ['10.20.0.8'] });
    const g = new OutboundGuard(parseAllowList('192.168.10.0/24, fd00:abcd::/32, 169.254.10.10, crm.internal'), resolver);
    expect(g.addressProblem('192.168.10.99')).toBeNull();
    expect(g.addressProblem('192.168.11.1')).toMatch(/private/);
    expect(g.addressProblem('fd00:abcd::9')).toBeNull();
    expect(g.addressProblem('fd00:abce::9')).toMatch(/unique-local/);
    expect(g.addressProblem('169.254.10.10')).toBeNull();
    expect(g.addressProblem('169.254.169.254')).toMatch(/link-local/);
    expect(g.addressProblem('::ffff:192.168.10.5')).toBeNull();
    await expect(g.resolve('crm.internal')).resolves.toEqual({ address: '10.20.0.7', family: 4 });
    await expect(g.resolve('other.internal')).rejects.toThrow(/private/);
  });

  it('rejects a malformed WEBHOOK_ALLOWED_NETWORKS at start-up, naming the variable', () => {
    expect(() => parseAllowList('10.0.0.0/8, not a network!')).toThrow(/"not a network!"/);
    expect(() => loadConfig({ ...process.env, WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/33' })).toThrow(/WEBHOOK_ALLOWED_NETWORKS/);
  });
});

describe('connecting to the address that was checked (loopback only)', () => {
  it('resolves once per new connection and connects to that answer, so a rebinding name gains nothing', async () => {
    const server = http.createServer((req, res) => res.end(JSON.stringify({ host: req.headers.host })));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const answers: Record<string, string[]> = { 'rebind.test': ['127.0.0.1'] };
    const resolver = stubResolver(answers);
    const g = new OutboundGuard(parseAllowList('127.0.0.0/8'), resolver);
    try {
      // The system resolver does not know rebind.test: the request can only have used the checked answer.
      const first = await got(`http://rebind.test:${port}/`, { ...g.gotOptions(), retry: { limit: 0 } }).json<{ host: string }>();
      expect(first.host).toBe(`rebind.test:${port}`);
      expect(resolver.calls).toEqual(['rebind.test']);
      // The name now answers a blocked address: the next connection is refused before it is made.
      // (A kept-alive connection stays with the address it was checked for; close it first.)
      answers['rebind.test'] = ['10.0.0.1'];
      server.closeIdleConnections();
      await new Promise((r) => setTimeout(r, 50));
      await expect(got(`http://rebind.test:${port}/`, { ...g.gotOptions(), retry: { limit: 0 } })).rejects.toThrow(/blocked: rebind\.test resolves to 10\.0\.0\.1/);
    } finally {
      server.close();
    }
  });
});

describe('end to end: tool webhooks, in-call tools and agent webhooks', () => {
  let guarded: Harness;
  let open: Harness;
  let namedOnly: Harness;
  let hook: WebhookReceiver;
  let socketDir: string;
  let unixServer: http.Server;
  let unixHits = 0;

  beforeAll(async () => {
    // No WEBHOOK_ALLOWED_NETWORKS: the platform's default. `open` allows loopback like the other tests;
    // `namedOnly` allows the name localhost but not 127.0.0.1 itself (redirects are checked again).
    [guarded, open, namedOnly] = await Promise.all([
      startHarness({ env: { WEBHOOK_ALLOWED_NETWORKS: '' } }),
      startHarness(),
      startHarness({ env: { WEBHOOK_ALLOWED_NETWORKS: 'localhost' } }),
    ]);
    hook = await startWebhookReceiver();
    socketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-sock-'));
    unixServer = http.createServer((_req, res) => (unixHits++, res.end('{"from":"unix socket"}')));
    await new Promise<void>((r) => unixServer.listen(path.join(socketDir, 'api.sock'), r));
  });
  afterAll(async () => {
    unixServer.close();
    fs.rmSync(socketDir, { recursive: true, force: true });
    await hook.stop();
    await Promise.all([guarded?.stop(), open?.stop(), namedOnly?.stop()]);
  });
  beforeEach(() => {
    hook.reset();
    unixHits = 0;
  });

  let counter = 0;
  async function testTool(h: Harness, webhook_url: string) {
    const created = await h.request('POST', '/api/tools', {
      body: { name: `target_${++counter}`, description: 'x', parameters: { properties: {} }, webhook_url },
    });
    expect(created.status).toBe(201);
    const res = await h.request('POST', `/api/tools/${created.body.id}/test`, { body: { args: {} } });
    expect(res.status).toBe(200);
    return res.body as { status_code: number | null; error: string | null; response: unknown };
  }

  it('refuses every loopback form and Unix sockets, and nothing reaches the listeners', async () => {
    const port = new URL(hook.url).port;
    const targets: Array<[string, RegExp]> = [
      [`http://127.0.0.1:${port}/a`, /^blocked: 127\.0\.0\.1 is a loopback address/],
      [`http://localhost:${port}/a`, /^blocked: localhost resolves to (127\.0\.0\.1|::1), a loopback address/],
      [`http://2130706433:${port}/a`, /^blocked: 127\.0\.0\.1 is a loopback address/],
      [`http://0x7f000001:${port}/a`, /^blocked: 127\.0\.0\.1 is a loopback address/],
      [`http://[::ffff:127.0.0.1]:${port}/a`, /^blocked: 127\.0\.0\.1 is a loopback address/],
      [`http://[::1]:${port}/a`, /^blocked: ::1 is a loopback address/],
      [`http://0.0.0.0:${port}/a`, /^blocked: 0\.0\.0\.0 is an unspecified address/],
      [`http://unix:${path.join(socketDir, 'api.sock')}:/containers`, /^blocked: Unix sockets are not allowed/],
    ];
    for (const [url, error] of targets) {
      const result = await testTool(guarded, url);
      expect({ url, status_code: result.status_code, error: result.error }).toEqual({ url, status_code: null, error: expect.stringMatching(error) });
    }
    expect(hook.requests).toHaveLength(0);
    expect(unixHits).toBe(0);
  });

  it('answers the same for a port that listens and one that does not (no port scanning)', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const listening = await testTool(guarded, `${hook.url}/x`);
    const silent = await testTool(guarded, `http://127.0.0.1:${closed}/x`);
    expect(listening.error).toBe(silent.error);
    expect(listening.error).toBe('blocked: 127.0.0.1 is a loopback address; allow it with WEBHOOK_ALLOWED_NETWORKS');
  });

  it('checks redirects again: an allowed host that redirects into loopback is refused', async () => {
    const port = new URL(hook.url).port;
    hook.respond({ status: 302, body: '', headers: { location: `http://127.0.0.1:${port}/inside` } }, { path: '/hop' });
    const result = await testTool(namedOnly, `http://localhost:${port}/hop`);
    expect(result.error).toMatch(/^blocked: 127\.0\.0\.1 is a loopback address/);
    expect(hook.requests.map((r) => r.path)).toEqual(['/hop']);
  });

  it('lets an allowed network through', async () => {
    hook.respond({ status: 200, body: { ok: 'allowed' } });
    const result = await testTool(open, `${hook.url}/allowed`);
    expect(result).toMatchObject({ status_code: 200, error: null, response: { ok: 'allowed' } });
    expect(hook.requests.map((r) => r.path)).toEqual(['/allowed']);
  });

  it('guards in-call tool requests and agent webhook deliveries (the worker activities)', async () => {
    const config = testConfig({ WEBHOOK_ALLOWED_NETWORKS: '' });
    const deps = { config, db: guarded.db, box: guarded.box, log: createLogger('worker') };
    const env = new MockActivityEnvironment();
    const tool = { id: 'x', name: 'lookup', description: 'x', parameters: { properties: {}, required: [] }, webhook_url: `${hook.url}/in-call`, webhook_method: 'POST' as const, headers_encrypted: null, timeout_secs: 5, owner_id: null };
    const outcome = await env.run(createToolActivities(deps).callTool, { callId: 'c', toolCallId: 't', tool, args: {} } as never);
    expect(outcome).toMatchObject({ status_code: null, error: expect.stringMatching(/^blocked: 127\.0\.0\.1 is a loopback address/) });

    const delivery = {
      url: `${hook.url}/events`,
      agentId: '00000000-0000-4000-8000-000000000000',
      secretEncrypted: null,
      messageId: 'msg_1',
      initialRetrySecs: 1,
      payload: { type: 'call_ended', call_id: 'c', agent_name: 'a', phone_number: '+14155550123', direction: 'inbound', timestamp_ms: Date.now(), data: {} },
    };
    await expect(env.run(createWebhookActivities(deps).deliverWebhook, delivery as never)).rejects.toMatchObject({
      type: 'WebhookBlocked',
      nonRetryable: true,
      message: expect.stringMatching(/^blocked: 127\.0\.0\.1 is a loopback address/),
    });
    expect(hook.requests).toHaveLength(0);
  });
});
