/** Checks the `knowledge_base_ids` of agents and flow nodes: each names an existing base (else 422). */
import { Op, type Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { unprocessable } from '../errors';

export async function assertKnowledgeBases(db: Database, ids: string[] | undefined, field: string, transaction?: Transaction): Promise<void> {
  if (!ids || ids.length === 0) return;
  const found = await db.models.KnowledgeBase.findAll({ where: { id: { [Op.in]: ids } }, attributes: ['id'], transaction });
  const known = new Set(found.map((row) => row.get('id') as string));
  ids.forEach((id, i) => {
    if (!known.has(id)) throw unprocessable(`${field}.${i}`, `no knowledge base ${id}`);
  });
}
