import { z } from 'zod';
import { literal, Op, type WhereAttributeHash } from 'sequelize';
import type { ApiContext } from '../context';
import { notFound } from '../errors';
import { route, uuidParam } from '../route';
import { plain, plainAll } from '../../db/database';
import type { CallEventRow, CallRow } from '../../db/models';
import { CALL_STATUSES, DIRECTIONS } from '../../shared/catalog';
import { callDetailJson, callJson, eventJson, transcriptOf } from '../serializers/call';
import { CallDetailSchema, CallEventSchema, CallListSchema } from '../schemas/call';

export const CALLS_PAGE_SIZE_DEFAULT = 20;
export const CALLS_PAGE_SIZE_MAX = 100;

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** An ISO 8601 date or timestamp; without an offset it is UTC, like every timestamp the API returns. */
const QueryTimestamp = z
  .string()
  .regex(ISO_TIMESTAMP, 'must be an ISO 8601 timestamp such as 2024-05-01T12:00:00')
  .transform((v) => new Date(v.length === 10 || /(Z|[+-]\d{2}:?\d{2})$/.test(v.slice(10)) ? v : `${v}Z`))
  .refine((d) => !Number.isNaN(d.getTime()), 'is not a valid date');

const CallListQuery = z
  .object({
    page: z.coerce.number().int().min(1).default(1).describe('1-based'),
    page_size: z.coerce.number().int().min(1).max(CALLS_PAGE_SIZE_MAX).default(CALLS_PAGE_SIZE_DEFAULT),
    status: z.enum(CALL_STATUSES).optional(),
    agent_name: z.string().min(1).optional().describe('exact agent name'),
    direction: z.enum(DIRECTIONS).optional(),
    created_after: QueryTimestamp.optional().describe('calls created at or after this time (UTC unless an offset is given)'),
    created_before: QueryTimestamp.optional().describe('calls created strictly before this time'),
    include_transcript: z
      .enum(['true', 'false'])
      .default('true')
      .transform((v) => v === 'true')
      .describe('false leaves the transcripts out (a lighter page)'),
    include_tests: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true')
      .describe('true also lists the calls of agent test runs (docs/agent-tests.md)'),
  })
  .superRefine((q, ctx) => {
    if (q.created_after && q.created_before && q.created_before <= q.created_after) {
      ctx.addIssue({ code: 'custom', path: ['created_before'], message: 'must be later than created_after' });
    }
  });

const SPEECH_EVENTS = ['user_spoke', 'agent_spoke'];
// Calls of agent test runs carry their run in metadata (docs/agent-tests.md).
const NOT_A_TEST_CALL = literal(`(metadata->>'test_run_id') IS NULL`);

export function callRoutes(ctx: ApiContext) {
  const { db } = ctx;
  const { Call, CallEvent } = db.models;

  const findCall = async (id: string): Promise<CallRow> => {
    const row = plain(await Call.findByPk(id));
    if (!row) throw notFound('Call');
    return row;
  };

  return [
    route({
      method: 'get',
      path: '/api/calls',
      tag: 'Calls',
      access: 'member',
      summary: 'List calls, newest first',
      description: `Paginated (\`page\` from 1, \`page_size\` default ${CALLS_PAGE_SIZE_DEFAULT}, max ${CALLS_PAGE_SIZE_MAX}); filters combine with AND. \`total\` counts all matching calls. Calls of agent test runs are left out unless \`include_tests=true\`. The time range is half-open: created_after <= created_at < created_before. Each call carries its transcript unless \`include_transcript=false\`.`,
      query: CallListQuery,
      responses: { 200: { description: 'One page of calls', schema: CallListSchema } },
      async handler({ query }) {
        const where: WhereAttributeHash<CallRow> = {};
        if (query.status) where.status = query.status;
        if (query.agent_name) where.agent_name = query.agent_name;
        if (query.direction) where.direction = query.direction;
        if (query.created_after || query.created_before) {
          where.created_at = {
            ...(query.created_after ? { [Op.gte]: query.created_after } : {}),
            ...(query.created_before ? { [Op.lt]: query.created_before } : {}),
          };
        }
        const { rows, count } = await Call.findAndCountAll({
          where: query.include_tests ? where : { [Op.and]: [where, NOT_A_TEST_CALL] },
          order: [
            ['created_at', 'DESC'],
            ['id', 'DESC'],
          ],
          limit: query.page_size,
          offset: (query.page - 1) * query.page_size,
        });
        const calls = plainAll(rows);
        if (!query.include_transcript) return { status: 200, body: { calls: calls.map((r) => callJson(r)), total: count } };
        // One query for the whole page's speech events.
        const speech = calls.length
          ? plainAll(await CallEvent.findAll({ where: { call_id: calls.map((c) => c.id), event_type: SPEECH_EVENTS }, order: [['seq', 'ASC']] }))
          : [];
        const byCall = new Map<string, CallEventRow[]>();
        for (const e of speech) {
          if (!byCall.has(e.call_id)) byCall.set(e.call_id, []);
          byCall.get(e.call_id)!.push(e);
        }
        return { status: 200, body: { calls: calls.map((r) => callJson(r, { transcript: transcriptOf(byCall.get(r.id) ?? []) })), total: count } };
      },
    }),
    route({
      method: 'get',
      path: '/api/calls/{call_id}',
      tag: 'Calls',
      access: 'member',
      summary: 'One call with transcript, context, usage and end reason',
      description:
        'The transcript lists what was said, from the `user_spoke` (role `user`) and `agent_spoke` (role `assistant`) events in order; `context` holds the custom parameters of the call.',
      params: uuidParam('call_id'),
      responses: { 200: { description: 'The call', schema: CallDetailSchema }, 404: { description: 'No such call' } },
      async handler({ params }) {
        const call = await findCall(params.call_id as string);
        const speech = plainAll(await CallEvent.findAll({ where: { call_id: call.id, event_type: SPEECH_EVENTS }, order: [['seq', 'ASC']] }));
        return { status: 200, body: callDetailJson(call, speech) };
      },
    }),
    route({
      method: 'get',
      path: '/api/calls/{call_id}/events',
      tag: 'Calls',
      access: 'member',
      summary: 'The event trace of a call, in order',
      description: '`id` is the sequence number of the event within the call; timestamps carry milliseconds.',
      params: uuidParam('call_id'),
      responses: { 200: { description: 'Events ordered by id', schema: z.array(CallEventSchema) }, 404: { description: 'No such call' } },
      async handler({ params }) {
        const call = await findCall(params.call_id as string);
        const events = plainAll(await CallEvent.findAll({ where: { call_id: call.id }, order: [['seq', 'ASC']] }));
        return { status: 200, body: events.map(eventJson) };
      },
    }),
  ];
}
