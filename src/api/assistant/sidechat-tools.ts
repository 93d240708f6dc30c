/**
 * The read-only tools of the dashboard assistant. They read through the models and answer the same
 * shapes as the REST API, so what the assistant says matches what the dashboard shows. The one
 * "write" tool, propose_change, only collects validated proposals for the user to review; nothing
 * is ever applied from here.
 */
import type OpenAI from 'openai';
import { Op, type WhereOptions } from 'sequelize';
import { z } from 'zod';
import type { Database } from '../../db/database';
import { plain, plainAll } from '../../db/database';
import type { AgentRow, CallEventRow, CallRow, FlowNodeRow, ToolRow } from '../../db/models';
import { CALL_STATUSES, EVENT_TYPES } from '../../shared/catalog';
import { apiTimestamp } from '../../shared/time';
import { agentConfig, agentCounts, agentJson, NODE_ORDER, nodeJson, type AgentCounts } from '../agents/agent-json';
import { describeIssues } from '../errors';
import { AgentPatchSchema } from '../schemas/agent';
import { FlowNodePatchSchema } from '../schemas/flow';
import { callDetailJson, callJson, eventJson } from '../serializers/call';

// Keeps one tool result from crowding the conversation out of the model's context.
const MAX_RESULT_CHARS = 24_000;
const CALLS_PAGE_MAX = 25;
const EVENTS_MAX = 200;

export const PROPOSAL_TARGETS = ['prompt', 'greeting', 'pipeline_settings', 'llm_settings', 'context_variables', 'flow_node'] as const;

export interface Proposal {
  id: string;
  agent_id: string;
  agent_name: string;
  target: (typeof PROPOSAL_TARGETS)[number];
  node_key: string | null;
  current_value: unknown;
  proposed_value: unknown;
  rationale: string;
  /** The request that would apply it, for a dashboard "apply" button. */
  apply: { method: 'PATCH'; path: string; body: Record<string, unknown> };
}

class ToolInputError extends Error {}

const uuid = (field: string) => z.uuid({ error: `${field} must be a UUID` });

function fn(name: string, description: string, properties: Record<string, unknown>, required: string[] = []): OpenAI.Chat.Completions.ChatCompletionTool {
  return { type: 'function', function: { name, description, parameters: { type: 'object', properties, required, additionalProperties: false } } };
}

export const SIDECHAT_TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  fn('list_agents', 'List all agents with id, name, mode (flow or freeform), call count and languages.', {}),
  fn(
    'get_agent',
    'Full configuration of one agent (prompt, greeting, providers, pipeline settings, tools) and its flow nodes. Give agent_id or name.',
    { agent_id: { type: 'string', description: 'UUID' }, name: { type: 'string', description: 'agent name (slug)' } },
  ),
  fn(
    'list_calls',
    'Calls, newest first, without transcripts. Optional filters.',
    {
      status: { type: 'string', enum: [...CALL_STATUSES] },
      agent_name: { type: 'string' },
      page: { type: 'integer', minimum: 1, description: 'default 1' },
      page_size: { type: 'integer', minimum: 1, maximum: CALLS_PAGE_MAX, description: 'default 10' },
    },
  ),
  fn('get_call', 'One call with its transcript, call context (custom parameters), usage and end reason.', { call_id: { type: 'string', description: 'UUID' } }, ['call_id']),
  fn(
    'get_call_events',
    'The time-ordered event trace of a call (tool calls and results, node transitions, errors, latency metrics).',
    {
      call_id: { type: 'string', description: 'UUID' },
      event_types: { type: 'array', items: { type: 'string', enum: [...EVENT_TYPES] }, description: 'only these types' },
      limit: { type: 'integer', minimum: 1, maximum: EVENTS_MAX, description: 'default 100' },
    },
    ['call_id'],
  ),
  fn(
    'propose_change',
    'Propose a change to an agent for the user to review. It is NOT applied. proposed_value: a string for prompt/greeting; ' +
      'an object of the keys to change for pipeline_settings, llm_settings and context_variables; for flow_node an object of the node fields to change ' +
      '(e.g. {"task_messages":[{"role":"system","content":"..."}]}) plus node_key.',
    {
      agent_id: { type: 'string', description: 'UUID' },
      target: { type: 'string', enum: [...PROPOSAL_TARGETS] },
      node_key: { type: 'string', description: 'required for target flow_node' },
      proposed_value: { description: 'the new value (see the tool description)' },
      rationale: { type: 'string', description: 'why, in one or two sentences' },
    },
    ['agent_id', 'target', 'proposed_value', 'rationale'],
  ),
];

