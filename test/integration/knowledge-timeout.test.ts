/**
 * A retrieval slower than the agent's `knowledge_timeout_ms` never delays a turn by more than
 * that budget (docs/knowledge-base.md, "In a call"). Retrieval is made slow in PostgreSQL itself:
 * a second connection holds the chunk table in ACCESS EXCLUSIVE mode, so every search waits on
 * the lock. Each turn of a text call (real API, Temporal workflow, worker, PostgreSQL; the LLM a
 * local fake) reaches the LLM within the budget and a small margin, without passages, and records
 * `knowledge_skipped` naming the timeout. PostgreSQL cancels each search given up on at the same
 * budget, so more turns than the database pool has connections go the same way (abandoned
 * searches once held the pool the call's own activities needed), and once the lock is gone the
 * call retrieves again. In `tool` mode the search activity's deadline bounds it the same way.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { eventually } from '../support/fixtures';
import { events, h, hangUp, llm, say, startText, useTextCallStack } from '../support/text-call-stack';

useTextCallStack();

const FAQ = path.join(__dirname, '..', 'fixtures', 'knowledge', 'clinic-faq.md');
const BUDGET_MS = 300;
// What a turn costs besides retrieval here (the update to the workflow, the activity, the HTTP
// round trips) on a loaded 2-core machine; a search waiting on the lock would take the lock's time.
const MARGIN_MS = 700;
// More turns than the harness's pool (5 connections, shared by the API and the worker).
const LOCKED_TURNS = 7;

let baseId: string;

beforeAll(async () => {
  baseId = (await h.request('POST', '/api/knowledge-bases', { body: { name: 'clinic' } })).body.id;
  const doc = await h.request('POST', `/api/knowledge-bases/${baseId}/documents`, { body: { name: 'clinic-faq.md', content_base64: fs.readFileSync(FAQ).toString('base64') } });
  expect(doc.status).toBe(202);
  await eventually(async () => (await h.request('GET', `/api/knowledge-bases/${baseId}/documents/${doc.body.id}`)).body.status === 'ready', 20_000, 50);
  const agent = await h.request('POST', '/api/agents', {
    body: { name: 'kb-budget', prompt: 'You answer questions for Sunrise Clinic.', knowledge_base_ids: [baseId], knowledge_mode: 'auto', knowledge_timeout_ms: BUDGET_MS },
  });
  expect(agent.status).toBe(201);
});

/** One turn: how long until the LLM was asked and until the reply came, and what the LLM was given. */
async function timedTurn(callId: string, text: string) {
  const started = performance.now();
  let askedAt = 0;
  let body: any;
  llm.setResponder((b) => {
    askedAt = performance.now();
    body = b;
    return { content: 'Here is what I found.' };
  });
  const reply = await say(callId, text);
  return { reply, askedMs: askedAt - started, replyMs: performance.now() - started, hadPassages: body.messages.some((m: any) => m.role === 'system' && m.content.includes('<knowledge>')) };
}

