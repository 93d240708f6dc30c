/**
 * A call's events as server-sent events while it runs: what the dashboard's live call view reads,
 * and any API user can follow a call the same way (`curl -N -H "Authorization: Bearer …"`).
 *
 * Events are written to PostgreSQL by whichever worker runs the call, so the API polls the table
 * for rows newer than the last one sent; the query is on the (call_id, seq) primary key.
 *
 * Under load a gateway's turn run answers several turns before the workflow records them
 * (docs/conversation-engine.md); meanwhile they are in its run journal. The stream shows them
 * at once as `pending` (replaced by their events when the run reports), so a live transcript
 * never lags the call.
 */
import { z } from 'zod';
import type { ApiContext } from '../context';
import { notFound } from '../errors';
import { route, uuidParam } from '../route';
import { plain, plainAll } from '../../db/database';
import { Op, QueryTypes, Transaction } from 'sequelize';
import { eventJson } from '../serializers/call';
import type { RunTurn } from '../../../workflows/call-definitions';
import { apiTimestampPrecise } from '../../shared/time';

const FINAL_STATUSES = ['completed', 'failed', 'no_answer'];
/** How often new events are looked for: a turn's events arrive in one batch, so this is plenty. */
export const STREAM_POLL_MS = 500;
/** A comment line this often keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;
/** A final call whose `call_ended` event has not been written within this is ended anyway. */
const FINAL_GRACE_MS = 3_000;

/** A turn a run has answered and journaled, not yet recorded as the call's events. */
interface PendingTurn {
  utterance_seq: number;
  user_text: string;
  agent_text: string;
  timestamp: string;
}

/** Journaled turns after the last `user_spoke` recorded (its `utterance_seq`): what the run still holds. */
const PENDING_TURNS_SQL = `
  SELECT j.seq, j.turn FROM call_turn_journal j
  WHERE j.call_id = $1 AND j.seq > COALESCE(
    (SELECT max((e.data->>'utterance_seq')::int) FROM call_events e WHERE e.call_id = $1 AND e.event_type = 'user_spoke'), 0)
  ORDER BY j.seq`;

type JournalRow = { seq: number; turn: RunTurn };
const pendingTurn = ({ seq, turn }: JournalRow): PendingTurn => ({
  utterance_seq: seq,
  user_text: turn.utterance.text,
  agent_text: turn.thought.heardText || turn.thought.content || '',
  timestamp: apiTimestampPrecise(new Date(turn.answeredAtMs))!,
});

const StreamQuery = z.object({
  after: z.coerce.number().int().min(0).default(0).describe('send only events with a larger id (sequence number); default 0 = all'),
});

