/**
 * CallWorkflow: one per call (workflow id `call-<call id>`). Handlers are registered before the
 * first await and only change state; CallSession.run owns the timers and activities.
 *
 * A signal handler that throws would fail the workflow task, and the same signal would make it
 * fail again on every retry: the call would be wedged for good. So a signal that cannot be handled
 * (malformed, from a sender of another version) is recorded as an `error` event and ignored.
 */
import { ApplicationFailure, condition, setHandler } from '@temporalio/workflow';
import {
  endCallUpdate,
  gatewayLostSignal,
  finalRecordUpdate,
  greetingUpdate,
  mediaConnectedSignal,
  sendTextUpdate,
  voiceConfigQuery,
  stateQuery,
  telephonyStatusSignal,
  transferEventSignal,
  answeredBySignal,
  utteranceSignal,
  type CallWorkflowInput,
} from './call-definitions';
import { isFinal } from './call-status';
import { CallSession, type CallSummary } from './call-session';

export async function callWorkflow(input: CallWorkflowInput): Promise<CallSummary> {
  // Only a gateway's signal-with-start can start one without input (a call whose workflow had
  // gone, src/gateway/workflow-link/workflow-reports.ts): there is no call to run.
  if (!input?.callId) throw ApplicationFailure.nonRetryable('a call workflow needs its input; this one was started by a signal alone');
  const session = new CallSession(input);
  const ended = () => isFinal(session.status) || session.endRequest !== null;

  const guarded =
    <A extends unknown[]>(name: string, handler: (...args: A) => void) =>
    (...args: A) => {
      try {
        handler(...args);
      } catch (err) {
        session.ignoredMessage(name, err);
      }
    };
  setHandler(
    utteranceSignal,
    guarded('utterance', (signal) => {
      const { text, duringAgentSpeech, events, seq } = signal;
      if (typeof text !== 'string') throw new TypeError(`text is ${typeof text}, not a string`);
      if (session.isRepeatedUtterance(seq)) return;
      session.recordGatewayEvents(events);
      const n = typeof seq === 'number' && Number.isFinite(seq) ? seq : undefined;
      session.noteUtteranceSeq(n);
      const reply = session.replyOf(signal);
      // A reply the caller heard is the call's even if the hang-up was processed first.
      if ((!ended() || (reply && !isFinal(session.status))) && text.trim()) session.enqueueUtterance(text.trim(), duringAgentSpeech === true, n, reply);
    }),
  );
  setHandler(mediaConnectedSignal, guarded('mediaConnected', (signal) => session.onMediaConnected(signal)));
  setHandler(gatewayLostSignal, guarded('gatewayLost', (signal) => session.onGatewayLost(signal)));
  setHandler(voiceConfigQuery, () => session.voiceConfig);
  setHandler(telephonyStatusSignal, guarded('telephonyStatus', (signal) => session.onTelephonyStatus(signal)));
  setHandler(transferEventSignal, guarded('transferEvent', (signal) => session.onTransferEvent(signal)));
  setHandler(answeredBySignal, guarded('answeredBy', (signal) => session.onAnsweredBy(signal)));
  setHandler(
    sendTextUpdate,
    async ({ text }) => {
      const id = session.enqueueUtterance(text.trim());
      await condition(() => session.turnResults.has(id) || isFinal(session.status));
      const result = session.turnResults.get(id) ?? { replies: [], status: session.status, node_key: session.nodeKey };
      session.turnResults.delete(id);
      return { ...result, status: session.status };
    },
    {
      validator: ({ text }) => {
        if (typeof text !== 'string' || !text.trim()) throw new Error('text must be a non-empty string');
        if (ended()) throw new Error(`the call has ended (status ${session.status})`);
        if (session.status !== 'in_progress') throw new Error(`the call is not in progress (status ${session.status})`);
      },
    },
  );
  setHandler(greetingUpdate, async () => {
    await condition(() => session.greetingDone || isFinal(session.status));
    return session.greeting;
  });
  setHandler(endCallUpdate, async ({ reason }) => {
    session.requestEnd(reason);
    await condition(() => isFinal(session.status));
    return session.status;
  });
  setHandler(finalRecordUpdate, async () => {
    await condition(() => session.finalRecorded);
    return session.status;
  });
  setHandler(stateQuery, () => ({
    status: session.status,
    nodeKey: session.nodeKey,
    endReason: session.endReason,
    greeting: session.greeting,
    turns: session.turns,
  }));

  return session.run();
}
