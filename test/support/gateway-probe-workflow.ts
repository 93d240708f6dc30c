/**
 * A stand-in call workflow for the media gateway tests: it speaks the gateway side of the
 * contract in workflows/call-definitions.ts (answers `voiceConfig`, takes `mediaConnected` and
 * `utterance` signals, holds a heartbeating `mediaSession` on the gateway's queue) and lets the
 * test run speak / voiceTurn / endMedia on that queue through updates. It records everything
 * it receives so tests can assert on it with a query.
 */
import {
  ActivityFailure,
  allHandlersFinished,
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  proxyActivities,
  setHandler,
  TimeoutFailure,
} from '@temporalio/workflow';
import {
  GATEWAY_HEARTBEAT_TIMEOUT_SECS,
  mediaConnectedSignal,
  utteranceSignal,
  voiceConfigQuery,
  type EndReason,
  type GatewayActivities,
  type MediaConnectedSignal,
  type MediaSessionResult,
  type SpeechOutcome,
  type UtteranceSignal,
  type VoiceConfig,
  type VoiceTurnRequest,
  type VoiceTurnResult,
} from '../../workflows/call-definitions';

export interface ProbeInput {
  callId: string;
  voice: VoiceConfig;
}

export interface ProbeState {
  connected: MediaConnectedSignal | null;
  utterances: UtteranceSignal[];
  session: { result?: MediaSessionResult; error?: { message: string; cause: string | null; timeoutType: string | null } } | null;
}

export const probeStateQuery = defineQuery<ProbeState>('probeState');
export const speakUpdate = defineUpdate<SpeechOutcome, [{ utteranceId: string; text: string }]>('probeSpeak');
export const voiceTurnUpdate = defineUpdate<VoiceTurnResult, [Omit<VoiceTurnRequest, 'callId'>]>('probeVoiceTurn');
export const endMediaUpdate = defineUpdate<void, [{ reason: EndReason }]>('probeEndMedia');
export const finishSignal = defineSignal('probeFinish');

export async function gatewayProbeWorkflow(input: ProbeInput): Promise<ProbeState> {
  const state: ProbeState = { connected: null, utterances: [], session: null };
  let finished = false;
  const gateway = () => {
    const taskQueue = state.connected!.gatewayTaskQueue;
    return proxyActivities<GatewayActivities>({
      taskQueue,
      scheduleToStartTimeout: '5s',
      startToCloseTimeout: '10m',
      heartbeatTimeout: `${GATEWAY_HEARTBEAT_TIMEOUT_SECS}s`,
      retry: { maximumAttempts: 1 },
    });
  };

  setHandler(voiceConfigQuery, () => input.voice);
  setHandler(probeStateQuery, () => state);
  setHandler(mediaConnectedSignal, (signal) => {
    state.connected ??= signal;
  });
  setHandler(utteranceSignal, (u) => void state.utterances.push(u));
  setHandler(finishSignal, () => void (finished = true));
  setHandler(speakUpdate, async (req) => {
    await condition(() => state.connected !== null);
    return gateway().speak({ callId: input.callId, ...req });
  });
  setHandler(voiceTurnUpdate, async (req) => {
    await condition(() => state.connected !== null);
    return gateway().voiceTurn({ callId: input.callId, ...req });
  });
  setHandler(endMediaUpdate, async ({ reason }) => {
    await condition(() => state.connected !== null);
    await gateway().endMedia({ callId: input.callId, reason });
  });

  await condition(() => state.connected !== null || finished);
  if (state.connected) {
    gateway()
      .mediaSession({ callId: input.callId })
      .then(
        (result) => void (state.session = { result }),
        (err: Error) => {
          const cause = err instanceof ActivityFailure ? err.cause : undefined;
          state.session = {
            error: {
              message: cause?.message ?? err.message,
              cause: cause?.name ?? null,
              timeoutType: cause instanceof TimeoutFailure ? String(cause.timeoutType) : null,
            },
          };
        },
      );
  }
  await condition(() => finished);
  await condition(allHandlersFinished);
  return state;
}
