/**
 * Starting and controlling call workflows from the API (and later the telephony routes): creates
 * the call record first, so nothing is lost if Temporal refuses the start, then starts the
 * workflow with the search attributes operators filter on in the Temporal Web UI.
 */
import { startCallTrace } from '../observability/tracing/call-trace';
import { telephonyDescriptor } from '../providers/telephony/registry';
import crypto from 'node:crypto';
import {
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import type { Transaction } from 'sequelize';
import type { AnalysisRetryOptions } from '../analysis/types';
import type { Config } from '../config';
import type { Database } from '../db/database';
import { AgentName, CallStatus, Direction, PhoneNumber } from '../shared/search-attributes';
import {
  callWorkflowId,
  endCallUpdate,
  finalRecordUpdate,
  greetingUpdate,
  sendTextUpdate,
  type AgentSnapshot,
  type CallWorkflowInput,
  type EndReason,
  type TextTurnResult,
} from '../../workflows/call-definitions';
import type { CallChannel } from '../db/models/calls';
import { recordForcedEnd } from './forced-end';
import { loadAgentSnapshot } from './snapshot';
import { VOICE_MEMO_KEY, voiceSetup } from '../../workflows/voice-setup';
import { RETRY_AFTER_SECS } from '../shared/retry-after';

export class CallError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }

  /** Seconds after which trying again may succeed (Temporal was unreachable); null: it would not. */
  get retryAfterSecs(): number | null {
    return this.status === 503 ? RETRY_AFTER_SECS.dependencyAway : null;
  }
}

export interface StartCallRequest {
  /** The call's id when the caller chose it (a campaign attempt's deterministic id); default random. */
  callId?: string;
  agentName: string;
  /** The agent's snapshot when the caller has loaded it already (not loaded again). */
  agent?: AgentSnapshot;
  phoneNumber: string;
  direction: 'inbound' | 'outbound';
  /** The record's channel; a web call's workflow runs as a voice call (its audio is a media stream too). */
  channel: CallChannel;
  customParameters?: Record<string, string | number>;
  metadata?: Record<string, unknown>;
  initialStatus: 'ringing' | 'in_progress';
  provider?: string;
  /** The telephony provider's id of the call, when already known (inbound). */
  providerCallSid?: string;
  /**
   * Runs in the transaction that inserts the call row, just before the insert (e.g. a capacity
   * check under a lock); throwing refuses the call and nothing is written.
   */
  admit?: (transaction: Transaction) => Promise<void>;
  gatewayTaskQueue?: string;
  /** For text calls: wait for the greeting and return it. */
  awaitGreeting?: boolean;
}

export interface CallDeps {
  config: Config;
  db: Database;
  temporal: Client;
}

export function workflowOptions(config: Config): CallWorkflowInput['options'] {
  return {
    ringTimeoutSecs: config.RING_TIMEOUT_SECS,
    webhookInitialRetrySecs: config.WEBHOOK_RETRY_INITIAL_SECS,
    llmRetryMaxAttempts: config.LLM_RETRY_MAX_ATTEMPTS,
    llmRetryInitialSecs: config.LLM_RETRY_INITIAL_SECS,
    gatewayOutageSecs: config.GATEWAY_OUTAGE_SECS,
    analysis: analysisRetryOptions(config),
  };
}

export function analysisRetryOptions(config: Config): AnalysisRetryOptions {
  return {
    answerAttempts: config.ANALYSIS_ANSWER_ATTEMPTS,
    retryInitialSecs: config.ANALYSIS_RETRY_INITIAL_SECS,
    retryWindowSecs: config.ANALYSIS_RETRY_WINDOW_SECS,
    attemptTimeoutSecs: config.ANALYSIS_TIMEOUT_SECS,
  };
}

/**
 * How long an incoming call's workflow waits for its stream before it starts anyway. A plain
 * signal waits too (a vendor's `answered` before the stream); a final status is sent with start
 * (telephony-calls.ts) and an end request (an update) is not held, so a call still ends at once.
 */
export const INBOUND_STREAM_WAIT = '5s' as const;