function parseArgs<S extends z.ZodType>(schema: S, args: unknown): z.output<S> {
  const parsed = schema.safeParse(args);
  if (!parsed.success) throw new ToolInputError(describeIssues(parsed.error.issues));
  return parsed.data;
}

function agentSummary(row: AgentRow, counts: AgentCounts) {
  return {
    id: row.id,
    name: row.name,
    mode: counts.flow_nodes_count > 0 ? 'flow' : 'freeform',
    ...counts,
    stt_language: row.stt_language,
    llm_model: row.llm_model,
    created_at: apiTimestamp(row.created_at),
  };
}

export class SidechatTools {
  readonly proposals: Proposal[] = [];

  constructor(private readonly db: Database) {}

  /** Runs one tool call; failures become `{error}` results the model can react to. */
  async run(name: string, rawArgs: string): Promise<string> {
    let result: unknown;
    try {
      const args = rawArgs.trim() ? JSON.parse(rawArgs) : {};
      result = await this.dispatch(name, args);
    } catch (err) {
      if (err instanceof SyntaxError) result = { error: `arguments are not valid JSON: ${err.message}` };
      else if (err instanceof ToolInputError) result = { error: err.message };
      else throw err;
    }
    const text = JSON.stringify(result);
    return text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS)}… [truncated: ${text.length} characters in total]` : text;
  }

  private dispatch(name: string, args: unknown): Promise<unknown> {
    switch (name) {
      case 'list_agents':
        return this.listAgents();
      case 'get_agent':
        return this.getAgent(parseArgs(z.object({ agent_id: uuid('agent_id').optional(), name: z.string().min(1).optional() }), args));
      case 'list_calls':
        return this.listCalls(
          parseArgs(
            z.object({
              status: z.enum(CALL_STATUSES).optional(),
              agent_name: z.string().min(1).optional(),
              page: z.number().int().min(1).default(1),
              page_size: z.number().int().min(1).max(CALLS_PAGE_MAX).default(10),
            }),
            args,
          ),
        );
      case 'get_call':
        return this.getCall(parseArgs(z.object({ call_id: uuid('call_id') }), args).call_id);
      case 'get_call_events':
        return this.getCallEvents(
          parseArgs(
            z.object({
              call_id: uuid('call_id'),
              event_types: z.array(z.string()).optional(),
              limit: z.number().int().min(1).max(EVENTS_MAX).default(100),
            }),
            args,
          ),
        );
      case 'propose_change':
        return this.proposeChange(
          parseArgs(
            z.object({
              agent_id: uuid('agent_id'),
              target: z.enum(PROPOSAL_TARGETS),
              node_key: z.string().min(1).nullish(),
              proposed_value: z.unknown(),
              rationale: z.string().min(1),
            }),
            args,
          ),
        );
      default:
        throw new ToolInputError(`unknown tool "${name}"`);
    }
  }

  private async listAgents() {
    const rows = plainAll(await this.db.models.Agent.findAll({ order: [['name', 'ASC']] }));
    const counts = await agentCounts(this.db, null);
    return { agents: rows.map((r) => agentSummary(r, counts(r.id))) };
  }

  private async findAgent(where: { id: string } | { name: string }): Promise<AgentRow> {
    const row = plain(await this.db.models.Agent.findOne({ where }));
    if (!row) throw new ToolInputError(`no agent with ${'id' in where ? `id ${where.id}` : `name "${where.name}"`}`);
    return row;
  }

  private async getAgent(args: { agent_id?: string; name?: string }) {
    if (!args.agent_id && !args.name) throw new ToolInputError('give agent_id or name');
    const row = await this.findAgent(args.agent_id ? { id: args.agent_id } : { name: args.name! });
    const nodes = plainAll(await this.db.models.FlowNode.findAll({ where: { agent_id: row.id }, order: NODE_ORDER }));
    const toolIds = [...new Set([...row.tool_ids, ...row.pre_call_tool_ids, ...nodes.flatMap((n) => n.tool_ids)])];
    const tools: ToolRow[] = toolIds.length ? plainAll(await this.db.models.Tool.findAll({ where: { id: { [Op.in]: toolIds } } })) : [];
    return {
      agent: agentJson(row, (await agentCounts(this.db, [row.id]))(row.id)),
      mode: nodes.length ? 'flow' : 'freeform',
      flow_nodes: nodes.map(nodeJson),
      tools: tools.map((t) => ({ id: t.id, name: t.name, description: t.description, parameters: t.parameters, webhook_url: t.webhook_url })),
    };
  }

  private async listCalls(args: { status?: string; agent_name?: string; page: number; page_size: number }) {
    const where: WhereOptions<CallRow> = {};
    if (args.status) where.status = args.status as CallRow['status'];
    if (args.agent_name) where.agent_name = args.agent_name;
    const { rows, count } = await this.db.models.Call.findAndCountAll({
      where,
      order: [['created_at', 'DESC'], ['id', 'DESC']],
      limit: args.page_size,
      offset: (args.page - 1) * args.page_size,
    });
    return { calls: plainAll(rows).map((r) => callJson(r)), total: count, page: args.page, page_size: args.page_size };
  }

  private async callEvents(callId: string): Promise<CallEventRow[]> {
    return plainAll(await this.db.models.CallEvent.findAll({ where: { call_id: callId }, order: [['seq', 'ASC']] }));
  }

  private async getCall(callId: string) {
    const row = plain(await this.db.models.Call.findByPk(callId));
    if (!row) throw new ToolInputError(`no call with id ${callId}`);
    return callDetailJson(row, await this.callEvents(callId));
  }

  private async getCallEvents(args: { call_id: string; event_types?: string[]; limit: number }) {
    const call = await this.db.models.Call.count({ where: { id: args.call_id } });
    if (!call) throw new ToolInputError(`no call with id ${args.call_id}`);
    let events = await this.callEvents(args.call_id);
    if (args.event_types?.length) events = events.filter((e) => args.event_types!.includes(e.event_type));
    return { events: events.slice(0, args.limit).map(eventJson), total: events.length };
  }

  private async proposeChange(args: { agent_id: string; target: Proposal['target']; node_key?: string | null; proposed_value: unknown; rationale: string }) {
    const agent = await this.findAgent({ id: args.agent_id });
    let current: unknown;
    let value: unknown;
    let apply: Proposal['apply'];
    if (args.target === 'flow_node') {
      if (!args.node_key) throw new ToolInputError('node_key is required for target flow_node');
      const node = plain(await this.db.models.FlowNode.findOne({ where: { agent_id: agent.id, node_key: args.node_key } }));
      if (!node) throw new ToolInputError(`agent "${agent.name}" has no flow node "${args.node_key}"`);
      const parsed = FlowNodePatchSchema.safeParse(args.proposed_value);
      if (!parsed.success) throw new ToolInputError(`proposed_value: ${describeIssues(parsed.error.issues)}`);
      value = args.proposed_value;
      current = Object.fromEntries(Object.keys(parsed.data).map((k) => [k, node[k as keyof FlowNodeRow]]));
      apply = { method: 'PATCH', path: `/api/agents/${agent.id}/nodes/${encodeURIComponent(node.node_key)}`, body: value as Record<string, unknown> };
    } else {
      const parsed = AgentPatchSchema.safeParse({ [args.target]: args.proposed_value });
      if (!parsed.success) throw new ToolInputError(`proposed_value: ${describeIssues(parsed.error.issues)}`);
      value = args.proposed_value;
      const stored = agentConfig(agent)[args.target];
      current = value && typeof value === 'object' && !Array.isArray(value) && stored && typeof stored === 'object'
        ? Object.fromEntries(Object.keys(value).map((k) => [k, (stored as Record<string, unknown>)[k] ?? null]))
        : stored;
      apply = { method: 'PATCH', path: `/api/agents/${agent.id}`, body: { [args.target]: value } };
    }
    const proposal: Proposal = {
      id: `proposal-${this.proposals.length + 1}`,
      agent_id: agent.id,
      agent_name: agent.name,
      target: args.target,
      node_key: args.target === 'flow_node' ? args.node_key! : null,
      current_value: current,
      proposed_value: value,
      rationale: args.rationale,
      apply,
    };
    this.proposals.push(proposal);
    return { recorded: true, proposal_id: proposal.id, note: 'Shown to the user for review; not applied.' };
  }
}
