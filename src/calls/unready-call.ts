/**
 * Incoming calls the platform answers without starting a workflow, recorded so they show in the
 * call list:
 * - an agent whose STT, LLM or TTS cannot run on this installation (no adapter, or its API key is
 *   not set): rather than connecting the caller to an agent that can neither hear nor speak, the
 *   caller hears a short apology and the call is recorded as `failed` with an `error` event naming
 *   the provider;
 * - a call no media gateway has room for: the caller gets the vendor's busy answer and the call is
 *   recorded as `no_answer` with a `call_status` event saying why.
 */
import crypto from 'node:crypto';
import type { Database } from '../db/database';
import { callWorkflowId } from '../../workflows/call-definitions';

export interface RefusedInboundCall {
  agent: { id: string; name: string; version: number };
  provider: string;
  providerCallId: string;
  from: string;
  to: string;
}

export interface UnreadyInboundCall extends RefusedInboundCall {
  problems: string[];
}

async function recordRefused(
  db: Database,
  call: RefusedInboundCall,
  outcome: { status: 'failed' | 'no_answer'; endReason: 'error' | null; event: { type: string; data: Record<string, unknown> } },
): Promise<string> {
  const callId = crypto.randomUUID();
  const now = new Date();
  await db.sequelize.transaction(async (transaction) => {
    await db.models.Call.create(
      {
        id: callId,
        agent_id: call.agent.id,
        agent_name: call.agent.name,
        agent_version: call.agent.version,
        phone_number: call.from,
        direction: 'inbound',
        status: outcome.status,
        end_reason: outcome.endReason,
        provider: call.provider,
        provider_call_sid: call.providerCallId,
        workflow_id: callWorkflowId(callId),
        start_time: null,
        end_time: now,
        duration: null,
        metadata: { to_number: call.to },
        channel: 'voice',
        context: {},
      },
      { transaction },
    );
    await db.models.CallEvent.bulkCreate(
      [
        { call_id: callId, seq: 1, event_type: outcome.event.type, timestamp: now, data: outcome.event.data },
        { call_id: callId, seq: 2, event_type: 'call_ended', timestamp: now, data: { status: outcome.status, end_reason: outcome.endReason, duration: null, source: 'api' } },
      ],
      { transaction },
    );
  });
  return callId;
}

export function recordUnreadyInboundCall(db: Database, call: UnreadyInboundCall): Promise<string> {
  const message = `The agent cannot take calls: ${call.problems.join('; ')}`;
  return recordRefused(db, call, { status: 'failed', endReason: 'error', event: { type: 'error', data: { message, context: 'providers', problems: call.problems } } });
}

/** A call refused for want of gateway room (`reason`: no_gateway or at_capacity). */
export function recordCapacityRefusal(db: Database, call: RefusedInboundCall, reason: string, message: string): Promise<string> {
  return recordRefused(db, call, { status: 'no_answer', endReason: null, event: { type: 'call_status', data: { status: 'refused', source: 'admission', reason, message } } });
}
