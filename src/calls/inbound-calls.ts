/**
 * Deciding what happens to an incoming phone call, for every vendor: which agent answers (the
 * telephony endpoint mapping of the number called), whether the line is open (`is_active`,
 * `max_concurrent`), and that a webhook replayed by the provider (same provider call id) gets the
 * same call instead of a second one.
 *
 * The number called decides, not the URL: an endpoint's `inbound_agent_name` wins over the agent
 * named in the webhook URL, so renaming or remapping an agent never breaks a number already
 * configured in a provider's dashboard (a mismatch is logged). Without an endpoint the URL's
 * agent answers.
 */
import { QueryTypes, type Transaction } from 'sequelize';
import { plain, type Database } from '../db/database';
import type { Logger } from '../shared/logger';
import { CallError, startCall, type CallDeps } from './call-service';
import { CapacityError, capacityCheck } from './concurrency';
import { FINAL_CALL_STATUSES } from './telephony-calls';
import { loadAgentSnapshot, snapshotProviders } from './snapshot';
import type { AgentSnapshot } from '../../workflows/call-definitions';
import { providerProblems } from '../providers/agent-readiness';
import { recordCapacityRefusal, recordUnreadyInboundCall } from './unready-call';
import { allOf, gatewayAdmission, GatewayCapacityError } from './gateway-capacity';
import { countRefusedCall } from '../observability/metrics';

export type InboundDecision =
  /** Connect the call's stream (a new call, or the same call again for a replayed webhook). */
  | { kind: 'connect'; callId: string; agentName: string; replay: boolean }
  /** Unknown agent, inactive number, or a replay of a call that has ended: not answered. */
  | { kind: 'reject'; why: string }
  /** max_concurrent calls of the provider are active. */
  | { kind: 'busy' }
  /** No media gateway has room for the call: the vendor's busy answer; recorded as no_answer. */
  | { kind: 'at_capacity'; callId: string; reason: string }
  /** The call could not be started (Temporal unreachable). */
  | { kind: 'unavailable' }
  /** The agent's STT, LLM or TTS cannot run here: apologise; the call is recorded as failed. */
  | { kind: 'unready'; callId: string; problems: string[] };

export interface InboundRequest {
  provider: string;
  providerCallId: string;
  from: string;
  to: string;
  /** The agent named in the webhook URL. */
  urlAgentName: string;
  maxConcurrent: number;
}

/** A second webhook for a provider call id that is being admitted or exists. */
class AlreadyAdmitted extends Error {
  constructor(readonly callId: string) {
    super('provider call already has a call');
  }
}

/** The call (if any) that already carries this provider call id. */
async function existingCall(db: Database, provider: string, providerCallId: string, transaction?: Transaction) {
  return plain(
    await db.models.Call.findOne({ where: { provider, provider_call_sid: providerCallId }, attributes: ['id', 'status', 'agent_name'], transaction }),
  );
}

export async function admitInboundCall(deps: CallDeps & { log: Logger }, req: InboundRequest): Promise<InboundDecision> {
  const { db, log } = deps;
  const fields = { provider: req.provider, provider_call_id: req.providerCallId, from: req.from, to: req.to, url_agent: req.urlAgentName };

  const replayed = (call: { id: string; status: string; agent_name: string }): InboundDecision =>
    FINAL_CALL_STATUSES.has(call.status)
      ? { kind: 'reject', why: 'the call has ended' }
      : { kind: 'connect', callId: call.id, agentName: call.agent_name, replay: true };

  const known = await existingCall(db, req.provider, req.providerCallId);
  if (known) return replayed(known);

  const endpoint = plain(await db.models.TelephonyEndpoint.findOne({ where: { phone_number: req.to, provider: req.provider } }));
  if (endpoint && !endpoint.is_active) {
    log.info('inbound call refused: endpoint is inactive', { ...fields, endpoint_id: endpoint.id });
    return { kind: 'reject', why: 'the number is inactive' };
  }
  // The agent is read once, whole (flow nodes and tools too), and the call starts on that snapshot:
  // every query saved here is saved for each call of a burst.
  let agent: AgentSnapshot | null = null;
  if (endpoint?.inbound_agent_name && endpoint.inbound_agent_name !== req.urlAgentName) {
    agent = await loadAgentSnapshot(db, endpoint.inbound_agent_name);
    if (agent) {
      log.warn('inbound webhook URL names another agent than the number\'s endpoint; the endpoint\'s agent answers', {
        ...fields,
        endpoint_agent: endpoint.inbound_agent_name,
      });
    } else {
      log.warn('the endpoint\'s inbound agent does not exist; trying the agent of the webhook URL', { ...fields, endpoint_agent: endpoint.inbound_agent_name });
    }
  }
  agent ??= await loadAgentSnapshot(db, req.urlAgentName);
  if (!agent) {
    log.warn('inbound call refused: unknown agent', { ...fields, agent_name: req.urlAgentName });
    return { kind: 'reject', why: 'unknown agent' };
  }
  const agentName = agent.name;
  const problems = providerProblems(snapshotProviders(agent), deps.config);
  if (problems.length) {
    const callId = await recordUnreadyInboundCall(db, { agent, provider: req.provider, providerCallId: req.providerCallId, from: req.from, to: req.to, problems });
    log.error('inbound call failed: the agent cannot take calls', { ...fields, agent_name: agentName, call_id: callId, problems });
    return { kind: 'unready', callId, problems };
  }

  const capacity = capacityCheck(db, req.provider, req.maxConcurrent);
  try {
    const { callId } = await startCall(deps, {
      agentName,
      agent,
      phoneNumber: req.from,
      direction: 'inbound',
      channel: 'voice',
      metadata: { to_number: req.to },
      initialStatus: 'ringing',
      provider: req.provider,
      providerCallSid: req.providerCallId,
      admit: async (transaction) => {
        // Concurrent replays of one webhook take turns on this lock; the later one sees the
        // earlier one's committed row and answers with its call.
        await db.sequelize.query(`SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))`, {
          replacements: { key: `vap:inbound:${req.provider}:${req.providerCallId}` },
          type: QueryTypes.SELECT,
          transaction,
        });
        const raced = await existingCall(db, req.provider, req.providerCallId, transaction);
        if (raced) throw new AlreadyAdmitted(raced.id);
        await allOf(capacity, gatewayAdmission(db, deps.config))(transaction);
      },
    });
    log.info('inbound call', { ...fields, agent_name: agentName, call_id: callId });
    return { kind: 'connect', callId, agentName, replay: false };
  } catch (err) {
    if (err instanceof AlreadyAdmitted) {
      const call = await existingCall(db, req.provider, req.providerCallId);
      return call ? replayed(call) : { kind: 'unavailable' };
    }
    if (err instanceof GatewayCapacityError) {
      countRefusedCall(err.reason, 'inbound');
      const callId = await recordCapacityRefusal(db, { agent, provider: req.provider, providerCallId: req.providerCallId, from: req.from, to: req.to }, err.reason, err.message);
      log.warn('inbound call refused: no media gateway has room', { ...fields, call_id: callId, reason: err.reason });
      return { kind: 'at_capacity', callId, reason: err.reason };
    }
    if (err instanceof CapacityError) {
      log.info('inbound call refused: over max_concurrent', { ...fields, max_concurrent: err.maxConcurrent });
      return { kind: 'busy' };
    }
    if (err instanceof CallError) {
      log.error('inbound call could not be started', { ...fields, error: err.message });
      return err.status === 404 ? { kind: 'reject', why: 'unknown agent' } : { kind: 'unavailable' };
    }
    throw err;
  }
}
