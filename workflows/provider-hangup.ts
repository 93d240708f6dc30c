/**
 * The last thing a phone call's workflow does on the line: make sure the provider's call is over.
 * Whenever a call ends on the platform's side — the agent's end_call, POST /api/calls/end, an idle
 * end, a failure, a media gateway that died — the provider is asked to hang up (or cancel a call
 * still ringing), unless the provider itself already reported the call over. Workflow code.
 *
 * Calls started since `call-patches-1` hang up through a local activity: one HTTP request to the
 * provider needs no task queue round trip, and the same retries (a few tries over ~half a minute)
 * fit a local activity's. It saves the call an activity task and a workflow task.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { CallPatches } from './call-patches';

const HANGUP_OPTIONS = {
  startToCloseTimeout: '20s',
  // Only an unreachable provider is thrown by the activity; a few tries over ~half a minute.
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 5 },
} as const;
const { hangupProviderCall } = proxyActivities<Activities>(HANGUP_OPTIONS);
const { hangupProviderCall: hangupProviderCallLocally } = proxyLocalActivities<Activities>(HANGUP_OPTIONS);

export async function hangUpProviderCall(callId: string, patches: CallPatches): Promise<void> {
  // Calls that were running when this step was added replay without it.
  if (!patches.has('provider-hangup-on-end')) return;
  try {
    await (patches.folded ? hangupProviderCallLocally : hangupProviderCall)({ callId });
  } catch {
    // The provider stayed unreachable; its own limits (Twilio's TimeLimit) end the call eventually.
  }
}
