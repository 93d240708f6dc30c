/**
 * The agent API beyond create, read, update and delete (agents.test.ts): call statistics per
 * agent, rotating an agent's webhook secret, and the endpoints' OpenAPI documentation. Real API
 * over HTTP and PostgreSQL; this file's harness has a database of its own.
 */
import crypto from 'node:crypto';
import { insertCall } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

async function createAgent(body: Record<string, unknown>) {
  const res = await h.request('POST', '/api/agents', { body: { prompt: 'You are helpful.', ...body } });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

describe('GET /api/agents/stats', () => {
  it('counts calls overall and per agent, with average durations of completed calls', async () => {
    // This file's harness has a database of its own: no other file's calls are counted.
    const empty = await h.request('GET', '/api/agents/stats');
    expect(empty.body).toEqual({ total_calls: 0, active_calls: 0, completed_calls: 0, failed_calls: 0, avg_duration: 0, agents: [] });

    const sales = await createAgent({ name: 'sales' });
    const support = await createAgent({ name: 'support' });
    await insertCall(h.db, sales, 'completed', 60);
    await insertCall(h.db, sales, 'completed', 30);
    await insertCall(h.db, sales, 'failed');
    await insertCall(h.db, sales, 'in_progress');
    await insertCall(h.db, support, 'ringing');
    await insertCall(h.db, support, 'no_answer');
    await insertCall(h.db, support, 'completed', 10.5);
    await insertCall(h.db, null, 'completed', 100);

    const res = await h.request('GET', '/api/agents/stats');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      total_calls: 8,
      active_calls: 2,
      completed_calls: 4,
      failed_calls: 1,
      avg_duration: 50.13,
      agents: [
        { agent_id: sales.id, agent_name: 'sales', total_calls: 4, completed: 2, failed: 1, avg_duration: 45 },
        { agent_id: support.id, agent_name: 'support', total_calls: 3, completed: 1, failed: 0, avg_duration: 10.5 },
      ],
    });
  });
});

describe('POST /api/agents/{agent_id}/webhook-secret', () => {
  it('replaces the secret with a new one, returned once', async () => {
    const a = await createAgent({ name: 'rotating' });
    const res = await h.request('POST', `/api/agents/${a.id}/webhook-secret`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['webhook_secret']);
    expect(res.body.webhook_secret).toMatch(/^whsec_/);
    expect(res.body.webhook_secret).not.toBe(a.webhook_secret);
    const stored = await h.db.models.Agent.findByPk(a.id);
    expect(h.box.decrypt(stored!.get('webhook_secret_encrypted') as string)).toBe(res.body.webhook_secret);
    expect((await h.request('POST', `/api/agents/${crypto.randomUUID()}/webhook-secret`)).status).toBe(404);
  });
});

describe('OpenAPI', () => {
  it('documents the agent endpoints with their error statuses', async () => {
    const doc = (await h.request('GET', '/api/openapi.json')).body;
    expect(Object.keys(doc.paths['/api/agents/{agent_id}'])).toEqual(expect.arrayContaining(['get', 'patch', 'delete']));
    expect(Object.keys(doc.paths['/api/agents'].post.responses)).toEqual(expect.arrayContaining(['201', '401', '409', '422']));
    expect(doc.paths['/api/agents/stats'].get.responses['200']).toBeDefined();
    expect(doc.paths['/api/agents/{agent_id}/webhook-secret'].post.responses['404']).toBeDefined();
  });
});
