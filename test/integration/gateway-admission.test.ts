/**
 * Admission by media gateway room (docs/call-lifecycle.md): each gateway publishes its presence in
 * PostgreSQL and the API admits a voice call only when a live gateway has room for it. Real API,
 * worker, gateway, PostgreSQL and Temporal; Twilio is the protocol fake.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Op } from 'sequelize';
import type { Pool } from 'pg';
import { openGatewayDatabase } from '../../src/gateway/gateway-database';
import { GatewayPresence } from '../../src/gateway/admission/presence';
import { startGateway, type RunningGateway } from '../../src/gateway/server';
import { createLogger } from '../../src/shared/logger';
import { getFreePort } from '../../src/temporal/dev-server';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { createAgent, eventually } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { defaultProviderEnv, FakePool } from '../support/speech-vendors';
import { configureTwilio } from '../support/telephony';

const ACCOUNT_SID = `AC${'a1'.repeat(16)}`;
const AUTH_TOKEN = 'admission-test-auth-token-0123456789';
const OUR_NUMBER = '+15005550006';

let h: Harness;
let twilio: FakeTwilio;
let gatewayPort: number;
const speechFakes = new FakePool();

beforeAll(async () => {
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, ringMs: 60_000 });
  gatewayPort = await getFreePort();
  const speechEnv = await defaultProviderEnv(speechFakes);
  h = await startHarness({ env: { ...speechEnv, TWILIO_API_BASE_URL: twilio.apiBaseUrl, GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}` }, worker: true });
  await createAgent(h.db, h.box, { name: 'campaign-bot' });
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER });
});
afterAll(async () => {
  await h?.stop();
  await twilio?.stop();
  await speechFakes.stopAll();
});

const dial = (to: string) => h.request('POST', '/api/calls/outbound', { body: { phone_number: to, agent_name: 'campaign-bot' } });

async function endActiveCalls() {
  const active = await h.db.models.Call.findAll({ where: { status: { [Op.in]: ['ringing', 'in_progress'] } }, attributes: ['id'] });
  await Promise.all(active.map((row) => h.request('POST', '/api/calls/end', { body: { call_id: row.get('id') } })));
}

async function refusedMetric(reason: string, direction: string): Promise<number> {
  const text = await (await fetch(`${h.api.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`voice_calls_refused_total{reason="${reason}",direction="${direction}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('admission by gateway room', () => {
  it('refuses an outbound call with 503 and Retry-After when no gateway runs, and dials nothing', async () => {
    const before = twilio.requests.length;
    const res = await dial('+14155550301');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.body.detail).toMatch(/no media gateway is running/i);
    expect(twilio.requests.length).toBe(before);
    expect(await h.db.models.Call.count({ where: { phone_number: '+14155550301' } })).toBe(0);
    expect(await refusedMetric('no_gateway', 'outbound')).toBe(1);
  });

  describe('with a gateway that holds at most one call', () => {
    let gateway: RunningGateway;
    beforeAll(async () => {
      // Room by call count (the harness keeps the load threshold out of reach: see testConfig).
      gateway = await startGateway({ ...h.gatewayDeps(), config: { ...h.config, GATEWAY_MAX_CALLS: 1 } }, gatewayPort, '127.0.0.1');
      await eventually(async () => (await h.db.models.Call.sequelize!.query(`SELECT id FROM gateways WHERE admitting`))[0].length > 0);
    });
    afterAll(async () => {
      await endActiveCalls();
      await gateway?.stop();
    });

    it('publishes its presence: state, room and load', async () => {
      const [rows] = await h.db.sequelize.query(`SELECT id, state, max_calls, calls, admitting, load, extract(epoch from now() - seen_at) AS age FROM gateways`);
      expect(rows).toEqual([expect.objectContaining({ id: gateway.taskQueue, state: 'active', max_calls: 1, calls: 0, admitting: true })]);
      const row = rows[0] as { load: number; age: string };
      expect(row.load).toBeGreaterThanOrEqual(0);
      expect(row.load).toBeLessThan(1);
      expect(Number(row.age)).toBeLessThan(2.5);
      const health = (await (await fetch(`http://127.0.0.1:${gatewayPort}/healthz`)).json()) as { presence: unknown };
      expect(health.presence).toMatchObject({ state: 'active', admitting: true, refusal: null, own_cpu: expect.any(Number), host_cpu: expect.any(Number), handoff_lag_ms: 0 });
      const metrics = await (await fetch(`http://127.0.0.1:${gatewayPort}/metrics`)).text();
      expect(metrics).toMatch(/^voice_gateway_admitting 1$/m);
      expect(Number(/^voice_gateway_load (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(0);
      // The machine's CPU, which counts as load against GATEWAY_MAX_HOST_CPU: a share of all cores.
      const hostCpu = Number(/^voice_gateway_host_cpu (\S+)$/m.exec(metrics)?.[1]);
      expect(hostCpu).toBeGreaterThanOrEqual(0);
      expect(hostCpu).toBeLessThanOrEqual(1);
      expect(metrics).toMatch(/^voice_gateway_handoff_lag_seconds 0$/m);
    });

    it('admits a call while there is room, refuses the next one, and admits again once it ended', async () => {
      const first = await dial('+14155550311');
      expect(first.status).toBe(201);
      const second = await dial('+14155550312');
      expect(second.status).toBe(503);
      expect(second.headers.get('retry-after')).toBe('5');
      expect(second.body.detail).toMatch(/at capacity/i);
      expect(await refusedMetric('at_capacity', 'outbound')).toBe(1);
      await h.request('POST', '/api/calls/end', { body: { call_id: first.body.call_id } });
      await eventually(async () => (await h.db.models.Call.findByPk(first.body.call_id))?.get('status') !== 'ringing');
      const third = await dial('+14155550313');
      expect(third.status).toBe(201);
      await endActiveCalls();
    });

    it("answers an inbound call with Twilio's busy rejection when there is no room, and records it no_answer with the reason", async () => {
      const ringing = await dial('+14155550321');
      expect(ringing.status).toBe(201);
      const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/campaign-bot`, from: '+14155550399', to: OUR_NUMBER });
      expect(fake.verbs).toEqual([{ verb: 'Reject', reason: 'busy' }]);
      const row = await eventually(async () => (await h.db.models.Call.findOne({ where: { phone_number: '+14155550399' } }))?.get({ plain: true }));
      expect(row).toMatchObject({ status: 'no_answer', direction: 'inbound', provider: 'twilio', provider_call_sid: fake.sid });
      const events = (await h.request('GET', `/api/calls/${row.id}/events`)).body as Array<{ event_type: string; data: Record<string, unknown> }>;
      expect(events.map((e) => e.event_type)).toEqual(['call_status', 'call_ended']);
      expect(events[0]!.data).toMatchObject({ status: 'refused', source: 'admission', reason: 'at_capacity' });
      expect(await refusedMetric('at_capacity', 'inbound')).toBe(1);
      await endActiveCalls();
    });
  });

  describe('with a gateway that has learnt what its calls cost', () => {
    // The gateway's presence writer, driven by a scripted load: 5 calls made a load of 0.5 (0.1 a
    // call), then the load stays at 0.6 with no calls of its own — 0.2 under GATEWAY_MAX_LOAD 0.8
    // pays for 2 calls, not the 100 of GATEWAY_MAX_CALLS.
    let pool: Pool;
    let presence: GatewayPresence;
    beforeAll(async () => {
      const log = createLogger('gateway-room-test');
      pool = openGatewayDatabase(h.dbUrl, log);
      let readings = 0;
      const meter = { read: () => ({ load: readings++ === 0 ? 0.5 : 0.6, utilisation: 0.5, loopLagP99Ms: 0, cpu: 0.5, hostCpu: 0 }), stop: () => undefined };
      presence = new GatewayPresence({ pool, id: 'gateway-room-test', url: 'ws://127.0.0.1:1', maxCalls: 100, maxLoad: 0.8, calls: () => (readings <= 1 ? 5 : 0), log, meter });
      await presence.start();
      await presence.setState('active');
    });
    afterAll(async () => {
      await endActiveCalls();
      await presence?.stop();
      await pool?.end();
    });

    it('offers the room its load leaves, and the API admits by it', async () => {
      const [rows] = await h.db.sequelize.query(`SELECT max_calls, room, admitting FROM gateways WHERE id = 'gateway-room-test'`);
      expect(rows).toEqual([{ max_calls: 100, room: 2, admitting: true }]);
      expect(presence.snapshot.room).toBe(2);
      expect((await dial('+14155550331')).status).toBe(201);
      expect((await dial('+14155550332')).status).toBe(201);
      const third = await dial('+14155550333');
      expect(third.status).toBe(503);
      expect(third.body.detail).toMatch(/at capacity \(2 calls for room of 2\)/i);
    });
  });

  describe('with a gateway whose calls wait for their workflows', () => {
    // The presence writer with a quiet load and a scripted hand-off lag: a call connected 4 s ago
    // still waits for its workflow's first request (a worker behind a burst), then the wait is over.
    let pool: Pool;
    let presence: GatewayPresence;
    let lagMs = 4000;
    beforeAll(async () => {
      const log = createLogger('gateway-handoff-test');
      pool = openGatewayDatabase(h.dbUrl, log);
      const meter = { read: () => ({ load: 0.1, utilisation: 0.1, loopLagP99Ms: 0, cpu: 0.1, hostCpu: 0 }), stop: () => undefined };
      presence = new GatewayPresence({ pool, id: 'gateway-handoff-test', url: 'ws://127.0.0.1:2', maxCalls: 100, maxLoad: 0.8, calls: () => 1, handoffLagMs: () => lagMs, maxHandoffMs: 3000, log, meter });
      await presence.start();
    });
    afterAll(async () => {
      await endActiveCalls();
      await presence?.stop();
      await pool?.end();
    });

    it('admits nothing while a call waits GATEWAY_MAX_HANDOFF_MS for its workflow, and admits again once the workflows catch up', async () => {
      expect(presence.snapshot).toMatchObject({ admitting: false, refusal: 'handoff_lag', room: 1, handoffLagMs: 4000 });
      const refused = await dial('+14155550341');
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.body.detail).toMatch(/at capacity/i);
      lagMs = 150;
      await presence.setState('active');
      expect(presence.snapshot).toMatchObject({ admitting: true, refusal: null, handoffLagMs: 150 });
      expect((await dial('+14155550342')).status).toBe(201);
    });
  });

  describe('with an idle gateway on a machine other programs keep busy', () => {
    // The presence writer with a scripted reading: the gateway's own load 0.02 and no calls, the
    // machine's cores 95 % busy with someone else's work (over GATEWAY_MAX_HOST_CPU 0.8).
    let pool: Pool;
    let presence: GatewayPresence;
    beforeAll(async () => {
      const log = createLogger('gateway-busy-host-test');
      pool = openGatewayDatabase(h.dbUrl, log);
      const meter = { read: () => ({ load: 0.02, utilisation: 0.02, loopLagP99Ms: 0, cpu: 0.04, ownCpu: 0.02, hostCpu: 0.95 }), stop: () => undefined };
      presence = new GatewayPresence({ pool, id: 'gateway-busy-host-test', url: 'ws://127.0.0.1:3', maxCalls: 100, maxLoad: 0.8, maxHostCpu: 0.8, minCalls: 4, calls: () => 0, log, meter });
      await presence.start();
      // The machine's CPU enters the smoothed load over a few seconds.
      await eventually(async () => {
        await presence.setState('active');
        return presence.snapshot.smoothedLoad >= 0.8;
      });
    });
    afterAll(async () => {
      await endActiveCalls();
      await presence?.stop();
      await pool?.end();
    });

    it('admits calls up to GATEWAY_MIN_CALLS, not one more', async () => {
      expect(presence.snapshot).toMatchObject({ admitting: true, refusal: null, room: 4 });
      for (const n of [1, 2, 3, 4]) expect((await dial(`+1415555036${n}`)).status).toBe(201);
      const fifth = await dial('+14155550365');
      expect(fifth.status).toBe(503);
      expect(fifth.body.detail).toMatch(/at capacity \(4 calls for room of 4\)/i);
    });
  });

  describe('with a gateway in a container with a CPU limit', () => {
    // A real gateway given "the cgroup files" (GATEWAY_CGROUP_DIR): no cgroup v2 of our own can be
    // made on this machine, so a directory holds cpu.max (a quota of one core) and a cpu.stat whose
    // counters a timer advances as the kernel would, at the rate the test sets. The machine's CPU
    // (busy with other engineers' work) does not count inside a quota.
    let gateway: RunningGateway;
    let timer: NodeJS.Timeout;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-cgroup-'));
    let rate = 1; // cores used of the one allowed
    let throttledShare = 0.5; // of its 100 ms periods
    const stat = { usageUsec: 0, periods: 0, throttled: 0 };
    beforeAll(async () => {
      fs.writeFileSync(path.join(dir, 'cpu.max'), '100000 100000\n');
      let at = Date.now();
      const advance = () => {
        const now = Date.now();
        const periods = (now - at) / 100;
        stat.usageUsec += Math.round((now - at) * 1000 * rate);
        stat.periods += periods;
        stat.throttled += periods * throttledShare;
        at = now;
        fs.writeFileSync(path.join(dir, 'cpu.stat'), `usage_usec ${stat.usageUsec}\nnr_periods ${Math.floor(stat.periods)}\nnr_throttled ${Math.floor(stat.throttled)}\nthrottled_usec 0\n`);
      };
      advance();
      timer = setInterval(advance, 100);
      gateway = await startGateway({ ...h.gatewayDeps(), config: { ...h.config, GATEWAY_MAX_LOAD: 0.8, GATEWAY_CGROUP_DIR: dir } }, gatewayPort, '127.0.0.1');
    });
    afterAll(async () => {
      await endActiveCalls();
      await gateway?.stop();
      clearInterval(timer);
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const health = async () => ((await (await fetch(`http://127.0.0.1:${gatewayPort}/healthz`)).json()) as { presence: { admitting: boolean; refusal: string | null; cgroup: { quota_cores: number; usage: number } | null } }).presence;

    it('refuses while its cgroup uses its quota up, and admits once its usage is low', async () => {
      await eventually(async () => (await health()).refusal === 'cgroup_cpu', 15_000);
      expect((await health()).cgroup).toMatchObject({ quota_cores: 1, usage: expect.any(Number) });
      expect((await health()).cgroup!.usage).toBeGreaterThan(0.8);
      const [rows] = await h.db.sequelize.query(`SELECT admitting, room FROM gateways WHERE id = '${gateway.taskQueue}'`);
      expect(rows).toEqual([{ admitting: false, room: 0 }]);
      const metrics = await (await fetch(`http://127.0.0.1:${gatewayPort}/metrics`)).text();
      expect(Number(/^voice_gateway_cgroup_cpu (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0.8);
      expect(metrics).toMatch(/^voice_gateway_admitting 0$/m);
      const refused = await dial('+14155550351');
      expect(refused.status).toBe(503);
      expect(refused.body.detail).toMatch(/at capacity/i);

      rate = 0.05;
      throttledShare = 0;
      await eventually(async () => (await health()).admitting, 15_000);
      expect((await health()).cgroup!.usage).toBeLessThan(0.5);
      await eventually(async () => ((await h.db.sequelize.query(`SELECT admitting FROM gateways WHERE id = '${gateway.taskQueue}'`))[0][0] as { admitting: boolean }).admitting);
      expect((await dial('+14155550352')).status).toBe(201);
    });
  });
});
