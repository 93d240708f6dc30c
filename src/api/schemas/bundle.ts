/**
 * Agent bundle (export / import), version "1": the agent config, the tools it refers to and its
 * flow nodes. Tool references inside the bundle are bundle-local: the `id` of an entry of `tools`.
 */
import { z } from 'zod';
import { AgentConfigSchema, AgentSchema, BundleAgentSchema } from './agent';
import { bundleToolRef, BundleFlowNodeSchema, FlowNodeInputSchema, strictObject } from './flow';
import { ToolCreateSchema } from './tool';
import { BundleTestSchema } from './agent-test';
import { McpServerCreateSchema } from './mcp-server';

export const BundleMcpServerSchema = McpServerCreateSchema.extend({
  tools: z
    .array(strictObject({ name: z.string().min(1).max(128), description: z.string().max(10_000).default(''), input_schema: z.record(z.string(), z.unknown()).default({}) }))
    .max(500)
    .default([])
    .describe('the tool list of its last refresh, so the references can be checked without reaching the server'),
});
export type BundleMcpServer = z.output<typeof BundleMcpServerSchema>;

export const BUNDLE_VERSION = '1';

export const BundleToolSchema = ToolCreateSchema.extend({
  id: bundleToolRef.describe('bundle-local reference used in tool_ids, pre_call_tool_ids and call_tool pre-actions (export: the tool id)'),
}).meta({ id: 'BundleTool' });

export const BundleImportSchema = strictObject({
  version: z.literal(BUNDLE_VERSION, { error: (iss) => `unsupported bundle version ${JSON.stringify(iss.input)}; supported: "${BUNDLE_VERSION}"` }),
  overwrite: z.boolean().default(false).describe('replace the config and nodes of an existing agent with the same name'),
  agent: BundleAgentSchema,
  tools: z.array(BundleToolSchema).max(200).default([]),
  mcp_servers: z.array(BundleMcpServerSchema).max(50).default([]).describe('MCP servers the agent refers to, matched by name'),
  flow_nodes: z.array(BundleFlowNodeSchema).max(200).default([]),
  tests: z.array(BundleTestSchema).max(200).optional().describe("the agent's tests (docs/agent-tests.md); on overwrite they replace the agent's tests, when given"),
}).meta({ id: 'AgentBundleImport' });
export type BundleImport = z.output<typeof BundleImportSchema>;

export const BundleSchema = z.object({
  version: z.literal(BUNDLE_VERSION),
  agent: AgentConfigSchema,
  tools: z.array(
    BundleToolSchema.extend({ headers: z.record(z.string(), z.string()).describe('masked unless exported with include_secrets=true') }).meta({ id: 'ExportedTool' }),
  ),
  mcp_servers: z.array(BundleMcpServerSchema.extend({ headers: z.record(z.string(), z.string()).describe('masked unless exported with include_secrets=true') }).meta({ id: 'ExportedMcpServer' })),
  flow_nodes: z.array(FlowNodeInputSchema),
  tests: z.array(BundleTestSchema),
}).meta({ id: 'AgentBundle' });

export const ImportResultSchema = z.object({
  agent: AgentSchema,
  tools_created: z.array(z.string()).describe('names of tools created from the bundle'),
  tools_reused: z.array(z.string()).describe('names of existing tools the bundle refers to (left unchanged)'),
  tools_without_secrets: z
    .array(z.string())
    .describe('tools created without the header values the bundle carried masked (exported without include_secrets): set them with PATCH /api/tools/{tool_id}'),
  mcp_servers_created: z.array(z.string()).describe('names of MCP servers created from the bundle'),
  mcp_servers_reused: z.array(z.string()).describe('names of existing MCP servers the bundle refers to (left unchanged)'),
  mcp_servers_without_secrets: z.array(z.string()).describe('MCP servers created without the header values the bundle carried masked: set them with PATCH /api/mcp-servers/{server_id}'),
  flow_nodes_count: z.number().int(),
  tests_count: z.number().int().describe('tests imported with the agent'),
}).meta({ id: 'ImportResult' });
