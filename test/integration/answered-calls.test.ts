/**
 * The gateway's write when a call's stream starts (src/gateway/stream/answered-calls.ts): the call is in
 * progress and held by this gateway from its first word, so the gateway watchdog finds it should
 * the gateway die before the workflow's own write (which comes after the greeting). Real
 * PostgreSQL, through the gateway's own pool.
 */
import crypto from 'node:crypto';
import type { Pool } from 'pg';
import type { CallStatus } from '../../src/db/models';
import { AnsweredCalls } from '../../src/gateway/stream/answered-calls';
import { openGatewayDatabase } from '../../src/gateway/gateway-database';
import { createLogger } from '../../src/shared/logger';
import { startHarness, type Harness } from '../support/harness';

let h: Harness;
let pool: Pool;
beforeAll(async () => {
  h = await startHarness();
  pool = openGatewayDatabase(h.dbUrl, createLogger('test'));
});
afterAll(async () => {
  await pool?.end();
  await h?.stop();
});

async function insertCall(status: CallStatus, gatewayId: string | null = null): Promise<string> {
  const id = crypto.randomUUID();
  await h.db.models.Call.create({ id, agent_name: 'support-bot', phone_number: '+14155550123', direction: 'outbound', status, workflow_id: `call-${id}`, gateway_id: gatewayId });
  return id;
}

const row = async (id: string) => (await h.db.models.Call.findByPk(id))!.get({ plain: true }) as { status: string; gateway_id: string | null; start_time: Date | null };

describe('the gateway marks a call when its stream starts', () => {
  const answered = () => new AnsweredCalls(pool, 'gateway-a', createLogger('test'));
  const at = Date.parse('2026-11-27T12:00:00Z');

  it('a ringing call: in progress from the stream start, on this gateway', async () => {
    const id = await insertCall('ringing');
    await answered().mark(id, at);
    expect(await row(id)).toMatchObject({ status: 'in_progress', gateway_id: 'gateway-a', start_time: new Date(at) });
  });

  it('an inbound call already in progress: names this gateway, keeps its status', async () => {
    const id = await insertCall('in_progress');
    await answered().mark(id, at);
    expect(await row(id)).toMatchObject({ status: 'in_progress', gateway_id: 'gateway-a' });
  });

  it('leaves a gateway already named (a second stream elsewhere must not take the watchdog off it)', async () => {
    const id = await insertCall('in_progress', 'gateway-b');
    await answered().mark(id, at);
    expect((await row(id)).gateway_id).toBe('gateway-b');
  });

  it('leaves a final call as it is', async () => {
    const id = await insertCall('completed');
    await answered().mark(id, at);
    expect(await row(id)).toMatchObject({ status: 'completed', gateway_id: null });
  });
});
