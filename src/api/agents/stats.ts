/**
 * GET /api/agents/stats: call counters over all calls (including those of deleted agents) and per
 * existing agent. Durations average over completed calls that have one. Test calls do not count.
 */
import { QueryTypes } from 'sequelize';
import type { Database } from '../../db/database';

interface TotalsRow {
  total: number;
  active: number;
  completed: number;
  failed: number;
  avg_duration: number | null;
}

interface AgentStatsRow {
  agent_id: string;
  agent_name: string;
  total: number;
  completed: number;
  failed: number;
  avg_duration: number | null;
}

const COUNTERS = `
  count(c.id)::int AS total,
  (count(c.id) FILTER (WHERE c.status = 'completed'))::int AS completed,
  (count(c.id) FILTER (WHERE c.status = 'failed'))::int AS failed,
  (avg(c.duration) FILTER (WHERE c.status = 'completed' AND c.duration IS NOT NULL))::float8 AS avg_duration`;

// Calls of agent test runs (docs/agent-tests.md) are not the agent's traffic.
const NOT_A_TEST_CALL = `(c.metadata->>'test_run_id') IS NULL`;

const seconds = (value: number | null) => (value === null ? 0 : Math.round(value * 100) / 100);

export async function agentStats(db: Database) {
  const [totals] = await db.sequelize.query<TotalsRow>(
    `SELECT ${COUNTERS}, (count(c.id) FILTER (WHERE c.status IN ('ringing', 'in_progress')))::int AS active FROM calls c WHERE ${NOT_A_TEST_CALL}`,
    { type: QueryTypes.SELECT },
  );
  const perAgent = await db.sequelize.query<AgentStatsRow>(
    `SELECT a.id AS agent_id, a.name AS agent_name, ${COUNTERS}
       FROM agents a LEFT JOIN calls c ON c.agent_id = a.id AND ${NOT_A_TEST_CALL}
      GROUP BY a.id, a.name ORDER BY a.name`,
    { type: QueryTypes.SELECT },
  );
  return {
    total_calls: totals!.total,
    active_calls: totals!.active,
    completed_calls: totals!.completed,
    failed_calls: totals!.failed,
    avg_duration: seconds(totals!.avg_duration),
    agents: perAgent.map((r) => ({
      agent_id: r.agent_id,
      agent_name: r.agent_name,
      total_calls: r.total,
      completed: r.completed,
      failed: r.failed,
      avg_duration: seconds(r.avg_duration),
    })),
  };
}
