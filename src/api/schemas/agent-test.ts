/**
 * Agent test cases and test runs (docs/agent-tests.md). Test cases are stored per agent and carried
 * by agent bundles; a replay test also carries what the recorded call said and did.
 */
import { z } from 'zod';
import { strictObject } from './flow';
import { CallDirection, EndReason, SpeakerRole, Timestamp } from './common';

export const TEST_KINDS = ['simulated', 'scripted', 'replay'] as const;
export const TEST_MAX_TURNS = 50;
const TestKind = z.enum(TEST_KINDS).meta({ id: 'AgentTestKind' });

const Text = (max: number) => z.string().trim().min(1).max(max);
const Phrase = Text(500);
const Args = z.record(z.string(), z.unknown());

export const ExpectationSchema = z
  .discriminatedUnion('type', [
    strictObject({ type: z.literal('tool_called'), tool: Text(64), args: Args.optional().describe('argument values the call must have (others may differ)') }),
    strictObject({ type: z.literal('tool_not_called'), tool: Text(64) }),
    strictObject({ type: z.literal('node_reached'), node_key: Text(64) }),
    strictObject({ type: z.literal('ended_by_agent') }),
    strictObject({ type: z.literal('end_reason'), end_reason: EndReason }),
    strictObject({ type: z.literal('within_turns'), turns: z.number().int().min(1).max(TEST_MAX_TURNS) }),
    strictObject({ type: z.literal('said'), phrase: Phrase.describe('the agent says this (case-insensitive substring)') }),
    strictObject({ type: z.literal('never_said'), phrase: Phrase }),
    strictObject({
      type: z.literal('used_document'),
      document: Text(2000).describe("a knowledge-base document's name (a URL document: its URL), compared ignoring case: an agent reply was given a passage of it"),
    }),
    strictObject({ type: z.literal('same_tools') }),
    strictObject({ type: z.literal('same_nodes') }),
    strictObject({ type: z.literal('same_end') }),
  ])
  .meta({ id: 'Expectation', description: 'a deterministic check of each attempt; same_* compare with the recorded call (replay tests only)' });

const CustomParameters = z
  .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'names are letters, digits and _'), z.union([z.string().max(2000), z.number()]))
  .refine((o) => Object.keys(o).length <= 50, 'at most 50 parameters');

const ToolMocks = z
  .record(z.string().min(1).max(64), z.array(z.unknown()).min(1).max(50))
  .describe('results by tool name, in call order (the last answers any further call); tools without results get an error result');

const TestFields = {
  name: Text(200),
  persona: Text(8000).nullable().optional().describe('simulated: who the caller is, what they want, how they talk'),
  script: z.array(Text(4000)).max(TEST_MAX_TURNS).optional().describe('scripted: the caller utterances, in order'),
  custom_parameters: CustomParameters.optional(),
  max_turns: z.number().int().min(1).max(TEST_MAX_TURNS).optional().describe('simulated: caller turns at most (default 10)'),
  expectations: z.array(ExpectationSchema).max(50).optional(),
  judge: z.array(Text(1000)).max(20).optional().describe('criteria in words, each judged pass/fail with a reason by an LLM'),
  tool_mocks: ToolMocks.optional(),
  pass_threshold: z.number().min(0).max(1).optional().describe('share of repeats that must pass (default 1.0)'),
};

export const TestCreateSchema = strictObject({ kind: z.enum(['simulated', 'scripted']), ...TestFields }).superRefine((t, ctx) => {
  if (t.kind === 'simulated' && !t.persona) ctx.addIssue({ code: 'custom', path: ['persona'], message: 'is required for a simulated test' });
  if (t.kind === 'scripted' && !t.script?.length) ctx.addIssue({ code: 'custom', path: ['script'], message: 'needs at least one caller utterance' });
  if (t.expectations?.some((e) => e.type.startsWith('same_'))) {
    ctx.addIssue({ code: 'custom', path: ['expectations'], message: 'same_tools, same_nodes and same_end need a recorded call (replay tests only)' });
  }
}).meta({ id: 'AgentTestCreate' });
export type TestCreate = z.output<typeof TestCreateSchema>;

export const TestPatchSchema = strictObject(TestFields).partial().meta({ id: 'AgentTestPatch' });
export type TestPatch = z.output<typeof TestPatchSchema>;

export const FromCallSchema = strictObject({
  name: Text(200).optional().describe('default: "Replay of call <id>"'),
  judge: z.array(Text(1000)).max(20).optional(),
  expectations: z.array(ExpectationSchema).max(50).optional().describe('default: same_tools, same_nodes, same_end'),
  pass_threshold: z.number().min(0).max(1).optional(),
}).meta({ id: 'AgentTestFromCall' });

const ToolCallSchema = z.object({ name: z.string(), args: z.record(z.string(), z.unknown()) }).meta({ id: 'ToolCall' });
const TurnSchema = z.object({ caller: z.string().nullable(), replies: z.array(z.string()), tool_calls: z.array(ToolCallSchema), nodes: z.array(z.string()) });
export const RecordingSchema = z
  .object({
    call_id: z.uuid(),
    agent_version: z.number().int().nullable(),
    direction: CallDirection,
    turns: z.array(TurnSchema).describe('turn 0: before the caller spoke'),
    end_reason: EndReason.nullable(),
    tool_results: z.record(z.string(), z.array(z.unknown())),
  })
  .meta({ id: 'RecordedCall', description: 'replay tests: what the recorded call said and did' });

