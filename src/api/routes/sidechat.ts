import { z } from 'zod';
import type { ApiContext } from '../context';
import { assistantLlm, requireLlm } from '../assistant/llm';
import { MAX_TOOL_ROUNDS, runSidechat } from '../assistant/sidechat';
import { PROPOSAL_TARGETS } from '../assistant/sidechat-tools';
import { route } from '../route';
import { SpeakerRole } from '../schemas/common';

const SidechatBody = z.object({
  messages: z
    .array(z.object({ role: SpeakerRole, content: z.string().min(1).max(20_000) }))
    .min(1)
    .max(50)
    .refine((m) => m.at(-1)?.role === 'user', 'the last message must be from the user')
    .describe('the conversation so far, oldest first; the client keeps it between requests'),
  agent_id: z.uuid({ error: 'must be a UUID' }).optional().describe('the agent the user has open, as context'),
});

const ProposalSchema = z.object({
  id: z.string(),
  agent_id: z.uuid(),
  agent_name: z.string(),
  target: z.enum(PROPOSAL_TARGETS),
  node_key: z.string().nullable().describe('target flow_node: the node to change'),
  current_value: z.unknown().describe('the stored value of what would change'),
  proposed_value: z.unknown(),
  rationale: z.string(),
  apply: z
    .object({ method: z.literal('PATCH'), path: z.string(), body: z.record(z.string(), z.unknown()) })
    .describe('the API request that applies the proposal'),
}).meta({ id: 'Proposal' });

const SidechatReplySchema = z.object({
  reply: z.string().describe("the assistant's answer"),
  tool_calls: z.array(z.object({ name: z.string(), arguments: z.unknown() })).describe('lookups the assistant made, in order'),
  proposals: z.array(ProposalSchema).describe('suggested changes, validated but NOT applied'),
  usage: z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int() }).describe('LLM tokens over all rounds'),
}).meta({ id: 'SidechatReply' });

export function sidechatRoutes(ctx: ApiContext) {
  const llm = assistantLlm(ctx.config);
  return [
    route({
      method: 'post',
      path: '/api/sidechat',
      operationId: 'askSidechat',
      tag: 'Sidechat',
      access: 'member',
      summary: 'Ask the dashboard assistant about agents and calls',
      description:
        'Runs the configured LLM with read-only tools over agents, flow nodes, calls, transcripts and call events ' +
        `(up to ${MAX_TOOL_ROUNDS} rounds), then answers. Changes the assistant suggests come back as \`proposals\` ` +
        'with the PATCH request that would apply them; nothing is changed by this endpoint. Stateless: send the whole conversation each time.',
      body: SidechatBody,
      responses: {
        200: { description: 'The answer, the lookups made and the proposals', schema: SidechatReplySchema },
        404: { description: 'agent_id does not exist' },
        502: { description: 'The LLM failed or was unreachable' },
        503: { description: 'No LLM configured (the detail names the keys to set)' },
      },
      async handler({ body }) {
        return { status: 200, body: await runSidechat(requireLlm(llm), ctx.db, body) };
      },
    }),
  ];
}
