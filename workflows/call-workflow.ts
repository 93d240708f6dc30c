/**
 * CallWorkflow: one per call (workflow id `call-<call id>`). Handlers are registered before the
 * first await and only change state; CallSession.run owns the timers and activities.
 */
import { condition, setHandler } from '@temporalio/workflow';
import {
  endCallUpdate,
  greetingUpdate,
  mediaConnectedSignal,
  sendTextUpdate,
  voiceConfigQuery,
  stateQuery,
  telephonyStatusSignal,
  utteranceSignal,
  type CallWorkflowInput,
} from './call-definitions';
import { isFinal } from './call-status';
import { CallSession, type CallSummary } from './call-session';

export async function callWorkflow(input: CallWorkflowInput): Promise<CallSummary> {
  const session = new CallSession(input);
  const ended = () => isFinal(session.status) || session.endRequest !== null;

  setHandler(utteranceSignal, ({ text, duringAgentSpeech, events }) => {
    session.recordGatewayEvents(events);
    if (!ended() && text.trim()) session.enqueueUtterance(text.trim(), duringAgentSpeech ?? false);
  });
  setHandler(mediaConnectedSignal, (signal) => session.onMediaConnected(signal));
  setHandler(voiceConfigQuery, () => session.voiceConfig);
  setHandler(telephonyStatusSignal, (signal) => session.onTelephonyStatus(signal));
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
  setHandler(stateQuery, () => ({
    status: session.status,
    nodeKey: session.nodeKey,
    endReason: session.endReason,
    greeting: session.greeting,
    turns: session.turns,
  }));

  return session.run();
}
