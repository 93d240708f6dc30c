/**
 * Agent request schemas. `AgentCreateSchema` is the complete validation of an agent config with
 * every default applied; PATCH merges the change into the stored config and validates the result
 * with it again, so cross-field rules (idle_end_secs > idle_warn_secs, stt_mode) hold after any
 * update. Tool references are checked against the database by the service, not here.
 */
import { z } from 'zod';
import { DEFAULT_LLM_MODEL, LLM_PROVIDERS, NOISE_SUPPRESSION_MODES, PIPELINE_DEFAULTS, STT_PROVIDERS, sttModeProviders, TTS_PROVIDERS } from '../../shared/catalog';
import { LlmProvider, WebhookEventType, SttMode, SttProvider, Timestamp, TtsProvider } from './common';
import { AnalysisPatchSchema, AnalysisSettingsOutSchema, AnalysisSettingsSchema } from './analysis';
import { bundleToolRef, mcpToolRef, strictObject, toolUuid } from './flow';
import { DEFAULT_SUMMARY_PROMPT, DEFAULT_WARM_WAIT_SECS, DESTINATION_NAME, E164, HOLD_TONE, MAX_TRANSFER_DESTINATIONS, MAX_WARM_WAIT_SECS, SIP_URI, TRANSFER_MODES } from '../../shared/transfer';
import { VoicemailSchema } from './voicemail';
import { KnowledgeMode } from './knowledge-base';
import { KNOWLEDGE_TIMEOUT_DEFAULT_MS, KNOWLEDGE_TIMEOUT_MAX_MS } from '../../shared/knowledge';

export { FlowNodeInputSchema } from './flow';

export const AGENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const LANGUAGE_TAG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
// Longer than an hour of silence is never intended; a call would just hold a line open.
const MAX_IDLE_SECS = 3600;
// VAD windows are fractions of a second in practice; ten seconds is already unusable.
const MAX_VAD_WINDOW_SECS = 10;

export const AgentName = z
  .string()
  .regex(AGENT_NAME_PATTERN, 'must be a slug: 1-64 letters, digits, "_" or "-", starting with a letter or digit, no spaces');

const languageTag = z.string().regex(LANGUAGE_TAG, 'must be a BCP-47 language tag such as en, hi-IN');
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2_000);
const providerSettings = z.record(z.string(), z.unknown()).describe('provider-specific settings');
const dedupe = <T>(items: T[]) => [...new Set(items)];
const knowledgeBaseIds = z.array(z.uuid({ message: 'must be a UUID' })).max(20);
const knowledgeTimeout = z
  .number()
  .int()
  .min(10)
  .max(KNOWLEDGE_TIMEOUT_MAX_MS)
  .describe(`auto mode: a retrieval slower than this (ms) is skipped for the turn, with an event (10–${KNOWLEDGE_TIMEOUT_MAX_MS})`);

const sttModeText = () => `only for the stt_provider that offers it (${sttModeProviders().join(', ')})`;

/** An agent's own phrases (`backchannel_phrases`, `interrupt_phrases`). */
const phraseSettings = strictObject({
  mode: z.enum(['add', 'replace']).meta({ id: 'PhraseMode' }).default('add').describe('add: besides the built-in phrases; replace: instead of them'),
  phrases: z.array(z.string().trim().min(1).max(100)).max(200).describe('matched ignoring case and punctuation, as whole words'),
}).meta({ id: 'PhraseSettings' });

