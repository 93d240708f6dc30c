/**
 * The platform's own MCP tools (docs/mcp-server.md): each is a REST operation, found by its
 * operationId and run through invokeRoute, so it has exactly the route's roles, ownership checks,
 * validation and answers — there is no second permission system. The tool's input schema only
 * says where the arguments go (path, query, body); the route validates them, and its 4xx comes
 * back as the tool's error (`isError`) with the route's `detail`.
 */
import { z } from 'zod';

export interface PlatformTool {
  name: string;
  operationId: string;
  description: string;
  input: z.ZodRawShape;
  /** Where each argument goes in the route's request. */
  request(args: Record<string, unknown>): { params?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown };
}

const id = (what: string) => z.string().describe(`the ${what} id (UUID)`);
const fields = (what: string) => z.record(z.string(), z.unknown()).describe(what);

export const PLATFORM_TOOLS: PlatformTool[] = [
  {
    name: 'list_agents',
    operationId: 'listAgents',
    description: 'List every agent with its configuration (GET /api/agents).',
    input: {},
    request: () => ({}),
  },
  {
    name: 'get_agent',
    operationId: 'getAgent',
    description: 'One agent by id (GET /api/agents/{agent_id}).',
    input: { agent_id: id('agent') },
    request: ({ agent_id }) => ({ params: { agent_id } }),
  },
  {
    name: 'create_agent',
    operationId: 'createAgent',
    description:
      'Create an agent (POST /api/agents). `agent` holds the fields of the REST body: name (slug), prompt, and optionally greeting, llm_provider, tool_ids, mcp_tools, ... You become its owner.',
    input: { agent: fields('the agent fields, as POST /api/agents takes them') },
    request: ({ agent }) => ({ body: agent }),
  },
  {
    name: 'update_agent',
    operationId: 'updateAgent',
    description: 'Change some fields of an agent you own (PATCH /api/agents/{agent_id}).',
    input: { agent_id: id('agent'), changes: fields('the fields to change, as PATCH /api/agents/{agent_id} takes them') },
    request: ({ agent_id, changes }) => ({ params: { agent_id }, body: changes }),
  },
  {
    name: 'list_tools',
    operationId: 'listTools',
    description: 'List the webhook tools agents may use (GET /api/tools; header values masked).',
    input: {},
    request: () => ({}),
  },
  {
    name: 'start_test_call',
    operationId: 'startTestCall',
    description: 'Start a text test call with an agent (POST /api/calls/test). Answers the call id and the greeting; continue with send_test_message.',
    input: {
      agent_name: z.string().describe("the agent's name"),
      custom_parameters: z.record(z.string(), z.union([z.string(), z.number()])).optional().describe('context variables of the call'),
      phone_number: z.string().optional().describe('the caller number the agent sees (E.164)'),
    },
    request: (args) => ({ body: args }),
  },
  {
    name: 'send_test_message',
    operationId: 'sendTestMessage',
    description: "Say something in a text test call (POST /api/calls/{call_id}/test/messages); answers the agent's replies once its turn is done.",
    input: { call_id: id('call'), text: z.string().describe('what the caller says') },
    request: ({ call_id, text }) => ({ params: { call_id }, body: { text } }),
  },
  {
    name: 'end_call',
    operationId: 'endCall',
    description: 'Hang up a call (POST /api/calls/end); a phone call only as an administrator.',
    input: { call_id: id('call') },
    request: ({ call_id }) => ({ body: { call_id } }),
  },
  {
    name: 'place_outbound_call',
    operationId: 'createOutboundCall',
    description: 'Place an outbound phone call (POST /api/calls/outbound; administrators only): agent_name, phone_number and optional custom_parameters, from_number.',
    input: { call: fields('the fields of POST /api/calls/outbound') },
    request: ({ call }) => ({ body: call }),
  },
  {
    name: 'list_calls',
    operationId: 'listCalls',
    description: 'List calls, newest first (GET /api/calls). `filters` are its query parameters, e.g. {"agent_name": "support", "status": "completed", "include_transcript": true, "limit": 20}.',
    input: { filters: fields('query parameters of GET /api/calls').optional() },
    // Query values arrive as text over HTTP; the route's schema reads them that way.
    request: ({ filters }) => ({ query: Object.fromEntries(Object.entries((filters ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)])) }),
  },
  {
    name: 'get_call',
    operationId: 'getCall',
    description: 'One call with its status, transcript and post-call analysis (GET /api/calls/{call_id}).',
    input: { call_id: id('call') },
    request: ({ call_id }) => ({ params: { call_id } }),
  },
  {
    name: 'run_agent_tests',
    operationId: 'startTestRun',
    description: "Run an agent's tests (POST /api/agents/{agent_id}/test-runs); `options` as its body (e.g. {\"test_ids\": [...]}). Read the result with get_test_run.",
    input: { agent_id: id('agent'), options: fields('the body of POST /api/agents/{agent_id}/test-runs').optional() },
    request: ({ agent_id, options }) => ({ params: { agent_id }, body: options ?? {} }),
  },
  {
    name: 'get_test_run',
    operationId: 'getTestRun',
    description: 'A test run with each test\'s verdict (GET /api/test-runs/{run_id}).',
    input: { run_id: id('test run') },
    request: ({ run_id }) => ({ params: { run_id } }),
  },
];
