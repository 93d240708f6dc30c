/**
 * Flow node schemas. A node's tool references are UUIDs of stored tools in the API and
 * bundle-local references (any string) in agent bundles, so the schemas are built by factories
 * taking the reference schema.
 */
import { z } from 'zod';
import { BUILTIN_TOOLS } from '../../shared/catalog';
import { BuiltinTool, ParameterType, Timestamp } from './common';
import { KnowledgeMode } from './knowledge-base';

/** Strict objects catch typos; the message names the unknown keys. */
export function strictObject<S extends z.ZodRawShape>(shape: S) {
  return z.strictObject(shape, {
    error: (iss) => (iss.code === 'unrecognized_keys' ? `unknown field(s): ${iss.keys.join(', ')}` : undefined),
  });
}

export const toolUuid = z.uuid({ error: 'must be a tool id (UUID)' });
/** Bundles refer to tools by the bundle-local `id` of an entry of `tools` (or a tool UUID). */
export const bundleToolRef = z.string().min(1).max(200);
/** An MCP tool: `<server>/<tool>`, the server's name and a tool of its last refresh (docs/tools.md). */
export const mcpToolRef = z.string().max(200).regex(/^[a-z][a-z0-9_]{0,31}\/.+$/, 'must be <server>/<tool>, e.g. crm/lookup_customer');
const mcpToolList = z.array(mcpToolRef).max(100);

export const NODE_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const FUNCTION_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

export const NodeKey = z
  .string()
  .regex(NODE_KEY_PATTERN, 'must be 1-64 letters, digits, "_" or "-", starting with a letter or digit');

export const ChatMessageSchema = strictObject({
  role: z.enum(['system', 'user', 'assistant']).meta({ id: 'MessageRole' }).default('system'),
  content: z.string().min(1).max(20_000).describe('supports {{variable}} placeholders, substituted when the node is entered'),
}).meta({ id: 'ChatMessage' });

export const FunctionPropertySchema = strictObject({
  type: ParameterType,
  description: z.string().max(2_000).optional(),
  enum: z.array(z.union([z.string(), z.number()])).optional(),
}).meta({ id: 'FunctionProperty' });

export const FlowFunctionSchema = strictObject({
  name: z.string().regex(FUNCTION_NAME_PATTERN, 'must be snake_case (a-z, 0-9, _), starting with a letter, at most 64 characters'),
  description: z.string().min(1).max(2_000).describe('tells the LLM when to call it; supports {{variable}} placeholders'),
  next_node_key: NodeKey.nullable().default(null).describe('node entered when the LLM calls this function; null = stay in the node'),
  properties: z.record(z.string().min(1), FunctionPropertySchema).default({}).describe('parameter name -> {type, description}'),
  required: z.array(z.string()).default([]),
}).superRefine((fn, ctx) => {
  for (const [i, name] of fn.required.entries()) {
    if (!(name in fn.properties)) ctx.addIssue({ code: 'custom', path: ['required', i], message: `"${name}" is not one of the properties` });
  }
}).meta({ id: 'FlowFunction' });

function preActionSchema(toolRef: z.ZodType<string>) {
  return z.discriminatedUnion(
    'type',
    [
      strictObject({ type: z.literal('say'), text: z.string().min(1).max(5_000).describe('spoken as is; {{variable}} placeholders substituted') }),
      strictObject({
        type: z.literal('call_tool'),
        tool_id: toolRef,
        args: z.record(z.string(), z.unknown()).optional().describe('extra arguments, merged over the call context'),
      }),
      strictObject({ type: z.literal('end_call') }),
      strictObject({
        type: z.literal('transfer_call'),
        destination: z.string().min(1).max(64).describe("the name of one of the agent's transfer_destinations"),
      }),
    ],
    { error: 'type must be one of say, call_tool, end_call, transfer_call' },
  );
}

/** Built once per kind of tool reference, so each is one named schema. */
const PRE_ACTIONS = {
  api: preActionSchema(toolUuid).meta({ id: 'PreAction', description: 'run on entering the node, in order' }),
  bundle: preActionSchema(bundleToolRef).meta({ id: 'BundlePreAction', description: 'as PreAction, with bundle-local tool references' }),
};

const PositionXy = strictObject({ x: z.number(), y: z.number() }).meta({ id: 'PositionXy' });

