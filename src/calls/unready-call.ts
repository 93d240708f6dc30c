/**
 * An incoming call for an agent whose STT, LLM or TTS cannot run on this installation (no
 * adapter, or its API key is not set): rather than connecting the caller to an agent that can
 * neither hear nor speak, the caller hears a short apology and the call is recorded as `failed`
 * with an `error` event naming the provider, so the problem shows in the call list. No workflow
 * is started: there is nothing to run.
 */
import crypto from 'node:crypto';
import type { Database } from '../db/database';
import { callWorkflowId } from '../../workflows/call-definitions';

export interface UnreadyInboundCall {
  agent: { id: string; name: string; version: number };
  provider: string;
  providerCallId: string;
  from: string;
  to: string;
  problems: string[];
}

export async function recordUnreadyInboundCall(db: Database, call: UnreadyInboundCall): Promise<string> {
  const callId = crypto.randomUUID();
  const now = new Date();
  const message = `The agent cannot take calls: ${call.problems.join('; ')}`;
  await db.sequelize.transaction(async (transaction) => {
    await db.models.Call.create(
      {
        id: callId,
        agent_id: call.agent.id,
        agent_name: call.agent.name,
        agent_version: call.agent.version,
        phone_number: call.from,
        direction: 'inbound',
        status: 'failed',
        end_reason: 'error',
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
        { call_id: callId, seq: 1, event_type: 'error', timestamp: now, data: { message, context: 'providers', problems: call.problems } },
        { call_id: callId, seq: 2, event_type: 'call_ended', timestamp: now, data: { status: 'failed', end_reason: 'error', duration: null, source: 'api' } },
      ],
      { transaction },
    );
  });
  return callId;
}
