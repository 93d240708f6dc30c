/**
 * Rows for engine tests, written straight through the models so a test sets up exactly the agent
 * it needs (the agent/tool API has its own tests).
 */
import crypto from 'node:crypto';
import type { Database } from '../../src/db/database';
import type { AgentRow, FlowNodeRow, ToolRow } from '../../src/db/models';
import { DEFAULT_LLM_MODEL, PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import type { SecretBox } from '../../src/security/crypto';
import { generateWebhookSecret } from '../../src/webhooks/standard-webhooks';

export async function createTool(db: Database, box: SecretBox, tool: Partial<ToolRow> & { name: string; webhook_url: string; headers?: Record<string, string> }) {
  const { headers, ...rest } = tool;
  const row = await db.models.Tool.create({
    id: crypto.randomUUID(),
    description: `Tool ${tool.name}`,
    parameters: { properties: {}, required: [] },
    webhook_method: 'POST',
    timeout_secs: 10,
    headers_encrypted: headers ? box.encrypt(JSON.stringify(headers)) : null,
    ...rest,
  });
  return row.get({ plain: true }) as ToolRow;
}

export async function createAgent(db: Database, box: SecretBox, agent: Partial<AgentRow> & { name: string }, webhookSecret?: string) {
  const row = await db.models.Agent.create({
    id: crypto.randomUUID(),
    prompt: 'You are a helpful phone agent.',
    greeting: null,
    stt_provider: 'deepgram',
    stt_language: 'en',
    stt_settings: {},
    llm_provider: 'openai',
    llm_model: DEFAULT_LLM_MODEL.openai,
    llm_settings: {},
    tts_provider: 'cartesia',
    tts_settings: {},
    pipeline_settings: { ...PIPELINE_DEFAULTS },
    pre_call_tool_ids: [],
    tool_ids: [],
    context_variables: {},
    webhook_events: [],
    webhook_secret_encrypted: box.encrypt(webhookSecret ?? generateWebhookSecret()),
    ...agent,
  });
  return row.get({ plain: true }) as AgentRow;
}

/** A call row of `agent` (null: an agent since deleted) in `status`, for listings and statistics. */
export async function insertCall(db: Database, agent: { id: string; name: string } | null, status: string, duration: number | null = null) {
  return db.models.Call.create({
    agent_id: agent?.id ?? null,
    agent_name: agent?.name ?? 'deleted-agent',
    phone_number: '+15550001111',
    direction: 'outbound',
    status: status as 'completed',
    workflow_id: `call-${crypto.randomUUID()}`,
    duration,
  });
}

export async function createNodes(db: Database, agentId: string, nodes: Array<Partial<FlowNodeRow> & { node_key: string }>) {
  let position = 0;
  for (const node of nodes) {
    await db.models.FlowNode.create({
      id: crypto.randomUUID(),
      agent_id: agentId,
      position: position++,
      is_initial: false,
      is_terminal: false,
      role_messages: [],
      task_messages: [],
      functions: [],
      tool_ids: [],
      builtin_tools: [],
      pre_actions: [],
      ...node,
    });
  }
}

/** Polls until `check` returns a truthy value (for effects that happen after an API answer). */
export async function eventually<T>(check: () => Promise<T | undefined | null | false>, timeoutMs = 15_000, stepMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
