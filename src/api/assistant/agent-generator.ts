/**
 * Drafts an agent configuration from a plain-language description with the configured LLM. The
 * model fills a small structured-output schema (what it is good at: name, prompt, greeting,
 * variables, a few tuning knobs); the server adds what it knows better (languages, model) and
 * validates the result with the same schema as POST /api/agents, so the draft can be submitted as is.
 */
import { Op } from 'sequelize';
import { z } from 'zod';
import type { Database } from '../../db/database';
import { PIPELINE_DEFAULTS } from '../../shared/catalog';
import { describeIssues } from '../errors';
import { AGENT_NAME_PATTERN, AgentCreateSchema, type AgentCreate } from '../schemas/agent';
import { agentLanguages } from './languages';
import { badLlmOutput, firstChoice, type AssistantLlm } from './llm';

const nullable = (type: string, description: string) => ({ type: [type, 'null'], description });

const parameterList = {
  type: 'array',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'type', 'description'],
    properties: {
      name: { type: 'string' },
      type: { type: 'string', enum: ['string', 'number'] },
      description: { type: 'string' },
    },
  },
};

/** OpenAI strict structured outputs: every property required, optional ones nullable, no free maps. */
export const DRAFT_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'prompt', 'greeting', 'context_variables', 'pipeline_settings', 'llm_settings', 'suggested_tools'],
  properties: {
    name: { type: 'string', description: 'short slug of the agent job: lowercase letters, digits and hyphens, e.g. clinic-appointments' },
    prompt: { type: 'string', description: 'the system prompt of the phone agent' },
    greeting: nullable('string', 'first sentence the agent speaks when the call connects; null when the caller speaks first'),
    context_variables: { ...parameterList, description: 'per-call variables used as {{name}} placeholders in prompt or greeting' },
    pipeline_settings: {
      type: 'object',
      additionalProperties: false,
      required: ['idle_warn_secs', 'idle_end_secs', 'min_words', 'backchannel_phrases', 'dictation_wait_secs'],
      properties: {
        idle_warn_secs: nullable('number', `seconds of caller silence before a reminder; null = ${PIPELINE_DEFAULTS.idle_warn_secs}`),
        idle_end_secs: nullable('number', `seconds of silence before hanging up; null = ${PIPELINE_DEFAULTS.idle_end_secs}`),
        min_words: nullable('integer', `minimum words of a caller turn; null = ${PIPELINE_DEFAULTS.min_words}; 1 when short answers (yes/no, digits) matter`),
        // The turn policy's own settings (docs/media-gateway.md): the built-in lists cover the
        // common phrases of each supported language, so the model adds only what this job has.
        backchannel_phrases: {
          type: ['array', 'null'],
          items: { type: 'string' },
          description: 'extra acknowledgements callers of this job say while the agent talks that must not interrupt it ("uh-huh", "haan ji" are built in); null = none',
        },
        dictation_wait_secs: nullable('number', `seconds of silence that end a turn stopped mid-number or mid-address; null = ${PIPELINE_DEFAULTS.dictation_wait_secs}; longer (1.5-2) when callers read out long numbers`),
      },
    },
    llm_settings: {
      type: 'object',
      additionalProperties: false,
      required: ['temperature'],
      properties: { temperature: nullable('number', '0 to 2; null = provider default; 0.2-0.5 for transactional agents') },
    },
    suggested_tools: {
      type: 'array',
      description: 'webhook tools on the business systems this agent would need; they do not exist yet',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'description', 'parameters'],
        properties: {
          name: { type: 'string', description: 'snake_case function name' },
          description: { type: 'string', description: 'what it does and when the agent should call it' },
          parameters: parameterList,
        },
      },
    },
  },
} as const;

const Parameter = z.object({ name: z.string().min(1), type: z.string().min(1), description: z.string().nullish() });

/** What we accept back: lenient about missing optional parts, strict about the essentials. */
const DraftSchema = z.object({
  name: z.string().min(1),
  prompt: z.string().min(1),
  greeting: z.string().nullish(),
  context_variables: z.array(Parameter).nullish(),
  pipeline_settings: z
    .object({
      idle_warn_secs: z.number().nullish(),
      idle_end_secs: z.number().nullish(),
      min_words: z.number().nullish(),
      backchannel_phrases: z.array(z.string()).nullish(),
      dictation_wait_secs: z.number().nullish(),
    })
    .nullish(),
  llm_settings: z.object({ temperature: z.number().nullish() }).nullish(),
  suggested_tools: z.array(z.object({ name: z.string(), description: z.string(), parameters: z.array(Parameter).nullish() })).nullish(),
});
type Draft = z.output<typeof DraftSchema>;

export interface SuggestedTool {
  name: string;
  description: string;
  parameters: Array<{ name: string; type: string; description: string }>;
}

export interface GeneratedAgent {
  config: AgentCreate;
  suggested_tools: SuggestedTool[];
  notes: string[];
}

