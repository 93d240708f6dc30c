/**
 * Creating, updating and deleting agents. Telephony endpoints refer to agents by name, so a rename
 * or a deletion updates them in the same transaction.
 */
import { UniqueConstraintError, type Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { plain } from '../../db/database';
import type { AgentRow } from '../../db/models';
import type { SecretBox } from '../../security/crypto';
import { DEFAULT_LLM_MODEL, sttModeProviders } from '../../shared/catalog';
import { conflict, describeIssues, HttpError } from '../errors';
import { AgentCreateSchema, type AgentCreate, type AgentPatch } from '../schemas/agent';
import { agentConfig, agentCounts, agentJson } from './agent-json';
import { lockAgent } from './agent-rows';
import { assertToolsExist, listRefs } from './tool-refs';
import { assertMcpTools } from './mcp-refs';
import { assertKnowledgeBases } from './knowledge-refs';
import { assertDestinationsCoverNodes, destinationNames } from './transfer-refs';
import { newWebhookSecret } from './webhook-secret';
import { recordAgentVersion } from '../../agent-tests/versions';

export const nameTaken = (name: string) => conflict(`An agent named "${name}" already exists`);

export async function assertAgentTools(
  db: Database,
  config: Partial<Pick<AgentCreate, 'tool_ids' | 'pre_call_tool_ids' | 'mcp_tools' | 'knowledge_base_ids'>>,
  prefix = '',
  transaction?: Transaction,
) {
  await assertMcpTools(db, config.mcp_tools ?? [], `${prefix}mcp_tools`, transaction);
  await assertKnowledgeBases(db, config.knowledge_base_ids, `${prefix}knowledge_base_ids`, transaction);
  await assertToolsExist(
    db,
    [...listRefs(config.tool_ids ?? [], `${prefix}tool_ids`), ...listRefs(config.pre_call_tool_ids ?? [], `${prefix}pre_call_tool_ids`)],
    transaction,
  );
}

/** Inserts a validated config with a fresh webhook secret; 409 when the name is taken. */
export async function insertAgent(db: Database, box: SecretBox, config: AgentCreate, ownerId: string | null, transaction?: Transaction) {
  const webhookSecret = newWebhookSecret();
  try {
    const row = plain(
      await db.models.Agent.create({ ...config, owner_id: ownerId, webhook_secret_encrypted: box.encrypt(webhookSecret) }, { transaction }),
    );
    return { row, webhookSecret };
  } catch (err) {
    if (err instanceof UniqueConstraintError) throw nameTaken(config.name);
    throw err;
  }
}

export async function createAgent(db: Database, box: SecretBox, config: AgentCreate, ownerId: string) {
  await assertAgentTools(db, config);
  const { row, webhookSecret } = await insertAgent(db, box, config, ownerId);
  await recordAgentVersion(db, row.id);
  return { ...agentJson(row, { total_calls: 0, flow_nodes_count: 0 }), webhook_secret: webhookSecret };
}

const MERGED_KEYS = new Set(['stt_settings', 'llm_settings', 'tts_settings', 'pipeline_settings', 'analysis']);

/** Key-by-key merge of a settings object; a null value removes the key. */
function mergeKeys(current: Record<string, unknown>, change: Record<string, unknown>): Record<string, unknown> {
  const next = { ...current };
  for (const [k, v] of Object.entries(change)) {
    if (v === null) delete next[k];
    else if (v !== undefined) next[k] = v;
  }
  return next;
}

/**
 * The stored config with the change applied, before validation. Switching provider also drops
 * what belonged to the old one unless the request sets it: stt_mode (one provider only) and an
 * llm_model that was merely the old provider's default.
 */
export function applyPatch(current: AgentCreate, patch: AgentPatch): Record<string, unknown> {
  const next: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    const merged = MERGED_KEYS.has(key) && value !== null;
    next[key] = merged ? mergeKeys((current[key as keyof AgentCreate] ?? {}) as Record<string, unknown>, value as Record<string, unknown>) : value;
  }
  if (patch.stt_provider && !sttModeProviders().includes(patch.stt_provider) && patch.stt_mode === undefined) next.stt_mode = null;
  if (patch.llm_provider && patch.llm_model === undefined && current.llm_model === DEFAULT_LLM_MODEL[current.llm_provider]) {
    delete next.llm_model;
  }
  return next;
}

async function renameReferences(db: Database, from: string, to: string | null, transaction: Transaction) {
  const { TelephonyEndpoint } = db.models;
  await TelephonyEndpoint.update({ inbound_agent_name: to }, { where: { inbound_agent_name: from }, transaction });
  await TelephonyEndpoint.update({ outbound_agent_name: to }, { where: { outbound_agent_name: from }, transaction });
}

export async function updateAgent(db: Database, id: string, patch: AgentPatch) {
  return db.sequelize.transaction(async (transaction) => {
    const current = await lockAgent(db, id, transaction);
    const parsed = AgentCreateSchema.safeParse(applyPatch(agentConfig(current), patch));
    if (!parsed.success) throw new HttpError(422, describeIssues(parsed.error.issues));
    // Only references being set are checked: one to a since-deleted tool must not block other edits.
    await assertAgentTools(
      db,
      { tool_ids: patch.tool_ids, pre_call_tool_ids: patch.pre_call_tool_ids, mcp_tools: patch.mcp_tools, knowledge_base_ids: patch.knowledge_base_ids },
      '',
      transaction,
    );
    const config = parsed.data;
    if (patch.transfer_destinations !== undefined) {
      await assertDestinationsCoverNodes(db, id, destinationNames(config.transfer_destinations), transaction);
    }
    if (config.name !== current.name) {
      const taken = await db.models.Agent.count({ where: { name: config.name }, transaction });
      if (taken) throw nameTaken(config.name);
      await renameReferences(db, current.name, config.name, transaction);
    }
    try {
      await db.models.Agent.update({ ...config, version: current.version + 1 }, { where: { id }, transaction });
    } catch (err) {
      if (err instanceof UniqueConstraintError) throw nameTaken(config.name);
      throw err;
    }
    await recordAgentVersion(db, id, transaction);
    const row = plain(await db.models.Agent.findByPk(id, { transaction })) as AgentRow;
    return agentJson(row, (await agentCounts(db, [id], transaction))(id));
  });
}

/** Flow nodes go with the agent (FK cascade); calls stay, with agent_id set to null by the FK. */
export async function deleteAgent(db: Database, id: string) {
  await db.sequelize.transaction(async (transaction) => {
    const current = await lockAgent(db, id, transaction);
    await renameReferences(db, current.name, null, transaction);
    await db.models.Agent.destroy({ where: { id }, transaction });
  });
}

export async function rotateWebhookSecret(db: Database, box: SecretBox, id: string) {
  const webhookSecret = newWebhookSecret();
  await db.sequelize.transaction(async (transaction) => {
    await lockAgent(db, id, transaction);
    await db.models.Agent.update({ webhook_secret_encrypted: box.encrypt(webhookSecret) }, { where: { id }, transaction });
  });
  return webhookSecret;
}
