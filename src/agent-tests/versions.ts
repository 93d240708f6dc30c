/**
 * Every version of an agent is kept: the immutable snapshot its calls run on (agent, flow nodes,
 * tools), stored whenever a change produces a new version, so a test run can use any of them.
 * Versions from before this table existed are not stored; the current one is stored on first use.
 */
import type { Transaction } from 'sequelize';
import { plain, plainAll, type Database } from '../db/database';
import { loadAgentSnapshotById } from '../calls/snapshot';
import type { AgentSnapshot } from '../../workflows/call-definitions';
import { apiTimestamp } from '../shared/time';

/** Stores the agent's current version; a version already stored is left as it is. */
export async function recordAgentVersion(db: Database, agentId: string, transaction?: Transaction): Promise<AgentSnapshot | null> {
  const snapshot = await loadAgentSnapshotById(db, agentId, transaction);
  if (!snapshot) return null;
  await db.models.AgentVersion.bulkCreate(
    [{ agent_id: agentId, version: snapshot.version, snapshot: snapshot as unknown as Record<string, unknown> }],
    { ignoreDuplicates: true, transaction },
  );
  return snapshot;
}

export class UnknownVersion extends Error {}

/** The snapshot of one version: the current one is read live (and stored), older ones from the table. */
export async function agentVersionSnapshot(db: Database, agentId: string, version?: number): Promise<AgentSnapshot> {
  const current = await recordAgentVersion(db, agentId);
  if (!current) throw new UnknownVersion('Agent not found');
  if (version === undefined || version === current.version) return current;
  const row = plain(await db.models.AgentVersion.findOne({ where: { agent_id: agentId, version } }));
  if (!row) {
    const stored = plainAll(await db.models.AgentVersion.findAll({ where: { agent_id: agentId }, attributes: ['version'], order: [['version', 'ASC']] }));
    throw new UnknownVersion(`version ${version} of this agent is not stored (stored: ${stored.map((v) => v.version).join(', ')})`);
  }
  return row.snapshot as unknown as AgentSnapshot;
}

export async function listAgentVersions(db: Database, agentId: string) {
  await recordAgentVersion(db, agentId);
  const rows = plainAll(
    await db.models.AgentVersion.findAll({ where: { agent_id: agentId }, attributes: ['version', 'created_at'], order: [['version', 'DESC']] }),
  );
  return rows.map((r) => ({ version: r.version, created_at: apiTimestamp(r.created_at)! }));
}
