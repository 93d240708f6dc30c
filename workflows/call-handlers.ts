/**
 * The call workflow's signal, update and query handlers (names and payloads: call-definitions.ts).
 * They are registered before the workflow's first await and only change state; the call's life
 * (call-workflow.ts) owns the timers and activities.
 *
 * A signal handler that throws would fail the workflow task, and the same signal would make it
 * fail again on every retry: the call would be wedged for good. So a signal that cannot be handled
 * (malformed, from a sender of another version) is recorded as an `error` event and ignored.
 */
import { condition, setHandler } from '@temporalio/workflow';
import {
  answeredBySignal,
  endCallUpdate,
  finalRecordUpdate,
  gatewayLostSignal,
  greetingUpdate,
  mediaConnectedSignal,
  sendTextUpdate,
  stateQuery,
  telephonyStatusSignal,
  transferEventSignal,
  utteranceSignal,
  voiceConfigQuery,
  type TelephonyStatusSignal,
} from './call-definitions';
import type { CallContext } from './call-context';
import type { CallInbox } from './call-inbox';
import type { CallMedia } from './call-media';
import type { Transfer } from './call-transfer';
import type { Greeting } from './call-greeting';
import { isFinal } from './call-status';
import { voiceSetup } from './voice-setup';

export interface CallParts {
  ctx: CallContext;
  inbox: CallInbox;
  media: CallMedia;
  transfer: Transfer;
  greeting: Greeting;
}

export function registerHandlers({ ctx, inbox, media, transfer, greeting }: CallParts): void {
  const ended = () => isFinal(ctx.status) || ctx.endRequest !== null;
  const guarded =
    <A extends unknown[]>(name: string, handler: (...args: A) => void) =>
    (...args: A) => {
      try {
        handler(...args);
      } catch (err) {
        ctx.ignoredMessage(name, err);
      }
    };
  setHandler(utteranceSignal, guarded('utterance', (signal) => inbox.onSignal(signal)));
  setHandler(mediaConnectedSignal, guarded('mediaConnected', (signal) => media.onConnected(signal)));
  setHandler(gatewayLostSignal, guarded('gatewayLost', (signal) => media.onGatewayLost(signal)));
  setHandler(voiceConfigQuery, () => ({
    ...voiceSetup(ctx.input),
    greeting: greeting.planned(),
    ...(ctx.transfer?.awaitingStream ? { awaitingStream: true } : {}),
  }));
  setHandler(telephonyStatusSignal, guarded('telephonyStatus', (signal) => onTelephonyStatus(ctx, signal)));
  setHandler(transferEventSignal, guarded('transferEvent', (signal) => transfer.onTransferEvent(signal)));
  setHandler(
    answeredBySignal,
    guarded('answeredBy', (verdict) => {
      if (isFinal(ctx.status)) return;
      const detected = ctx.voicemail.verdict(verdict);
      if (detected) ctx.recorder.record('voicemail_detected', detected);
    }),
  );
  setHandler(
    sendTextUpdate,
    async ({ text }) => {
      const id = inbox.enqueue(text.trim());
      await condition(() => inbox.turnResults.has(id) || isFinal(ctx.status));
      const result = inbox.turnResults.get(id) ?? { replies: [], status: ctx.status, node_key: ctx.conv.nodeKey };
      inbox.turnResults.delete(id);
      return { ...result, status: ctx.status };
    },
    {
      validator: ({ text }) => {
        if (typeof text !== 'string' || !text.trim()) throw new Error('text must be a non-empty string');
        if (ended()) throw new Error(`the call has ended (status ${ctx.status})`);
        if (ctx.status !== 'in_progress') throw new Error(`the call is not in progress (status ${ctx.status})`);
      },
    },
  );
  setHandler(greetingUpdate, async () => {
    await condition(() => ctx.greetingDone || isFinal(ctx.status));
    return ctx.greeting;
  });
  setHandler(endCallUpdate, async ({ reason }) => {
    ctx.requestEnd(reason);
    await condition(() => isFinal(ctx.status));
    return ctx.status;
  });
  setHandler(finalRecordUpdate, async () => {
    await condition(() => ctx.finalRecorded);
    return ctx.status;
  });
  setHandler(stateQuery, () => ({ status: ctx.status, nodeKey: ctx.conv.nodeKey, endReason: ctx.endReason, greeting: ctx.greeting, turns: ctx.turns }));
}

/** The telephony provider's status callbacks, relayed by the API. */
function onTelephonyStatus(ctx: CallContext, signal: TelephonyStatusSignal): void {
  ctx.recorder.record('call_status', { status: signal.status, source: 'provider', ...(signal.detail ?? {}) });
  if (signal.status !== 'ringing' && signal.status !== 'answered') ctx.providerEnded = true;
  switch (signal.status) {
    case 'answered':
      ctx.moveTo('in_progress');
      break;
    case 'busy':
    case 'no_answer':
    case 'canceled':
    case 'completed':
      if (ctx.status === 'ringing') ctx.moveTo('no_answer');
      else ctx.requestEnd('user_ended');
      break;
    case 'failed': {
      const detail = signal.detail ?? {};
      const reason = detail.error ?? detail.message;
      ctx.fail(reason ? `telephony provider: ${String(reason)}` : 'telephony provider reported the call failed', 'telephony');
      break;
    }
    case 'ringing':
      break;
  }
}
