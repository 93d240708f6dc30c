import { z } from 'zod';
import type { ApiContext } from '../context';
import { generateAgent } from '../assistant/agent-generator';
import { LANGUAGE_TAG_PATTERN } from '../assistant/languages';
import { assistantLlm, requireLlm } from '../assistant/llm';
import { route } from '../route';
import { AgentConfigSchema } from '../schemas/agent';

const GenerateBody = z.object({
  description: z.string().trim().min(1).max(4_000).describe('what the agent should do, in any language'),
  language: z
    .string()
    .regex(LANGUAGE_TAG_PATTERN, 'must be a BCP-47 language tag such as hi, hi-IN, en')
    .describe('language the agent speaks with callers'),
});

const GenerateQuery = z.object({
  with_suggestions: z
    .enum(['true', 'false', '1', '0'])
    .optional()
    .transform((v) => v === 'true' || v === '1')
    .describe('true: answer {config, suggested_tools, notes} instead of the bare config'),
});

// An agent config with every default applied, accepted as is by POST /api/agents.
const GeneratedConfigSchema = AgentConfigSchema;

const SuggestedToolSchema = z.object({
  name: z.string(),
  description: z.string(),
  parameters: z.array(z.object({ name: z.string(), type: z.string(), description: z.string() })),
}).meta({ id: 'SuggestedTool' });

const EnvelopeSchema = z.object({
  config: GeneratedConfigSchema,
  suggested_tools: z.array(SuggestedToolSchema).describe('webhook tools the agent would need; create them with POST /api/tools'),
  notes: z.array(z.string()).describe('what the server changed or filled in'),
}).meta({ id: 'GeneratedAgent' });

export function generateRoutes(ctx: ApiContext) {
  const llm = assistantLlm(ctx.config);
  return [
    route({
      method: 'post',
      path: '/api/agents/generate',
      operationId: 'generateAgent',
      tag: 'Agents',
      access: 'member',
      summary: 'Draft an agent config from a description with the LLM (not saved)',
      description:
        'Asks the configured LLM (LLM_MODEL of the default LLM provider) for a config: name, prompt, greeting, context ' +
        'variables and tuning. stt_language (regional, e.g. hi-IN) and tts_language (e.g. hi) come from `language`. ' +
        'The answer is validated like POST /api/agents and nothing is stored: review it and POST it to /api/agents as is. ' +
        'A name that is taken gets a -2, -3 … suffix. With ?with_suggestions=true the answer is ' +
        '{config, suggested_tools, notes}.',
      body: GenerateBody,
      query: GenerateQuery,
      responses: {
        200: { description: 'The draft config (or the envelope with ?with_suggestions=true)', schema: z.union([GeneratedConfigSchema, EnvelopeSchema]) },
        502: { description: 'The LLM failed, was unreachable or answered something that is not a valid config' },
        503: { description: 'No LLM configured (the detail names the keys to set)' },
      },
      async handler({ body, query }) {
        const generated = await generateAgent(requireLlm(llm), ctx.db, body);
        return { status: 200, body: query.with_suggestions ? generated : generated.config };
      },
    }),
  ];
}
