/** Re-running a finished call's post-call analysis (docs/post-call-analysis.md). */
import { z } from 'zod';
import { CallError, type CallDeps } from '../../calls/call-service';
import { startReanalysis } from '../../calls/reanalysis';
import type { ApiContext } from '../context';
import { callHttpError } from '../errors';
import { route, uuidParam } from '../route';

export function callAnalysisRoutes(ctx: ApiContext) {
  const deps: CallDeps = { config: ctx.config, db: ctx.db, temporal: ctx.temporal };
  return [
    route({
      method: 'post',
      path: '/api/calls/{call_id}/analyze',
      operationId: 'analyzeCall',
      tag: 'Calls',
      access: 'member',
      summary: "Re-run a finished call's analysis with the agent's current settings",
      description:
        "Starts a short workflow (`analysis-<call_id>`) that analyses the call again with its agent's current `analysis` setting, replaces the call's `analysis` and records an `analysis_completed` event (and webhook, with a new message id). Answers at once: `analysis_status` is `pending` until it is done. A re-run already under way is joined, not repeated. Analysis tokens add up across runs.",
      params: uuidParam('call_id'),
      responses: {
        202: {
          description: 'The re-run started (or one was already running)',
          schema: z.object({ call_id: z.uuid(), analysis_status: z.literal('pending'), workflow_id: z.string() }).meta({ id: 'AnalysisStarted' }),
        },
        404: { description: 'Unknown call' },
        409: { description: "The call has not ended, its own analysis is still running, or its agent was deleted or has no analysis" },
        503: { description: 'The analysis LLM is not configured, or Temporal is not reachable' },
      },
      async handler({ params }) {
        const callId = params.call_id as string;
        const { workflowId } = await startReanalysis(deps, callId).catch((err: unknown) => {
          if (err instanceof CallError) throw callHttpError(err);
          throw err;
        });
        return { status: 202, body: { call_id: callId, analysis_status: 'pending', workflow_id: workflowId } };
      },
    }),
  ];
}
