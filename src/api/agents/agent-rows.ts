/** Row-level helpers shared by the agent, flow and bundle services. */
import type { Transaction } from 'sequelize';
import { plain, type Database } from '../../db/database';
import type { AgentRow } from '../../db/models';
import { notFound } from '../errors';
import { recordAgentVersion } from '../../agent-tests/versions';

/**
 * Loads the agent and locks its row until the transaction ends, which serialises every change of
 * one agent's config and nodes (so "at most one initial node" and version increments hold under
 * concurrent requests). Agents are always locked before their nodes.
 */
export async function lockAgent(db: Database, id: string, transaction: Transaction): Promise<AgentRow> {
  const row = plain(await db.models.Agent.findByPk(id, { transaction, lock: transaction.LOCK.UPDATE }));
  if (!row) throw notFound('Agent');
  return row;
}

export async function findAgent(db: Database, id: string): Promise<AgentRow> {
  const row = plain(await db.models.Agent.findByPk(id));
  if (!row) throw notFound('Agent');
  return row;
}

/** Every change of an agent's config or nodes produces a new version (calls record the one they ran). */
export async function bumpVersion(db: Database, id: string, transaction: Transaction): Promise<void> {
  await db.models.Agent.increment('version', { where: { id }, transaction });
  await recordAgentVersion(db, id, transaction);
}