function systemPrompt(languageLabel: string): string {
  return [
    'You design voice AI agents that hold telephone conversations. From the description, produce the agent configuration as JSON following the schema.',
    `The agent speaks ${languageLabel} with callers.`,
    'prompt: written in English, addressed to the agent ("You are ..."). Cover: who it is and for whom, the goal of the call,',
    `the conversation step by step, what it must not do or promise, that it always speaks ${languageLabel},`,
    'how to handle confusion or off-topic questions, and when to end the call (it has an end_call tool).',
    'It is spoken on the phone: short sentences, one question at a time, no lists, markdown, emojis or URLs, numbers said naturally.',
    'Never invent facts, prices or policies that the description does not give; tell the agent to offer a follow-up instead.',
    'Use {{variable}} placeholders for per-call data the business passes when placing a call (e.g. {{customer_name}}) and declare each in context_variables.',
    `greeting: one or two short sentences in ${languageLabel}, may use the same placeholders.`,
    'pipeline_settings and llm_settings: null unless the use case clearly needs a different value.',
    'suggested_tools: webhook tools on the business systems the agent would need (lookups, bookings); an empty list if none.',
    'Do not mention the suggested tools in the prompt: they do not exist yet.',
  ].join('\n');
}

function parseJson(content: string): unknown {
  // Some OpenAI-compatible servers wrap JSON in a Markdown fence even in JSON mode.
  const text = content.trim().replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, '');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badLlmOutput(`not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
}

function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '')
    .slice(0, 56);
  return AGENT_NAME_PATTERN.test(slug) ? slug : 'agent';
}

/** The draft's name, or name-2, name-3 … so the config does not collide with an existing agent. */
async function freeName(db: Database, base: string): Promise<string> {
  const rows = await db.models.Agent.findAll({ attributes: ['name'], where: { name: { [Op.startsWith]: base } }, raw: true });
  const taken = new Set((rows as unknown as Array<{ name: string }>).map((r) => r.name));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

const withoutNulls = (o: Record<string, unknown> | null | undefined) =>
  Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== null && v !== undefined));

/** The draft's pipeline settings in the agent's form: extra backchannels are added to the built-in ones. */
function pipelineOf(settings: Draft['pipeline_settings']): Record<string, unknown> {
  const { backchannel_phrases, ...rest } = settings ?? {};
  const phrases = (backchannel_phrases ?? []).map((p) => p.trim()).filter(Boolean);
  return { ...withoutNulls(rest), ...(phrases.length ? { backchannel_phrases: { mode: 'add', phrases } } : {}) };
}

function candidateConfig(draft: Draft, name: string, language: string, model: string): Record<string, unknown> {
  const langs = agentLanguages(language);
  return {
    name,
    prompt: draft.prompt,
    greeting: draft.greeting?.trim() ? draft.greeting : null,
    stt_language: langs.stt_language,
    tts_language: langs.tts_language,
    llm_model: model,
    llm_settings: withoutNulls(draft.llm_settings),
    pipeline_settings: pipelineOf(draft.pipeline_settings),
    context_variables: Object.fromEntries(
      (draft.context_variables ?? []).map((v) => [v.name, { type: v.type, description: v.description ?? '' }]),
    ),
  };
}

export async function generateAgent(
  llm: AssistantLlm,
  db: Database,
  request: { description: string; language: string },
): Promise<GeneratedAgent> {
  const langs = agentLanguages(request.language);
  const completion = await llm.complete({
    temperature: 0.4,
    messages: [
      { role: 'system', content: systemPrompt(langs.label) },
      { role: 'user', content: `Language: ${langs.label}\n\nDescription of the agent:\n${request.description}` },
    ],
    response_format: { type: 'json_schema', json_schema: { name: 'agent_config', strict: true, schema: DRAFT_JSON_SCHEMA as unknown as Record<string, unknown> } },
  });
  const choice = firstChoice(completion);
  if (choice.finish_reason === 'length') throw badLlmOutput('the answer was cut off at the token limit');
  if (!choice.message.content) throw badLlmOutput('empty answer');

  const draft = DraftSchema.safeParse(parseJson(choice.message.content));
  if (!draft.success) throw badLlmOutput(`does not match the agent schema (${describeIssues(draft.error.issues)})`);

  const notes: string[] = [];
  const base = slugify(draft.data.name);
  const name = await freeName(db, base);
  if (name !== draft.data.name) notes.push(`name: "${draft.data.name}" became "${name}" (slug${name !== base ? ', an agent with that name exists' : ''})`);

  const config = AgentCreateSchema.safeParse(candidateConfig(draft.data, name, request.language, llm.model));
  if (!config.success) throw badLlmOutput(`the config is not valid (${describeIssues(config.error.issues)})`);

  notes.push(`stt_language ${langs.stt_language} and tts_language ${langs.tts_language} from language "${request.language}"`);
  const suggested_tools = (draft.data.suggested_tools ?? []).map((t) => ({
    name: t.name,
    description: t.description,
    parameters: (t.parameters ?? []).map((p) => ({ name: p.name, type: p.type, description: p.description ?? '' })),
  }));
  return { config: config.data, suggested_tools, notes };
}