export async function startCall(deps: CallDeps, req: StartCallRequest): Promise<{ callId: string; greeting: string | null }> {
  const { db, temporal, config } = deps;
  const agent = req.agent ?? (await loadAgentSnapshot(db, req.agentName));
  if (!agent) throw new CallError(404, `Agent ${req.agentName} not found`);
  const callId = req.callId ?? crypto.randomUUID();
  const workflowId = callWorkflowId(callId);
  const customParameters = req.customParameters ?? {};
  // The call's trace (docs/tracing.md): ids and names only, nothing the caller said.
  const callTrace = startCallTrace(callId, {
    'agent.name': agent.name,
    'agent.version': agent.version,
    'call.direction': req.direction,
    'call.channel': req.channel,
    ...(req.provider ? { 'telephony.provider': req.provider } : {}),
  });
  const row = {
    id: callId,
    agent_id: agent.id,
    agent_name: agent.name,
    agent_version: agent.version,
    phone_number: req.phoneNumber,
    direction: req.direction,
    status: req.initialStatus,
    provider: req.provider ?? null,
    provider_call_sid: req.providerCallSid ?? null,
    workflow_id: workflowId,
    start_time: req.initialStatus === 'in_progress' ? new Date() : null,
    metadata: req.metadata ?? {},
    channel: req.channel,
    context: customParameters,
    trace_id: callTrace.traceId,
  };
  const { admit } = req;
  if (admit) {
    await db.sequelize.transaction(async (transaction) => {
      await admit(transaction);
      await db.models.Call.create(row, { transaction });
    });
  } else {
    await db.models.Call.create(row);
  }
  const input: CallWorkflowInput = {
    callId,
    agent,
    phoneNumber: req.phoneNumber,
    direction: req.direction,
    channel: req.channel === 'web' ? 'voice' : req.channel,
    customParameters,
    initialStatus: req.initialStatus,
    gatewayTaskQueue: req.gatewayTaskQueue,
    options: workflowOptions(config),
    ...(req.provider ? { transfer: { supported: telephonyDescriptor(req.provider)?.capabilities.transfer.supported === true, warm: telephonyDescriptor(req.provider)?.capabilities.warm_transfer.supported === true, provider: req.provider } } : {}),
  };
  const startOptions = {
    workflowId,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    args: [input] as [CallWorkflowInput],
    typedSearchAttributes: [
      { key: AgentName, value: agent.name },
      { key: CallStatus, value: req.initialStatus },
      { key: Direction, value: req.direction },
      { key: PhoneNumber, value: req.phoneNumber },
    ],
    // The media gateway reads the voice setup from here when the stream connects (no worker round trip).
    ...(input.channel === 'voice' ? { memo: { [VOICE_MEMO_KEY]: voiceSetup(input) } } : {}),
    staticSummary: `${req.direction} ${req.channel} call ${req.phoneNumber} · agent ${agent.name} v${agent.version}`,
    // An incoming call's stream (the provider's, the browser's) connects next, and the gateway's
    // mediaConnected is a signal-with-start: the workflow's first task then has the stream too,
    // where it used to be a task of its own with nothing to do but wait (workflow-reports.ts).
    // A stream that never comes: the workflow starts after the delay and ends the call as before.
    ...(req.direction === 'inbound' && input.channel === 'voice' && !req.awaitGreeting ? { startDelay: INBOUND_STREAM_WAIT } : {}),
  };
  try {
    if (req.awaitGreeting) {
      const op = new WithStartWorkflowOperation('callWorkflow', { ...startOptions, workflowIdConflictPolicy: 'FAIL' });
      const greeting = await callTrace.run(() => temporal.workflow.executeUpdateWithStart(greetingUpdate, { startWorkflowOperation: op }));
      return { callId, greeting };
    }
    await callTrace.run(() => temporal.workflow.start('callWorkflow', startOptions));
    return { callId, greeting: null };
  } catch (err) {
    // The record stays, marked failed, so the attempt is visible rather than silently lost.
    await db.models.Call.update({ status: 'failed', end_reason: 'error', end_time: new Date() }, { where: { id: callId } });
    throw new CallError(503, `Could not start the call workflow: ${(err as Error).message}`);
  }
}

function updateError(err: unknown): never {
  if (err instanceof WorkflowUpdateFailedError) {
    throw new CallError(409, (err.cause as Error | undefined)?.message ?? err.message);
  }
  if (err instanceof WorkflowNotFoundError) throw new CallError(409, 'The call has ended');
  throw err;
}

export async function sendText(deps: CallDeps, callId: string, text: string): Promise<TextTurnResult> {
  try {
    return await deps.temporal.workflow.getHandle(callWorkflowId(callId)).executeUpdate(sendTextUpdate, { args: [{ text }] });
  } catch (err) {
    return updateError(err);
  }
}

/**
 * Ends a running call and waits for its final status; a finished call is left as it is. A call
 * whose workflow does not end it within CALL_END_TIMEOUT_SECS is ended anyway: terminated, and
 * recorded as failed (forced-end.ts). A workflow that did end the call in time and is only
 * writing its final state (PostgreSQL down, say) is left to finish.
 */
export async function endCall(deps: CallDeps, callId: string, reason: EndReason): Promise<void> {
  const handle = deps.temporal.workflow.getHandle(callWorkflowId(callId));
  const limitSecs = deps.config.CALL_END_TIMEOUT_SECS;
  let acknowledged = false;
  try {
    const description = await handle.describe();
    if (description.status.name !== 'RUNNING') return;
    const ending = (async () => {
      await handle.executeUpdate(endCallUpdate, { args: [{ reason }] });
      acknowledged = true;
      // The final record is written before the post-call analysis, which must not hold this
      // answer; a workflow of an older build (no such update) writes it just before completing.
      await handle.executeUpdate(finalRecordUpdate).catch(() => handle.result().catch(() => undefined));
    })();
    if (await settlesWithin(ending, limitSecs * 1000)) return;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    if (err instanceof WorkflowUpdateFailedError) return;
    // Anything else (e.g. "Workflow Task in failed state"): the workflow cannot end the call.
  }
  if (acknowledged) return;
  const message = `the call workflow did not end the call within ${limitSecs} s of POST /api/calls/end; it was terminated`;
  try {
    await handle.terminate(message);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    return; // it finished meanwhile
  }
  await recordForcedEnd(deps.db, callId, message);
}

/** True when `work` settles within `ms` (rethrowing its error); false on timeout. */
async function settlesWithin(work: Promise<void>, ms: number): Promise<boolean> {
  work.catch(() => undefined); // a late rejection must not go unhandled
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([work.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