export function callStreamRoutes(ctx: ApiContext) {
  const { Call, CallEvent } = ctx.db.models;
  return [
    route({
      method: 'get',
      path: '/api/calls/{call_id}/events/stream',
      operationId: 'streamCallEvents',
      tag: 'Calls',
      access: 'member',
      summary: 'Follow a call: its events as server-sent events until it ends',
      description: [
        'A `text/event-stream`. Each call event (the objects of `GET /api/calls/{call_id}/events`) is one SSE message: `id:` its sequence number, `data:` the event as JSON.',
        'The stream starts with the events already recorded after `after` (or after the standard `Last-Event-ID` header of a reconnecting client), then sends new ones as the call produces them (one batch per turn).',
        'Under load the media gateway answers plain turns in runs and the call records them a few seconds later, together (docs/conversation-engine.md). Those turns are sent at once as `event: pending` messages, `data: {"turns": [{"utterance_seq", "user_text", "agent_text", "timestamp"}]}`: the whole set each time it changes, so the latest one replaces the previous; `{"turns": []}` when their `user_spoke`/`agent_spoke` events have been sent. Clients that only read unnamed messages never see them.',
        'When the call has ended and its `call_ended` event was sent, a last message `event: end` with `data: {"status", "end_reason"}` follows and the stream closes; a finished call therefore streams its whole trace and ends at once.',
        'A comment line (`: keep-alive`) every 15 s keeps proxies from closing an idle stream.',
        'Authenticated like every /api route, with the `Authorization` header. The browser `EventSource` cannot send headers: read the stream with `fetch` (as the dashboard does) or any SSE client that takes headers; tokens never go into URLs.',
      ].join(' '),
      params: uuidParam('call_id'),
      query: StreamQuery,
      responses: {
        200: { description: 'The event stream', contentType: 'text/event-stream' },
        404: { description: 'No such call' },
      },
      async handler({ params, query, req, res }) {
        const callId = params.call_id as string;
        if (!plain(await Call.findByPk(callId, { attributes: ['id'] }))) throw notFound('Call');
        const lastEventId = Number(req.header('last-event-id'));
        let lastSeq = Number.isInteger(lastEventId) && lastEventId >= 0 ? lastEventId : query.after;

        res.status(200).set({
          'Content-Type': 'text/event-stream; charset=utf-8',
          'Cache-Control': 'no-cache, no-transform',
          Connection: 'keep-alive',
          // nginx would otherwise buffer the stream.
          'X-Accel-Buffering': 'no',
        });
        res.flushHeaders();

        let closed = false;
        let sawEnd = false;
        let sentPendingKey = '';
        let finalSinceMs: number | undefined;
        let timer: NodeJS.Timeout | undefined;
        const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
        const finish = () => {
          closed = true;
          clearTimeout(timer);
          clearInterval(heartbeat);
        };
        // The response closes when the client goes away (or when the stream ends).
        res.on('close', finish);

        const poll = async () => {
          // One snapshot for both reads, so a run's turns are never both pending and recorded, nor neither.
          const { rows, pending } = await ctx.db.sequelize.transaction({ isolationLevel: Transaction.ISOLATION_LEVELS.REPEATABLE_READ }, async (transaction) => ({
            rows: plainAll(await CallEvent.findAll({ where: { call_id: callId, seq: { [Op.gt]: lastSeq } }, order: [['seq', 'ASC']], limit: 500, transaction })),
            pending: (await ctx.db.sequelize.query<JournalRow>(PENDING_TURNS_SQL, { bind: [callId], type: QueryTypes.SELECT, transaction })).map(pendingTurn),
          }));
          for (const row of rows) {
            if (closed) return;
            res.write(`id: ${row.seq}\ndata: ${JSON.stringify(eventJson(row))}\n\n`);
            lastSeq = row.seq;
            if (row.event_type === 'call_ended') sawEnd = true;
          }
          if (rows.length === 500) return; // more are waiting: send them before looking at the status
          const pendingKey = pending.map((t) => t.utterance_seq).join(',');
          if (pendingKey !== sentPendingKey && !closed) {
            res.write(`event: pending\ndata: ${JSON.stringify({ turns: pending })}\n\n`);
            sentPendingKey = pendingKey;
          }
          const call = plain(await Call.findByPk(callId, { attributes: ['status', 'end_reason'] }));
          if (!call) return end({ status: null, end_reason: null });
          if (!FINAL_STATUSES.includes(call.status)) return;
          finalSinceMs ??= Date.now();
          if (sawEnd || Date.now() - finalSinceMs >= FINAL_GRACE_MS) end({ status: call.status, end_reason: call.end_reason });
        };
        const end = (data: { status: string | null; end_reason: string | null }) => {
          if (closed) return;
          res.write(`event: end\ndata: ${JSON.stringify(data)}\n\n`);
          finish();
          res.end();
        };
        const loop = async () => {
          try {
            await poll();
          } catch (err) {
            ctx.log.warn('call event stream failed', { call_id: callId, error: (err as Error).message });
            finish();
            res.end();
            return;
          }
          if (!closed) timer = setTimeout(loop, STREAM_POLL_MS);
        };
        await loop();
      },
    }),
  ];
}
