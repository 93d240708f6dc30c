/**
 * Re-runs a finished call's analysis with the agent's current settings (POST
 * /api/calls/{call_id}/analyze). Workflow id `analysis-<call id>`: while one runs, another request
 * joins it instead of starting a second writer. The result replaces the call's analysis and is
 * announced like the first: an `analysis_completed` event continuing the call's sequence, and its
 * webhook (a new message id: the event's new sequence number). Workflow code.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ANALYSIS_EVENT } from '../src/analysis/types';
import type { ReanalysisInput } from './analysis-definitions';
import { analysisEventData, analysisRecord, analyzeCall, markSuccess } from './post-call-analysis';
import { startWebhookDelivery } from './webhook-notify';

// As for the call's own writes: retried while PostgreSQL is away.
const { persistCall, reanalysisBase } = proxyActivities<Activities>({
  startToCloseTimeout: '15s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s', nonRetryableErrorTypes: ['CallNotFound'] },
});

export async function callAnalysisWorkflow(input: ReanalysisInput): Promise<{ analysis_status: string }> {
  const { callId } = input;
  await persistCall({ callId, events: [], patch: { analysis_status: 'pending' } });
  const result = await analyzeCall(callId, input.plan, input.options);
  // Read once and kept in history: a replayed or retried write repeats the same sequence number.
  const base = await reanalysisBase({ callId });
  const event = { seq: base.nextSeq, type: ANALYSIS_EVENT, timestampMs: Date.now(), data: analysisEventData(result, true) };
  await persistCall({ callId, events: [event], patch: analysisRecord(result, base) });
  markSuccess(result);
  if (input.webhook) await startWebhookDelivery(input.webhook, event);
  return { analysis_status: result.status };
}