/** Every field of `pipeline_settings` with its rule (defaults come from PIPELINE_DEFAULTS). */
const pipelineFields = {
  idle_warn_secs: z.number().positive().max(MAX_IDLE_SECS).describe('seconds of silence before the agent prompts the user'),
  idle_end_secs: z.number().positive().max(MAX_IDLE_SECS).describe('seconds of silence before the agent ends the call; > idle_warn_secs'),
  vad_confidence: z.number().min(0).max(1).describe('VAD confidence threshold'),
  vad_start_secs: z.number().positive().max(MAX_VAD_WINDOW_SECS).describe('seconds of speech to begin a user turn'),
  vad_stop_secs: z.number().positive().max(MAX_VAD_WINDOW_SECS).describe('seconds of silence to end a user turn'),
  vad_min_volume: z.number().min(0).max(1).describe('minimum volume counted as speech'),
  min_words: z.number().int().min(1).max(50).describe('minimum words before the LLM processes a turn'),
  backchannel_phrases: phraseSettings.describe(
    'backchannels ("uh-huh", "haan ji"): never interrupt the agent, never answered. mode add: besides the built-in ones of the agent\'s stt_language and English; replace: instead of them (docs/media-gateway.md#backchannels)',
  ),
  interrupt_phrases: phraseSettings.describe(
    'words that interrupt the agent at once, whatever min_words ("stop", "ruko"). mode add: besides the built-in ones; replace: instead of them (docs/media-gateway.md#barge-in)',
  ),
  dictation_wait_secs: z
    .number()
    .positive()
    .max(MAX_VAD_WINDOW_SECS)
    .describe('seconds of silence that end a turn stopped in the middle of dictation (a number, an e-mail address, a trailing "and"); other turns end at vad_stop_secs (docs/media-gateway.md#end-of-turn)'),
  false_interruption_secs: z
    .number()
    .min(0)
    .max(MAX_VAD_WINDOW_SECS)
    .describe('speech over the agent pauses it at once (min_words > 1); a backchannel, or no words within this many seconds, resumes it where the caller stopped hearing it (event agent_resumed); 0: no pause (docs/media-gateway.md#barge-in)'),
  dtmf_timeout_secs: z.number().min(0.5).max(30).describe("seconds without a keypress that end the caller's keypad input (# ends it at once)"),
  dtmf_max_digits: z.number().int().min(1).max(64).describe("keypresses that end the caller's keypad input on their own"),
  noise_suppression: z
    .enum(NOISE_SUPPRESSION_MODES)
    .describe("rnnoise: RNNoise on the caller's audio before the VAD and the STT (the recording keeps what the caller sent); costs CPU per call (docs/media-gateway.md#noise)"),
};
type PipelineKey = keyof typeof pipelineFields;

const llmFields = {
  temperature: z.number().min(0).max(2),
  max_tokens: z.number().int().positive().max(100_000),
};

const ContextVariable = strictObject({
  type: z.string().min(1).max(32).describe('e.g. string, number'),
  description: z.string().max(2_000).default(''),
}).meta({ id: 'ContextVariable' });

/** One transfer destination: a name, exactly one of phone_number (E.164) and sip_uri, a description, a message. */
export const TransferDestinationSchema = strictObject({
  name: z.string().regex(DESTINATION_NAME, 'must be 1-64 letters, digits, spaces, "_", "." or "-", starting with a letter or digit').describe('what the LLM names it by in transfer_call'),
  phone_number: z.string().regex(E164, 'must be an E.164 number such as +14155550100').nullable().default(null),
  sip_uri: z.string().regex(SIP_URI, 'must be a SIP URI such as sip:billing@pbx.example.com').nullable().default(null),
  description: z.string().min(1).max(1_000).describe('when to transfer there: given to the LLM in the tool schema'),
  message: z.string().max(1_000).default('').describe('spoken to the caller just before the hand-over, e.g. "Connecting you to billing"'),
  mode: z
    .enum(TRANSFER_MODES)
    .meta({ id: 'TransferMode' })
    .default('cold')
    .describe('cold: the vendor dials the destination and hands the caller over; warm: the caller waits on hold while the agent briefs the person who answered, who presses 1 or says "connect" (docs/phone-operations.md#warm-transfer)'),
  summary_prompt: z
    .string()
    .trim()
    .min(1)
    .max(2_000)
    .nullable()
    .default(null)
    .describe(`warm: what the briefing's summary of the call covers (an instruction to the LLM); null: "${DEFAULT_SUMMARY_PROMPT}"`),
  hold_audio: z
    .union([z.literal(HOLD_TONE), httpUrl])
    .default(HOLD_TONE)
    .describe(`warm: what the caller hears on hold: "${HOLD_TONE}" (a built-in soft tone) or an http(s) URL of a WAV or MP3 the vendor can fetch`),
  max_wait_secs: z
    .number()
    .int()
    .min(5)
    .max(MAX_WARM_WAIT_SECS)
    .default(DEFAULT_WARM_WAIT_SECS)
    .describe('warm: seconds the destination may ring before the caller comes back to the agent, and seconds the briefed person may take to press 1 / say connect'),
}).superRefine((d, ctx) => {
  if (!d.phone_number === !d.sip_uri) ctx.addIssue({ code: 'custom', path: ['phone_number'], message: 'give exactly one of phone_number and sip_uri' });
}).meta({
  id: 'TransferDestination',
  // The rule above, for clients and validators: exactly one of the two is a string (the other absent or null).
  oneOf: [
    { required: ['phone_number'], properties: { phone_number: { type: 'string' } } },
    { required: ['sip_uri'], properties: { sip_uri: { type: 'string' } } },
  ],
});

