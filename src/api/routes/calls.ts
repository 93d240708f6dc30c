import { z } from 'zod';
import type { ApiContext } from '../context';
import { notFound } from '../errors';
import { route, uuidParam } from '../route';
import { plain, plainAll } from '../../db/database';
import type { CallEventRow, CallRow } from '../../db/models';
import { CALL_COUNT_CAP, listCalls } from '../../calls/call-list';
import { ANALYSIS_FIELD_NAME } from '../schemas/analysis';
import { callDetailJson, callJson, eventJson, TRANSCRIPT_EVENTS, transcriptOf } from '../serializers/call';
import { CallEventSchema, CallListSchema, CallSchema } from '../schemas/call';
import { CallDirection, CallStatus, EndReason } from '../schemas/common';

export const CALLS_PAGE_SIZE_DEFAULT = 20;
export const CALLS_PAGE_SIZE_MAX = 100;

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** An ISO 8601 date or timestamp; without an offset it is UTC, like every timestamp the API returns. */
const QueryTimestamp = z
  .string()
  .regex(ISO_TIMESTAMP, 'must be an ISO 8601 timestamp such as 2024-05-01T12:00:00')
  .transform((v) => new Date(v.length === 10 || /(Z|[+-]\d{2}:?\d{2})$/.test(v.slice(10)) ? v : `${v}Z`))
  .refine((d) => !Number.isNaN(d.getTime()), 'is not a valid date');

const FIELD_FILTER_PREFIX = 'field.';

/** `field.<name>=<value>` parameters, checked, as {name: value}; other unknown parameters are ignored. */
function fieldFilters(query: Record<string, unknown>, ctx: z.RefinementCtx): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    if (!key.startsWith(FIELD_FILTER_PREFIX)) continue;
    const name = key.slice(FIELD_FILTER_PREFIX.length);
    if (!ANALYSIS_FIELD_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [key], message: 'field names are letters, digits and _' });
    else if (typeof value !== 'string' || value.length > 500) ctx.addIssue({ code: 'custom', path: [key], message: 'must be given once, at most 500 characters' });
    else fields[name] = value;
  }
  return fields;
}

const CallListQuery = z
  .object({
    page: z.coerce.number().int().min(1).default(1).describe('1-based'),
    page_size: z.coerce.number().int().min(1).max(CALLS_PAGE_SIZE_MAX).default(CALLS_PAGE_SIZE_DEFAULT),
    status: CallStatus.optional(),
    agent_name: z.string().min(1).optional().describe('exact agent name'),
    direction: CallDirection.optional(),
    end_reason: EndReason.optional().describe('how the call ended, e.g. transferred (handed to a human)'),
    created_after: QueryTimestamp.optional().describe('calls created at or after this time (UTC unless an offset is given)'),
    created_before: QueryTimestamp.optional().describe('calls created strictly before this time'),
    success: z
      .enum(['true', 'false'])
      .optional()
      .transform((v) => (v === undefined ? undefined : v === 'true'))
      .describe("post-call analysis: calls whose success verdict is this (calls without a verdict match neither)"),
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
    exact_total: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true')
      .describe(`true counts every matching call in \`total\`; by default the count stops at ${CALL_COUNT_CAP.toLocaleString('en')} (\`total_exact: false\`), which keeps broad filters fast on big tables`),
  })
  .catchall(z.unknown())
  .superRefine((q, ctx) => {
    if (q.created_after && q.created_before && q.created_before <= q.created_after) {
      ctx.addIssue({ code: 'custom', path: ['created_before'], message: 'must be later than created_after' });
    }
  })
  .transform((q, ctx) => ({ ...q, fields: fieldFilters(q, ctx) }));


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
      operationId: 'listCalls',
      tag: 'Calls',
      access: 'member',
      summary: 'List calls, newest first',
      description: `Paginated (\`page\` from 1, \`page_size\` default ${CALLS_PAGE_SIZE_DEFAULT}, max ${CALLS_PAGE_SIZE_MAX}); filters combine with AND. Post-call analysis: \`success=true|false\`, and \`field.<name>=<value>\` for an analysis field's value (e.g. \`field.booked=true&field.date=2026-12-03\`; \`true\`/\`false\` and numbers also match booleans and numbers). \`total\` counts the matching calls exactly up to ${CALL_COUNT_CAP.toLocaleString('en')}; past that it stops there and \`total_exact\` is false (\`exact_total=true\` counts them all, slowly on big tables). Calls of agent test runs are left out unless \`include_tests=true\`. The time range is half-open: created_after <= created_at < created_before. Each call carries its transcript unless \`include_transcript=false\`.`,
      query: CallListQuery,
      responses: { 200: { description: 'One page of calls', schema: CallListSchema } },
      async handler({ query }) {
        const page = { limit: query.page_size, offset: (query.page - 1) * query.page_size, exactTotal: query.exact_total };
        const { rows, total: count, totalExact } = await listCalls(db, { ...query, includeTests: query.include_tests }, page);
        const calls = plainAll(rows);
        if (!query.include_transcript) return { status: 200, body: { calls: calls.map((r) => callJson(r)), total: count, total_exact: totalExact } };
        // One query for the whole page's speech events and the retrievals their replies were given.
        const speech = calls.length
          ? plainAll(await CallEvent.findAll({ where: { call_id: calls.map((c) => c.id), event_type: TRANSCRIPT_EVENTS }, order: [['seq', 'ASC']] }))
          : [];
        const byCall = new Map<string, CallEventRow[]>();
        for (const e of speech) {
          if (!byCall.has(e.call_id)) byCall.set(e.call_id, []);
          byCall.get(e.call_id)!.push(e);
        }
        return { status: 200, body: { calls: calls.map((r) => callJson(r, { transcript: transcriptOf(byCall.get(r.id) ?? []) })), total: count, total_exact: totalExact } };
      },
    }),
    route({
      method: 'get',
      path: '/api/calls/{call_id}',
      operationId: 'getCall',
      tag: 'Calls',
      access: 'member',
      summary: 'One call with transcript, context, usage and end reason',
      description:
        'The transcript lists what was said, from the `user_spoke` (role `user`) and `agent_spoke` (role `assistant`) events in order; an agent reply that was given knowledge-base passages has them as `sources` (from the `knowledge_retrieved` events of its turn). `context` holds the custom parameters of the call.',
      params: uuidParam('call_id'),
      responses: { 200: { description: 'The call', schema: CallSchema }, 404: { description: 'No such call' } },
      async handler({ params }) {
        const call = await findCall(params.call_id as string);
        const speech = plainAll(await CallEvent.findAll({ where: { call_id: call.id, event_type: TRANSCRIPT_EVENTS }, order: [['seq', 'ASC']] }));
        return { status: 200, body: callDetailJson(call, speech) };
      },
    }),
    route({
      method: 'get',
      path: '/api/calls/{call_id}/events',
      operationId: 'listCallEvents',
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