function nodeShape(toolRef: z.ZodType<string>) {
  const preAction = toolRef === bundleToolRef ? PRE_ACTIONS.bundle : PRE_ACTIONS.api;
  return {
    node_key: NodeKey,
    position: z.number().int().min(0).max(100_000).optional().describe('order index; default: after the existing nodes'),
    is_initial: z.boolean().default(false),
    is_terminal: z.boolean().default(false),
    role_messages: z.array(ChatMessageSchema).max(50).default([]),
    task_messages: z.array(ChatMessageSchema).max(50).default([]),
    functions: z.array(FlowFunctionSchema).max(50).default([]),
    tool_ids: z.array(toolRef).max(100).default([]),
    mcp_tools: mcpToolList.default([]).describe('MCP tools offered in this node, `<server>/<tool>`'),
    knowledge_base_ids: z.array(z.uuid({ message: 'must be a UUID' })).max(20).default([]).describe("knowledge bases of this node; empty: the agent's"),
    knowledge_mode: KnowledgeMode.default('auto').describe("how this node's own knowledge bases are used"),
    builtin_tools: z.array(BuiltinTool).default([]),
    pre_actions: z.array(preAction).max(20).default([]),
    position_xy: PositionXy.nullable().default(null).describe('editor layout coordinates'),
  };
}

/** Rules that concern one node alone (graph rules live in src/api/agents/flow-graph.ts). */
function checkNode(node: { functions: Array<{ name: string }>; builtin_tools: string[] }, ctx: z.RefinementCtx) {
  const seen = new Set<string>();
  for (const [i, fn] of node.functions.entries()) {
    if (seen.has(fn.name)) ctx.addIssue({ code: 'custom', path: ['functions', i, 'name'], message: `duplicate function name "${fn.name}"` });
    if ((BUILTIN_TOOLS as readonly string[]).includes(fn.name)) {
      ctx.addIssue({ code: 'custom', path: ['functions', i, 'name'], message: `"${fn.name}" is a builtin tool name` });
    }
    seen.add(fn.name);
  }
}

function flowNodeSchema(toolRef: z.ZodType<string>) {
  return strictObject(nodeShape(toolRef)).superRefine(checkNode);
}

/** Response-only fields an exported node may carry; a bundle import ignores them. */
const NODE_OUTPUT_ONLY_FIELDS = ['id', 'agent_id', 'created_at', 'updated_at'] as const;

/** A node inside an agent bundle: bundle-local tool references, response-only fields ignored. */
export const BundleFlowNodeSchema = strictObject({
  ...nodeShape(bundleToolRef),
  id: z.unknown().optional().describe('ignored'),
  agent_id: z.unknown().optional().describe('ignored'),
  created_at: z.unknown().optional().describe('ignored'),
  updated_at: z.unknown().optional().describe('ignored'),
})
  .superRefine(checkNode)
  .transform((node) => {
    const copy = { ...node } as Record<string, unknown>;
    for (const k of NODE_OUTPUT_ONLY_FIELDS) delete copy[k];
    return copy as z.output<ReturnType<typeof flowNodeSchema>>;
  })
  .meta({ id: 'BundleFlowNode', description: 'a flow node as FlowNodeConfig, with bundle-local tool references; response-only fields are ignored' });

/** A node as sent to the API (PUT /flow, POST /nodes): the spec's flow node table. */
export const FlowNodeInputSchema = flowNodeSchema(toolUuid).meta({ id: 'FlowNodeConfig', description: 'a flow node as sent to the API (PUT …/flow, POST …/nodes) and as an export carries it' });
export type FlowNodeInput = z.output<typeof FlowNodeInputSchema>;

/** PATCH /nodes/{node_key}: any subset of the node fields, no defaults. */
export const FlowNodePatchSchema = strictObject({
  node_key: NodeKey.optional(),
  position: z.number().int().min(0).max(100_000).optional(),
  is_initial: z.boolean().optional(),
  is_terminal: z.boolean().optional(),
  role_messages: z.array(ChatMessageSchema).max(50).optional(),
  task_messages: z.array(ChatMessageSchema).max(50).optional(),
  functions: z.array(FlowFunctionSchema).max(50).optional(),
  tool_ids: z.array(toolUuid).max(100).optional(),
  mcp_tools: mcpToolList.optional(),
  knowledge_base_ids: z.array(z.uuid({ message: 'must be a UUID' })).max(20).optional(),
  knowledge_mode: KnowledgeMode.optional(),
  builtin_tools: z.array(BuiltinTool).optional(),
  pre_actions: z.array(PRE_ACTIONS.api).max(20).optional(),
  position_xy: PositionXy.nullable().optional(),
}).meta({ id: 'FlowNodePatch' });
export type FlowNodePatch = z.output<typeof FlowNodePatchSchema>;

export const FlowPutSchema = strictObject({ nodes: z.array(FlowNodeInputSchema).max(200) }).meta({ id: 'FlowReplace' });

/** The node record returned by the API. */
export const FlowNodeRecordSchema = z.object({
  id: z.uuid(),
  agent_id: z.uuid(),
  ...nodeShape(toolUuid),
  position: z.number().int(),
  created_at: Timestamp,
  updated_at: Timestamp,
}).meta({ id: 'FlowNode' });

export const FlowResponseSchema = z.object({
  nodes: z.array(FlowNodeRecordSchema),
  problems: z.array(z.string()).describe('graph-level problems: no initial node, dangling next_node_key, unreachable nodes'),
}).meta({ id: 'Flow' });