const transferDestinations = z
  .array(TransferDestinationSchema)
  .max(MAX_TRANSFER_DESTINATIONS)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    for (const [i, d] of list.entries()) {
      if (seen.has(d.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate destination name "${d.name}"` });
      seen.add(d.name);
    }
  });

function agentShape(toolRef: z.ZodType<string>) {
  const pipeline = Object.fromEntries(
    (Object.keys(pipelineFields) as PipelineKey[]).map((k) => [k, (pipelineFields[k] as z.ZodType).default(PIPELINE_DEFAULTS[k])]),
  ) as { [K in PipelineKey]: z.ZodDefault<(typeof pipelineFields)[K]> };
  return {
    name: AgentName.describe('unique slug; used in inbound webhook URLs and as agent_name in call requests'),
    prompt: z.string().min(1).max(100_000).describe('LLM system prompt'),
    greeting: z.string().max(5_000).nullable().default(null).describe('first TTS message; supports {{variable}} placeholders'),
    stt_provider: SttProvider.default(STT_PROVIDERS[0]!),
    stt_model: z.string().min(1).max(200).nullable().default(null),
    stt_language: languageTag.default('en'),
    stt_mode: SttMode.nullable().default(null).describe(sttModeText()),
    stt_settings: providerSettings.default({}),
    llm_provider: LlmProvider.default(LLM_PROVIDERS[0]!),
    llm_model: z.string().min(1).max(200).optional().describe('default: a small model of llm_provider'),
    llm_settings: strictObject({ temperature: llmFields.temperature.optional(), max_tokens: llmFields.max_tokens.optional() }).meta({ id: 'LlmSettings' }).default({}),
    tts_provider: TtsProvider.default(TTS_PROVIDERS[0]!),
    tts_model: z.string().min(1).max(200).nullable().default(null),
    voice: z.string().min(1).max(200).nullable().default(null).describe('voice id or speaker name'),
    tts_language: languageTag.nullable().default(null),
    tts_settings: providerSettings.default({}),
    pipeline_settings: strictObject(pipeline).meta({ id: 'PipelineSettings' }).prefault({}),
    pre_call_tool_ids: z.array(toolRef).max(20).default([]).transform(dedupe).describe('tools fired in parallel with the greeting'),
    tool_ids: z.array(toolRef).max(100).default([]).transform(dedupe).describe('tools the LLM may call (freeform agents)'),
    mcp_tools: z.array(mcpToolRef).max(100).default([]).transform(dedupe).describe('MCP tools the LLM may call (freeform agents), `<server>/<tool>`'),
    knowledge_base_ids: knowledgeBaseIds.default([]).transform(dedupe).describe('knowledge bases the agent answers from (docs/knowledge-base.md); flow nodes without their own use these'),
    knowledge_mode: KnowledgeMode.default('auto'),
    knowledge_timeout_ms: knowledgeTimeout.default(KNOWLEDGE_TIMEOUT_DEFAULT_MS),
    context_variables: z
      .record(z.string().regex(VARIABLE_NAME, 'variable names are letters, digits, _ . -'), ContextVariable)
      .default({})
      .describe('expected outbound variables: name -> {type, description}'),
    webhook_url: httpUrl.nullable().default(null).describe('receives call event notifications'),
    webhook_events: z.array(WebhookEventType).default([]).transform(dedupe),
    analysis: AnalysisSettingsSchema.nullable()
      .default(null)
      .describe('post-call analysis: a summary, fields extracted from the call and a success verdict after every call (docs/post-call-analysis.md); null: none'),
    transfer_destinations: transferDestinations
      .default([])
      .describe(
        'where the agent may hand the caller to a human (builtin tool transfer_call, flow pre_action transfer_call): a cold or warm transfer (mode) on phone calls whose telephony vendor can transfer (its capabilities.transfer); not offered on other calls, web or text calls (docs/phone-operations.md#transfer-to-a-human)',
      ),
    voicemail: VoicemailSchema.nullable()
      .default(null)
      .describe('answering-machine detection on outbound calls (docs/phone-operations.md#voicemail-on-outbound-calls); null: none'),
  };
}

/** The configuration fields of an agent, in API order. */
export const AGENT_CONFIG_FIELDS = Object.keys(agentShape(toolUuid)) as Array<keyof ReturnType<typeof agentShape>>;

type AgentShapeOutput = z.output<z.ZodObject<ReturnType<typeof agentShape>>>;

function checkAgent(agent: AgentShapeOutput, ctx: z.RefinementCtx) {
  const p = agent.pipeline_settings;
  if (p.idle_end_secs <= p.idle_warn_secs) {
    ctx.addIssue({ code: 'custom', path: ['pipeline_settings', 'idle_end_secs'], message: `must be greater than idle_warn_secs (${p.idle_warn_secs})` });
  }
  if (agent.stt_mode !== null && !sttModeProviders().includes(agent.stt_provider)) {
    ctx.addIssue({ code: 'custom', path: ['stt_mode'], message: `only allowed when stt_provider is ${sttModeProviders().join(' or ')}` });
  }
}

const withModelDefault = <T extends AgentShapeOutput>(agent: T) => ({
  ...agent,
  llm_model: agent.llm_model ?? DEFAULT_LLM_MODEL[agent.llm_provider],
});

/** Response-only fields an exported agent may carry; a bundle import ignores them. */
export const AGENT_OUTPUT_ONLY_FIELDS = ['id', 'version', 'created_at', 'updated_at', 'total_calls', 'flow_nodes_count', 'webhook_secret', 'owner_id', 'warnings'] as const;

function agentCreateSchema(toolRef: z.ZodType<string>) {
  return strictObject(agentShape(toolRef)).superRefine(checkAgent).transform(withModelDefault).meta({ id: 'AgentCreate' });
}

function bundleAgentSchema() {
  const ignored = Object.fromEntries(AGENT_OUTPUT_ONLY_FIELDS.map((k) => [k, z.unknown().optional().describe('ignored')])) as {
    [K in (typeof AGENT_OUTPUT_ONLY_FIELDS)[number]]: z.ZodOptional<z.ZodUnknown>;
  };
  return strictObject({ ...agentShape(bundleToolRef), ...ignored })
    .superRefine(checkAgent)
    .transform((agent) => {
      const config = { ...agent } as Record<string, unknown>;
      for (const k of AGENT_OUTPUT_ONLY_FIELDS) delete config[k];
      return withModelDefault(config as AgentShapeOutput);
    })
    .meta({ id: 'BundleAgent', description: 'an agent config as POST /api/agents takes it; tool references may be bundle-local, response-only fields are ignored' });
}

/** POST /api/agents: minimal `{name, prompt}`; the output has every default applied. */
export const AgentCreateSchema = agentCreateSchema(toolUuid);
export type AgentCreate = z.output<typeof AgentCreateSchema>;
/** An agent config inside a bundle: tool references may be bundle-local. */
export const BundleAgentSchema = bundleAgentSchema();
export type BundleAgent = z.output<typeof BundleAgentSchema>;

/** Nested settings merge key by key; `null` for a key removes it (pipeline keys revert to their default). */
const nullablePartial = <S extends Record<string, z.ZodType>>(fields: S) =>
  strictObject(Object.fromEntries(Object.entries(fields).map(([k, s]) => [k, s.nullable().optional()])) as {
    [K in keyof S]: z.ZodOptional<z.ZodNullable<S[K]>>;
  });

/** PATCH /api/agents/{agent_id}: any subset of the agent fields. */
export const AgentPatchSchema = strictObject({
  name: AgentName.optional(),
  prompt: z.string().min(1).max(100_000).optional(),
  greeting: z.string().max(5_000).nullable().optional(),
  stt_provider: SttProvider.optional(),
  stt_model: z.string().min(1).max(200).nullable().optional(),
  stt_language: languageTag.optional(),
  stt_mode: SttMode.nullable().optional(),
  stt_settings: providerSettings.optional().describe('merged key by key; null removes a key'),
  llm_provider: LlmProvider.optional(),
  llm_model: z.string().min(1).max(200).optional(),
  llm_settings: nullablePartial(llmFields).meta({ id: 'LlmSettingsPatch' }).optional().describe('merged key by key; null removes a key'),
  tts_provider: TtsProvider.optional(),
  tts_model: z.string().min(1).max(200).nullable().optional(),
  voice: z.string().min(1).max(200).nullable().optional(),
  tts_language: languageTag.nullable().optional(),
  tts_settings: providerSettings.optional().describe('merged key by key; null removes a key'),
  pipeline_settings: nullablePartial(pipelineFields).meta({ id: 'PipelineSettingsPatch' }).optional().describe('merged key by key; null restores the default'),
  pre_call_tool_ids: z.array(toolUuid).max(20).optional(),
  tool_ids: z.array(toolUuid).max(100).optional(),
  mcp_tools: z.array(mcpToolRef).max(100).optional(),
  knowledge_base_ids: knowledgeBaseIds.optional(),
  knowledge_mode: KnowledgeMode.optional(),
  knowledge_timeout_ms: knowledgeTimeout.optional(),
  context_variables: z.record(z.string().regex(VARIABLE_NAME), ContextVariable).optional(),
  webhook_url: httpUrl.nullable().optional(),
  webhook_events: z.array(WebhookEventType).optional(),
  analysis: AnalysisPatchSchema.nullable().optional().describe('merged key by key (null for a key restores its default); null removes the analysis'),
  transfer_destinations: transferDestinations.optional().describe('replaces the whole list'),
  voicemail: VoicemailSchema.nullable().optional().describe('replaced as a whole; null turns detection off'),
}).meta({ id: 'AgentPatch' });
export type AgentPatch = z.output<typeof AgentPatchSchema>;

/**
 * The configuration alone, every default applied, as an export carries it and generation drafts
 * it: what POST /api/agents takes, so `analysis.enabled` may still be null (= on when set up).
 */
export const AgentConfigSchema = z
  .object({ ...agentShape(toolUuid), llm_model: z.string() })
  .meta({ id: 'AgentConfig', description: 'agent config as in POST /api/agents (no id, timestamps, version or secrets)' });

/**
 * The agent as every operation answers it (create, get, update, list, import), never the
 * encrypted webhook secret: the secret itself only in the answer to create.
 */
export const AgentSchema = z
  .object({
    id: z.uuid(),
    ...agentShape(toolUuid),
    llm_model: z.string(),
    analysis: AnalysisSettingsOutSchema.nullable(),
    version: z.number().int().describe('incremented on every change of the config or its flow nodes'),
    created_at: Timestamp,
    updated_at: Timestamp,
    total_calls: z.number().int(),
    flow_nodes_count: z.number().int().describe('0 = freeform agent'),
    owner_id: z.uuid().nullable().describe('the user who created it (members may change only their own); null = the administrators\''),
    warnings: z
      .array(z.string())
      .describe(
        'why this agent could not hold a voice call on this installation right now, one line per provider, e.g. "stt_provider <name>: <VENDOR>_API_KEY is not set"; empty when it can. Outbound calls are refused and inbound calls apologised for while it is not empty',
      ),
    webhook_secret: z
      .string()
      .optional()
      .describe('whsec_…: signs outgoing webhook notifications; only in the answer to POST /api/agents (later: POST /api/agents/{agent_id}/webhook-secret)'),
  })
  .meta({ id: 'Agent' });
