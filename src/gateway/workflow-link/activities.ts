/**
 * The activities a gateway instance runs on its own task queue for the calls it holds (the
 * GatewayActivities contract of workflows/call-definitions.ts). Calls started before gateway
 * presence give their activities a heartbeat timeout: those heartbeat once a second (a missed
 * heartbeat is how such a workflow notices a dead gateway) and react to cancellation, which
 * reaches them with a heartbeat response. Newer calls use no heartbeats (docs/call-lifecycle.md):
 * their liveness is the gateway's presence row and the `probe` activity.
 */
import { ApplicationFailure, CompleteAsyncError, Context } from '@temporalio/activity';
import type OpenAI from 'openai';
import { llmFailure } from '../../providers/llm/llm-activity-support';
import { observeWorkflowFirstRequest } from '../../observability/metrics';
import type { GatewayActivities, MediaSessionResult, VoiceTurnRequest } from '../../../workflows/call-definitions';
import type { CallMedia } from '../call/call-media';
import type { MediaClosure } from '../call/call-media-options';
import type { CallRegistry } from '../call/call-registry';
import { SpeechUnavailable } from '../speech/tts-link';
import { runVoiceTurn } from '../turns/voice-turn';

export const HEARTBEAT_INTERVAL_MS = 1000;

/** The call is not (or no longer) on this gateway: the workflow treats the gateway as lost. */
export const CALL_NOT_ON_GATEWAY = 'CallNotOnGateway';

function requireCall(calls: CallRegistry, callId: string): CallMedia {
  const call = calls.get(callId);
  if (!call || call.isClosed) throw ApplicationFailure.nonRetryable(`call ${callId} has no audio stream on this gateway`, CALL_NOT_ON_GATEWAY);
  return call;
}

/**
 * Runs `work`, heartbeating every second; rejects with the CancelledFailure if cancelled (only
 * heartbeating activities learn of a cancellation).
 */
async function heartbeating<T>(work: (cancel: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  ctx.heartbeat();
  const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_INTERVAL_MS);
  try {
    return await Promise.race([work(ctx.cancellationSignal), ctx.cancelled]);
  } finally {
    clearInterval(timer);
  }
}

/**
 * Answers an activity of a call. Calls without heartbeats (docs/call-lifecycle.md): the work runs
 * on after the activity function returns (CompleteAsyncError), and its result — or failure — is
 * completed through the call's outbox, behind everything the gateway reported before it, retried
 * while Temporal is away. Older calls: heartbeating, the result returned once the reports queued
 * before it are delivered.
 */