it('a retrieval timeout never delays a turn by more than its budget, and the call goes on', async () => {
  const call = await startText('kb-budget');
  const before = await timedTurn(call.call_id, 'How much does a blood test cost?');
  expect(before.hadPassages).toBe(true);

  const lock = new Client({ connectionString: h.dbUrl });
  const watcher = new Client({ connectionString: h.dbUrl });
  await Promise.all([lock.connect(), watcher.connect()]);
  // Searches waiting on the lock, as PostgreSQL shows them (from a connection outside any transaction).
  const waiting = async () =>
    (await watcher.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%knowledge_chunks%'`)).rows[0]!.n;
  const locked: Array<Awaited<ReturnType<typeof timedTurn>>> = [];
  let mostWaiting = 0;
  const sampler = setInterval(() => void waiting().then((n) => (mostWaiting = Math.max(mostWaiting, n)), () => undefined), 25);
  try {
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE knowledge_chunks IN ACCESS EXCLUSIVE MODE');
    for (let i = 0; i < LOCKED_TURNS; i += 1) locked.push(await timedTurn(call.call_id, `Are you open on Saturday morning, question ${i}?`));
    clearInterval(sampler);
    // The lock is what made each search slow; and the server cancelled every search given up
    // on at its budget (statement_timeout), so none still holds a connection.
    expect(mostWaiting).toBeGreaterThan(0);
    await eventually(async () => (await waiting()) === 0, BUDGET_MS + MARGIN_MS, 20);
  } finally {
    clearInterval(sampler);
    await lock.query('ROLLBACK');
    await Promise.all([lock.end(), watcher.end()]);
  }
  for (const turn of locked) {
    expect(turn.reply.replies).toEqual(['Here is what I found.']);
    expect(turn.hadPassages).toBe(false);
    expect(turn.askedMs).toBeLessThan(BUDGET_MS + MARGIN_MS);
    expect(turn.replyMs).toBeLessThan(BUDGET_MS + MARGIN_MS);
  }

  // The lock gone, the call answers from the knowledge base again.
  const after = await timedTurn(call.call_id, 'Where can I park my car?');
  expect(after.hadPassages).toBe(true);
  const trace = await events(call.call_id);
  const skipped = trace.filter((e) => e.event_type === 'knowledge_skipped');
  expect(skipped).toHaveLength(LOCKED_TURNS);
  for (const e of skipped) {
    expect(e.data).toMatchObject({ reason: `timeout after ${BUDGET_MS} ms`, mode: 'auto', knowledge_base_ids: [baseId] });
    expect(e.data.ms).toBeGreaterThanOrEqual(BUDGET_MS - 5);
    expect(e.data.ms).toBeLessThan(BUDGET_MS + 200);
  }
  expect(trace.filter((e) => e.event_type === 'knowledge_retrieved')).toHaveLength(2);
  expect(await hangUp(call.call_id)).toMatchObject({ status: 'completed' });
}, 120_000);

it('tool mode: a search past its activity\'s deadline is cancelled by PostgreSQL, and the LLM answers without it', async () => {
  // The tool's activity has the agent's budget and 5 s to start: 10 ms gives each attempt 5.01 s.
  const agent = await h.request('POST', '/api/agents', {
    body: { name: 'kb-tool-budget', prompt: 'You answer questions for Sunrise Clinic.', knowledge_base_ids: [baseId], knowledge_mode: 'tool', knowledge_timeout_ms: 10 },
  });
  expect(agent.status).toBe(201);
  llm.enqueue({ tool_calls: [{ name: 'search_knowledge_base', arguments: { query: 'parking garage' } }] }, { content: 'I cannot look that up right now.' });
  const call = await startText('kb-tool-budget');
  const lock = new Client({ connectionString: h.dbUrl });
  await lock.connect();
  try {
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE knowledge_chunks IN ACCESS EXCLUSIVE MODE');
    expect((await say(call.call_id, 'Where can I park?')).replies).toEqual(['I cannot look that up right now.']);
    // Both attempts gave up on are gone from the server while the lock is still held.
    await eventually(async () => {
      const [rows] = await h.db.sequelize.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
      return (rows[0] as { n: number }).n === 0;
    }, 3000, 50);
  } finally {
    await lock.query('ROLLBACK');
    await lock.end();
  }
  const trace = await events(call.call_id);
  expect(trace.filter((e) => e.event_type === 'knowledge_skipped').map((e) => e.data)).toEqual([expect.objectContaining({ mode: 'tool', query: 'parking garage', reason: expect.stringMatching(/^retrieval failed: /) })]);
  expect(trace.find((e) => e.event_type === 'tool_result')?.data).toMatchObject({ function: 'search_knowledge_base', result: null });
  const [, second] = llm.requests.map((r) => r.body as any);
  expect(second.messages[second.messages.length - 1]).toMatchObject({ role: 'tool', content: expect.stringMatching(/could not be searched/) });
  await hangUp(call.call_id);
}, 60_000);
