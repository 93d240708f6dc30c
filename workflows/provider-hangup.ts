/**
 * The last thing a phone call's workflow does on the line: make sure the provider's call is over.
 * Whenever a call ends on the platform's side — the agent's end_call, POST /api/calls/end, an idle
 * end, a failure, a media gateway that died — the provider is asked to hang up (or cancel a call
 * still ringing), unless the provider itself already reported the call over. Workflow code.
 *
 * A local activity: one HTTP request to the provider needs no task queue round trip, and the
 * retries (a few tries over ~half a minute) fit a local activity's. It saves the call an activity
 * task and a workflow task.
 */
import { proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { hangupProviderCall } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '20s',
  // Only an unreachable provider is thrown by the activity; a few tries over ~half a minute.
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 5 },
});

export async function hangUpProviderCall(callId: string): Promise<void> {
  try {
    await hangupProviderCall({ callId });
  } catch {
    // The provider stayed unreachable; its own limits (Twilio's TimeLimit) end the call eventually.
  }
}