async function answer<T>(calls: CallRegistry, callId: string, what: string, work: (cancel: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const call = calls.get(callId);
  // The call's trace reaches the gateway with its activities (docs/tracing.md).
  call?.turnSpans.adopt();
  const waitedMs = call ? calls.heardFromWorkflow(call) : null;
  if (waitedMs !== null) observeWorkflowFirstRequest(waitedMs);
  const reports = calls.reportsOf(callId);
  if (ctx.info.heartbeatTimeoutMs) {
    const result = await heartbeating(work);
    await reports?.settled;
    return result;
  }
  if (!reports) return work(ctx.cancellationSignal);
  const token = ctx.info.taskToken;
  work(ctx.cancellationSignal).then(
    (result) => reports.complete(what, token, result),
    (err: unknown) => reports.fail(what, token, err),
  );
  throw new CompleteAsyncError();
}

function speechFailure(err: unknown): unknown {
  return err instanceof SpeechUnavailable ? ApplicationFailure.nonRetryable(err.message, 'SpeechUnavailable') : err;
}

/** A gateway shutting down loses its calls: the workflow must see a failure, not a hang-up. */
function sessionResult(callId: string, closure: MediaClosure): MediaSessionResult {
  if (closure.reason === 'shutdown') throw ApplicationFailure.nonRetryable(`media gateway shut down; call ${callId} lost its audio`, 'GatewayShutdown');
  return {
    reason: closure.reason,
    events: closure.events.splice(0),
    ...(closure.error ? { error: closure.error } : {}),
    ...(closure.goodbye ? { goodbye: closure.goodbye } : {}),
    ...(closure.releasedArm ? { releasedArm: closure.releasedArm } : {}),
  };
}

export function createGatewayActivities(calls: CallRegistry, clientFor: (provider: string) => OpenAI): GatewayActivities {

  // The caller hung up while the workflow was deciding what to say: nobody hears it, and the
  // media session's result tells the workflow the call is over (this is not a lost gateway).
  const nobodyListening = (callId: string) => {
    const reason = calls.get(callId)?.closeReason ?? calls.finished(callId)?.reason ?? null;
    return reason === 'hangup' || reason === 'closed' || reason === 'failed' || reason === 'drained' || reason === 'voicemail';
  };
  const unheard = { heardText: '', interrupted: true, characters: 0, events: [] };
  const llm = (provider: string): OpenAI => {
    try {
      return clientFor(provider);
    } catch (err) {
      throw llmFailure(err);
    }
  };

  return {
    speak: (req) =>
      answer(calls, req.callId, `speak ${req.utteranceId}`, async (cancel) => {
        if (nobodyListening(req.callId)) return unheard;
        const call = requireCall(calls, req.callId);
        try {
          const outcome = await call.speech.speak(req, cancel);
          call.conversation.said(outcome.heardText);
          return outcome;
        } catch (err) {
          throw speechFailure(err);
        }
      }),

    voiceTurn: (req) =>
      answer(calls, req.callId, `voiceTurn ${req.utteranceId}`, async (cancel) => {
        if (nobodyListening(req.callId)) return { ...unheard, content: '', toolCalls: [], usage: { prompt_tokens: 0, completion_tokens: 0 }, ttfbMs: null };
        const call = requireCall(calls, req.callId);
        const client = llm(req.provider);
        try {
          return await runVoiceTurn(call, client, req, cancel);
        } catch (err) {
          throw speechFailure(err);
        }
      }),

    armedTurn: (req) =>
      answer(calls, req.callId, `armedTurn ${req.armId}`, async (cancel) => {
        if (nobodyListening(req.callId)) return { utterance: null, thought: null, failure: null, events: [] };
        const call = requireCall(calls, req.callId);
        const run = (turn: VoiceTurnRequest, turnCancel: AbortSignal) => runVoiceTurn(call, llm(turn.provider), turn, turnCancel);
        return call.delivery.arm(req, run, cancel);
      }),

    sendDtmf: (req) =>
      answer(calls, req.callId, `sendDtmf ${req.utteranceId}`, async () => {
        if (nobodyListening(req.callId)) return { method: 'inband' as const, playedMs: 0, events: [] };
        const call = requireCall(calls, req.callId);
        return call.pressKeys(req.utteranceId, req.digits);
      }),

    disarmTurn: ({ callId, armId }) =>
      answer(calls, callId, `disarmTurn ${armId}`, async () => {
        calls.get(callId)?.delivery.disarm(armId);
      }),

    mediaSession: ({ callId }) =>
      answer(calls, callId, 'mediaSession', async (cancel) => {
        const ended = calls.finished(callId);
        if (ended) return sessionResult(callId, ended);
        const call = requireCall(calls, callId);
        // Cancelled: the workflow no longer wants the call, so its stream closes.
        cancel.addEventListener('abort', () => void call.close('closed', 1000, 'media session cancelled'), { once: true });
        return sessionResult(callId, await call.closed);
      }),

    endMedia: ({ callId, reason }) =>
      answer(calls, callId, 'endMedia', async () => {
        const call = calls.get(callId);
        if (!call) return; // already gone: nothing left to close
        await call.end(reason);
      }),

    // Returns once the gateway acts on it: the call's end comes with the media session's result.
    voicemail: ({ callId, verdict }) =>
      answer(calls, callId, 'voicemail', async () => {
        const call = calls.get(callId);
        if (!call || call.isClosed || !call.voicemail) return;
        void call.voicemail.machine(verdict);
      }),

    // Answered at once, never through the outbox: it asks whether this gateway lives.
    async probe({ callId }) {
      const call = calls.get(callId);
      return { holds: call !== undefined && !call.isClosed };
    },
  };
}
