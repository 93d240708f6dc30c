/**
 * The query of GET /api/calls: filters to a WHERE clause, then one page and the total, run side by
 * side. The analysis filters use the indexes of migrations 0007, 0013 and 0014: `analysis_success`
 * (B-tree) and `analysis->'fields'` (GIN, jsonb_path_ops) for `@>` containment, also one GIN per
 * verdict for a field with a verdict. Shared with
 * scripts/bench-analysis-query.ts, which times exactly this query on a million calls.
 */
import { Op, type WhereOptions } from 'sequelize';
import type { Database } from '../db/database';
import type { CallRow } from '../db/models';

export interface CallListFilters {
  status?: string;
  agent_name?: string;
  direction?: string;
  end_reason?: string;
  created_after?: Date;
  created_before?: Date;
  /** The analysis's success verdict. */
  success?: boolean;
  /** Analysis field equality, `field.<name>=<value>` in the query string. */
  fields?: Record<string, string>;
  /** Also the calls of agent test runs (docs/agent-tests.md), left out by default. */
  includeTests?: boolean;
}

/**
 * The JSON values a query-string value may stand for: always the string, and the boolean or number
 * it spells (a field's type is the agent's business, and calls of several agents are listed together).
 */
function jsonCandidates(value: string): Array<string | number | boolean> {
  const out: Array<string | number | boolean> = [value];
  if (value === 'true' || value === 'false') out.push(value === 'true');
  if (/^-?\d+(\.\d+)?$/.test(value) && Number.isFinite(Number(value))) out.push(Number(value));
  return out;
}

export function callListWhere(db: Database, filters: CallListFilters): WhereOptions<CallRow> {
  const where: Record<string | symbol, unknown> = {};
  if (filters.status) where.status = filters.status;
  if (filters.agent_name) where.agent_name = filters.agent_name;
  if (filters.direction) where.direction = filters.direction;
  if (filters.end_reason) where.end_reason = filters.end_reason;
  if (filters.created_after || filters.created_before) {
    where.created_at = {
      ...(filters.created_after ? { [Op.gte]: filters.created_after } : {}),
      ...(filters.created_before ? { [Op.lt]: filters.created_before } : {}),
    };
  }
  // `IS NOT NULL` is implied, but PostgreSQL does not infer it from `NOT analysis_success` (what
  // `= false` becomes): said outright, the partial indexes of migrations 0007 and 0014 apply to both verdicts.
  if (filters.success !== undefined) where.analysis_success = { [Op.ne]: null, [Op.eq]: filters.success };
  const { sequelize } = db;
  const contains = Object.entries(filters.fields ?? {}).map(([name, value]) => {
    const tests = jsonCandidates(value).map((v) => `(analysis -> 'fields') @> ${sequelize.escape(JSON.stringify({ [name]: v }))}::jsonb`);
    return sequelize.literal(`(${tests.join(' OR ')})`);
  });
  // Calls of agent test runs carry their run in metadata.
  if (!filters.includeTests) contains.push(sequelize.literal(`(metadata->>'test_run_id') IS NULL`));
  if (contains.length) where[Op.and] = contains;
  return where as WhereOptions<CallRow>;
}

/**
 * Totals are exact up to this many calls; past it the count stops there (`total_exact: false`).
 * An exact count visits every match, which at a million calls takes hundreds of ms for broad
 * filters (docs/post-call-analysis.md, "Measured on 1,000,000 calls") while the page takes < 1 ms.
 */
export const CALL_COUNT_CAP = 10_000;

export interface CallListPage {
  limit: number;
  offset: number;
  /** Count every match however many there are (slow for broad filters on big tables). */
  exactTotal?: boolean;
}

export async function listCalls(db: Database, filters: CallListFilters, page: CallListPage) {
  const where = callListWhere(db, filters);
  const [counted, rows] = await Promise.all([
    page.exactTotal ? db.models.Call.count({ where }) : cappedCount(db, where, CALL_COUNT_CAP),
    db.models.Call.findAll({
      where,
      order: [
        ['created_at', 'DESC'],
        ['id', 'DESC'],
      ],
      limit: page.limit,
      offset: page.offset,
    }),
  ]);
  const totalExact = page.exactTotal === true || counted <= CALL_COUNT_CAP;
  return { total: Math.min(counted, page.exactTotal ? counted : CALL_COUNT_CAP), totalExact, rows };
}

/** count(*) of at most cap + 1 matching rows: PostgreSQL stops scanning once it has them. */
async function cappedCount(db: Database, where: WhereOptions<CallRow>, cap: number): Promise<number> {
  const { sequelize } = db;
  const generator = sequelize.getQueryInterface().queryGenerator as {
    selectQuery(table: string, options: object, model: unknown): string;
  };
  const inner = generator
    .selectQuery(db.models.Call.getTableName() as string, { attributes: [[sequelize.literal('1'), 'one']], where, limit: cap + 1 }, db.models.Call)
    .replace(/;\s*$/, '');
  const [rows] = (await sequelize.query(`SELECT count(*)::int AS n FROM (${inner}) AS capped`)) as [Array<{ n: number }>, unknown];
  return rows[0]!.n;
}
