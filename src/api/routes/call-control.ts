/**
 * Starting and driving calls without a phone: POST /api/calls/start and /end for client-managed
 * lifecycles (the spec), and the text test channel (beyond the spec) that runs the very same call
 * workflow with typed messages instead of audio.
 */
import { z } from 'zod';
import { CustomParameters } from '../schemas/call-input';
import { plain, plainAll } from '../../db/database';
import { CallError, endCall, sendText, startCall, type CallDeps } from '../../calls/call-service';
import type { ApiContext } from '../context';
import { forbidden, HttpError, notFound, callHttpError } from '../errors';
import { route, uuidParam } from '../route';
import { callDetailJson } from '../serializers/call';
import { CallSchema } from '../schemas/call';
import { CallDirection, CallStatus } from '../schemas/common';

// Fictional number (NANP 555-01xx range) used when a text test call does not give one.
const TEST_PHONE_NUMBER = '+15555550100';
const E164 = z.string().regex(/^\+[1-9]\d{6,14}$/, 'must be an E.164 number such as +14155550100');

const StartBody = z.strictObject({
  phone_number: E164,
  agent_name: z.string().min(1),
  direction: CallDirection.default('inbound'),
  metadata: z.record(z.string(), z.unknown()).default({}),
  custom_parameters: CustomParameters,
});
const TestStartBody = z.strictObject({
  agent_name: z.string().min(1),
  phone_number: E164.default(TEST_PHONE_NUMBER),
  direction: CallDirection.default('inbound'),
  custom_parameters: CustomParameters,
});
const TurnResponse = z.object({
  replies: z.array(z.string()).describe("the agent's spoken replies of this turn, in order"),
  status: CallStatus,
  node_key: z.string().nullable(),
}).meta({ id: 'TestTurn' });

function asHttp(err: unknown): never {
  if (err instanceof CallError) throw callHttpError(err);
  throw err;
}

export function callControlRoutes(ctx: ApiContext) {
  const deps: CallDeps = { config: ctx.config, db: ctx.db, temporal: ctx.temporal };
  const loadDetail = async (callId: string) => {
    const row = plain(await ctx.db.models.Call.findByPk(callId));
    if (!row) throw notFound('Call');
    const events = plainAll(await ctx.db.models.CallEvent.findAll({ where: { call_id: callId }, order: [['seq', 'ASC']] }));
    return callDetailJson(row, events);
  };
  const requireCall = async (callId: string) => {
    const row = plain(await ctx.db.models.Call.findByPk(callId));
    if (!row) throw notFound('Call');
    return row;
  };

  return [
    route({
      method: 'post',
      path: '/api/calls/start',
      operationId: 'startClientManagedCall',
      tag: 'Calls',
      access: 'member',
      summary: 'Register a call managed by the client',
      description:
        'For testing or non-standard telephony integrations where the client manages the call lifecycle. Creates the call record (status `in_progress`, `channel` `manual`, `metadata` stored as sent) and its call workflow. The server does not greet, speak on its own or end the call for silence: the client sends utterances with POST /api/calls/{call_id}/test/messages and ends the call with POST /api/calls/end (a call left without a message for 24 h is ended as `idle_timeout`).',
      body: StartBody,
      responses: {
        201: { description: 'The call record', schema: CallSchema },
        404: { description: 'Unknown agent' },
        503: { description: 'Temporal is not reachable' },
      },
      async handler({ body }) {
        const { callId } = await startCall(deps, {
          agentName: body.agent_name,
          phoneNumber: body.phone_number,
          direction: body.direction,
          channel: 'manual',
          customParameters: body.custom_parameters,
          metadata: body.metadata,
          initialStatus: 'in_progress',
        }).catch(asHttp);
        return { status: 201, body: await loadDetail(callId) };
      },
    }),
    route({
      method: 'post',
      path: '/api/calls/end',
      operationId: 'endCall',
      tag: 'Calls',
      access: 'member',
      summary: 'End a call and mark it complete',
      description:
        'Ends the call (status `completed`, end_reason `user_ended`; a call still ringing becomes `no_answer`) and answers once the workflow has recorded the final state. A phone call is also hung up (or, still ringing, canceled) at the provider, with the stored provider credentials: administrators only (403 for a member). Ending a call that already ended returns it unchanged. A call whose workflow does not end it within CALL_END_TIMEOUT_SECS (default 30; no worker running it, or its task failing) is terminated and recorded as `failed` with end_reason `error` and an `error` event.',
      body: z.strictObject({ call_id: z.uuid() }),
      responses: {
        200: { description: 'The final call record', schema: CallSchema },
        403: { description: 'A member asked to hang up a phone call' },
        404: { description: 'Unknown call' },
      },
      async handler({ body, auth }) {
        const call = await requireCall(body.call_id);
        if (call.provider && auth.role !== 'admin') throw forbidden('Only an administrator may hang up a phone call');
        // A phone call's workflow hangs the provider's call up as it ends (hangupProviderCall).
        await endCall(deps, body.call_id, 'user_ended').catch(asHttp);
        return { status: 200, body: await loadDetail(body.call_id) };
      },
    }),
    route({
      method: 'post',
      path: '/api/calls/test',
      operationId: 'startTestCall',
      tag: 'Calls',
      access: 'member',
      summary: 'Start a text test call (no phone needed)',
      description:
        'Runs the same call workflow as a phone call, with typed messages instead of audio. Answers once the greeting (and pre-call tools) are done. Continue with POST /api/calls/{call_id}/test/messages; hang up with POST /api/calls/end.',
      body: TestStartBody,
      responses: {
        201: { description: 'Call started', schema: z.object({ call_id: z.uuid(), greeting: z.string().nullable() }).meta({ id: 'TestCallStarted' }) },
        404: { description: 'Unknown agent' },
        503: { description: 'Temporal is not reachable' },
      },
      async handler({ body }) {
        const { callId, greeting } = await startCall(deps, {
          agentName: body.agent_name,
          phoneNumber: body.phone_number,
          direction: body.direction,
          channel: 'text',
          customParameters: body.custom_parameters,
          initialStatus: 'in_progress',
          awaitGreeting: true,
        }).catch(asHttp);
        return { status: 201, body: { call_id: callId, greeting } };
      },
    }),
    route({
      method: 'post',
      path: '/api/calls/{call_id}/test/messages',
      operationId: 'sendTestMessage',
      tag: 'Calls',
      access: 'member',
      summary: 'Say something to the agent in a text or client-managed call',
      description: "Answers when the agent's whole turn (tool calls included) is done, with what the agent said.",
      params: uuidParam('call_id'),
      body: z.strictObject({ text: z.string().trim().min(1).max(4000) }),
      responses: {
        200: { description: "The agent's turn", schema: TurnResponse },
        404: { description: 'Unknown call' },
        409: { description: 'The call has ended or is a phone call' },
      },
      async handler({ params, body }) {
        const call = await requireCall(params.call_id as string);
        if (call.channel === 'voice') throw new HttpError(409, 'This is a phone call; speak to it on the phone');
        if (call.channel === 'web') throw new HttpError(409, 'This is a web call; speak to it through the browser');
        const result = await sendText(deps, call.id, body.text).catch(asHttp);
        return { status: 200, body: result };
      },
    }),
  ];
}
