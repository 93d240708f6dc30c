/**
 * Turn runs (docs/conversation-engine.md): the gateway journals each turn a run has answered but
 * not yet reported, so a call whose gateway dies keeps them — the workflow reads them back when it
 * loses the gateway. Rows go with their call (and the gateway clears a call's when its stream
 * ends); only a gateway that died leaves some behind until then.
 */
import type { QueryInterface } from 'sequelize';

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query(`CREATE TABLE IF NOT EXISTS call_turn_journal (
    call_id UUID NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    turn JSONB NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (call_id, seq)
  )`);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP TABLE IF EXISTS call_turn_journal');
}