export const TestSchema = z.object({
  id: z.uuid(),
  agent_id: z.uuid(),
  name: z.string(),
  kind: TestKind,
  persona: z.string().nullable(),
  script: z.array(z.string()),
  custom_parameters: z.record(z.string(), z.union([z.string(), z.number()])),
  max_turns: z.number().int(),
  expectations: z.array(ExpectationSchema),
  judge: z.array(z.string()),
  tool_mocks: z.record(z.string(), z.array(z.unknown())),
  pass_threshold: z.number(),
  source_call_id: z.uuid().nullable(),
  recording: RecordingSchema.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
}).meta({ id: 'AgentTest' });

/** A test as an agent bundle carries it (no ids or timestamps). */
export const BundleTestSchema = strictObject({
  kind: TestKind,
  ...TestFields,
  recording: RecordingSchema.nullable().optional(),
  source_call_id: z.uuid().nullable().optional(),
}).meta({ id: 'BundleTest' });

export const RunCreateSchema = strictObject({
  test_ids: z.array(z.uuid({ error: 'must be a test id (UUID)' })).min(1).max(200).optional().describe('default: every test of the agent'),
  agent_version: z.number().int().min(1).optional().describe('default: the current version'),
  compare_version: z.number().int().min(1).optional().describe('also run every test against this version, side by side'),
  repeat: z.number().int().min(1).max(50).default(1),
  concurrency: z.number().int().min(1).optional().describe('conversations at a time (default 2, at most AGENT_TEST_MAX_CONCURRENCY)'),
}).meta({ id: 'TestRunCreate' });

const UsageSchema = z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int() }).meta({ id: 'TokenUsage' });

export const AttemptSchema = z.object({
  attempt: z.number().int(),
  version: z.number().int(),
  status: z.enum(['running', 'done', 'error']),
  passed: z.boolean().nullable(),
  call_id: z.uuid().nullable(),
  result: z
    .object({
      call_status: z.string().optional(),
      end_reason: z.string().nullable().optional(),
      ended_by: z.enum(['agent', 'caller', 'limit']).optional().describe('agent: the call ended on the platform side; caller: the simulated caller hung up; limit: the caller ran out of turns'),
      turns: z.number().int().optional(),
      error: z.string().nullable().optional(),
      expectations: z.array(z.object({ expectation: ExpectationSchema, description: z.string(), passed: z.boolean(), detail: z.string().nullable() })).optional(),
      judge: z.array(z.object({ criterion: z.string(), passed: z.boolean(), reason: z.string() })).optional(),
      transcript: z.array(z.object({ role: SpeakerRole, text: z.string() })).optional(),
      tool_calls: z.array(ToolCallSchema).optional(),
      nodes: z.array(z.string()).optional(),
      unmocked_tools: z.array(z.string()).optional(),
      diff: z
        .object({
          turns: z.array(
            z.object({
              turn: z.number().int(),
              caller: z.string().nullable(),
              recorded: z.object({ replies: z.array(z.string()), tool_calls: z.array(ToolCallSchema) }),
              replayed: z.object({ replies: z.array(z.string()), tool_calls: z.array(ToolCallSchema) }).nullable(),
              replies_changed: z.boolean(),
              tools_changed: z.boolean(),
            }),
          ),
          changed_turns: z.number().int(),
        })
        .nullable()
        .optional(),
      usage: z.object({ agent: UsageSchema, simulator: UsageSchema, judge: UsageSchema }).optional(),
    })
    .describe('empty while the attempt runs'),
}).meta({ id: 'TestAttempt' });

const VersionResultSchema = z.object({
  version: z.number().int(),
  attempts: z.number().int().describe('attempts finished'),
  passed_attempts: z.number().int(),
  pass_rate: z.number().nullable().describe('passed / finished attempts; null before the first one finishes'),
  passed: z.boolean().nullable().describe('pass_rate >= pass_threshold once every attempt finished'),
  unmocked_tools: z.array(z.string()),
  usage: UsageSchema.describe('all LLM tokens of the attempts: agent, simulated caller and judge'),
}).meta({ id: 'TestVersionResult' });

export const RunSchema = z.object({
  id: z.uuid(),
  agent_id: z.uuid(),
  agent_version: z.number().int(),
  compare_version: z.number().int().nullable(),
  status: z.enum(['running', 'completed', 'failed', 'canceled']),
  repeat: z.number().int(),
  concurrency: z.number().int(),
  created_at: Timestamp,
  finished_at: Timestamp.nullable(),
  progress: z.object({ total: z.number().int(), done: z.number().int(), running: z.number().int(), passed: z.number().int(), failed: z.number().int() }),
  passed: z.boolean().nullable().describe('every test reached its pass_threshold on agent_version; null while running'),
  unmocked_tools: z.array(z.string()).describe('tools some attempt called without a mocked result'),
  tests: z.array(
    z.object({
      test_id: z.uuid(),
      name: z.string(),
      kind: TestKind,
      pass_threshold: z.number(),
      results: z.array(VersionResultSchema).describe('agent_version first, then compare_version'),
      attempts: z.array(AttemptSchema).optional().describe('left out of run lists'),
    }),
  ),
}).meta({ id: 'TestRun' });
