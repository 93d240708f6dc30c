/**
 * POST /api/calls/outbound: dial a number with an agent. The call record and its workflow exist
 * before the provider is asked to dial, so every attempt — refused ones included — is visible in
 * the call list with its outcome.
 */
import { z } from 'zod';
import { CustomParameters } from '../schemas/call-input';
import type { ApiContext } from '../context';
import { route } from '../route';
import { placeOutboundCall } from '../../calls/outbound-call';
import { RETRY_AFTER_SECS } from '../../shared/retry-after';
import { callCapableProvidersText } from '../../providers/telephony/registry';
import { PhoneNumberSchema, providerSchema } from '../schemas/settings';

const outboundBody = () => z.strictObject({
  phone_number: PhoneNumberSchema.describe('destination, E.164 with country code'),
  agent_name: z.string().trim().min(1).max(200).describe('the agent that handles the call'),
  caller_id: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .optional()
    .describe(
      'number shown to the callee (E.164; must be a number of the account or a verified caller ID). Default: the active endpoint whose outbound_agent_name is this agent, else the provider phone_number setting',
    ),
  provider: providerSchema().optional().describe(`overrides the stored provider; supported for calls: ${callCapableProvidersText()}`),
  custom_parameters: CustomParameters.describe('string or number values; substituted into prompts and merged into tool arguments'),
});

const OutboundResponse = z.object({
  status: z.literal('initiated'),
  call_id: z.uuid(),
  provider_response: z.object({ sid: z.string(), status: z.string() }).describe("the provider's own reply (its call or request id and status word, e.g. `queued`)"),
}).meta({ id: 'OutboundCall' });

export function outboundRoutes(ctx: ApiContext) {
  return [
    route({
      method: 'post',
      path: '/api/calls/outbound',
      operationId: 'createOutboundCall',
      tag: 'Calls',
      summary: 'Place an outbound phone call',
      description: [
        'Creates the call (status `ringing`, direction `outbound`) and its workflow, then asks the provider to dial.',
        `The provider is \`provider\` or the stored telephony provider; supported for calls: ${callCapableProvidersText()}.`,
        'Caller ID: `caller_id`, else the oldest active endpoint of the provider whose `outbound_agent_name` is the agent, else `<provider>_phone_number`.',
        'Status callbacks then move the call through `ringing` → `in_progress` → `completed` (or `no_answer` for busy / no answer / canceled, `failed` when the provider cannot connect).',
        `At most \`<provider>_max_concurrent\` calls of the provider (inbound and outbound, status ringing or in_progress) run at once across all API instances; over the cap the answer is 429 with \`Retry-After: ${RETRY_AFTER_SECS.providerCapFull}\`.`,
        "When the provider refuses the call, the call is recorded as `failed` (its `call_status` event holds the provider's message) and the answer is 502 with that message.",
        `When no media gateway has room for another call (each publishes its load; see docs/call-lifecycle.md), nothing is dialled and the answer is 503 with \`Retry-After: ${RETRY_AFTER_SECS.gatewayFull}\`.`,
      ].join(' '),
      body: outboundBody(),
      responses: {
        201: { description: 'The provider accepted the call; it is ringing', schema: OutboundResponse },
        400: { description: 'No telephony provider configured, or its credentials are missing (the detail names the settings to set)' },
        404: { description: 'Unknown agent' },
        422: {
          description:
            "Invalid field, a provider not supported for calls yet, no number to call from (`caller_id`), or the agent's STT, LLM or TTS cannot run here (the detail is its `warnings`); nothing is dialled",
        },
        429: { description: `All max_concurrent slots of the provider are in use; retry after Retry-After (${RETRY_AFTER_SECS.providerCapFull} s)` },
        502: { description: "The provider refused the call (its message and error code), or rejected the stored credentials" },
        503: {
          description: `The provider or Temporal cannot be reached, or no media gateway has room for the call (every live gateway is at capacity or draining, or none runs): retry after Retry-After (${RETRY_AFTER_SECS.gatewayFull} s)`,
        },
      },
      async handler({ body }) {
        const { callId, providerResponse } = await placeOutboundCall(ctx, {
          phoneNumber: body.phone_number,
          agentName: body.agent_name,
          callerId: body.caller_id,
          provider: body.provider,
          customParameters: body.custom_parameters,
        });
        const { sid, status } = providerResponse;
        return { status: 201, body: { status: 'initiated', call_id: callId, provider_response: { sid, status } } };
      },
    }),
  ];
}
