/**
 * POST /api/calls/{call_id}/analyze: the call's analysis again, with its agent's current settings,
 * as a short workflow of its own (workflows/analysis-workflow.ts). Refused while the call's own
 * workflow still runs its analysis (a workflow that has written it is waited for a moment), for
 * an agent deleted or without analysis,
 * and when the analysis LLM cannot run on this installation.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { plain } from '../db/database';
import { analysisPlan } from '../analysis/plan';
import { ANALYSIS_EVENT } from '../analysis/types';
import { llmProblem } from '../providers/llm/registry';
import { AgentName, PhoneNumber } from '../shared/search-attributes';
import { callWorkflowId } from '../../workflows/call-definitions';
import { isFinal } from '../../workflows/call-status';
import { analysisWorkflowId, type ReanalysisInput } from '../../workflows/analysis-definitions';
import { analysisRetryOptions, CallError, type CallDeps } from './call-service';

/** How long a re-run waits for a call workflow whose analysis is written to finish. */
const FINISHING_WAIT_MS = 5000;

/** Whether the workflow closes within `ms` (looked at every 200 ms: a long poll for its result would outlive a refusal). */
async function finishesWithin(temporal: Client, workflowId: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    if (!(await workflowRunning(temporal, workflowId))) return true;
  }
  return false;
}

async function workflowRunning(temporal: Client, workflowId: string): Promise<boolean> {
  try {
    return (await temporal.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw new CallError(503, `Temporal is not reachable: ${(err as Error).message}`);
  }
}

export async function startReanalysis(deps: CallDeps, callId: string): Promise<{ workflowId: string }> {
  const { db, temporal, config } = deps;
  const call = plain(await db.models.Call.findByPk(callId));
  if (!call) throw new CallError(404, 'Call not found');
  if (!isFinal(call.status)) throw new CallError(409, `The call has not ended yet (status ${call.status})`);
  if (await workflowRunning(temporal, callWorkflowId(callId))) {
    if (call.analysis_status === 'pending') {
      throw new CallError(409, "The call's workflow is still running its own analysis; try again when analysis_status is no longer pending");
    }
    // Its analysis is written and the workflow is finishing (its last writes, webhooks): a client
    // that saw analysis_status settle should not be refused for that moment.
    if (!(await finishesWithin(temporal, callWorkflowId(callId), FINISHING_WAIT_MS))) {
      throw new CallError(409, "The call's workflow is still delivering its own analysis (webhooks); try again shortly");
    }
  }
  const agent = call.agent_id ? plain(await db.models.Agent.findByPk(call.agent_id)) : null;
  if (!agent) throw new CallError(409, `The agent of this call (${call.agent_name}) has been deleted`);
  const plan = analysisPlan(agent.analysis, agent);
  if (!plan) throw new CallError(409, `Agent ${agent.name} has no post-call analysis: set its "analysis" first`);
  const problem = llmProblem({ llm_provider: plan.provider }, config);
  if (problem) throw new CallError(503, `The analysis LLM cannot run here: llm_provider ${plan.provider}: ${problem}`);

  const subscribed = agent.webhook_url !== null && agent.webhook_events.includes(ANALYSIS_EVENT);
  const input: ReanalysisInput = {
    callId,
    plan,
    options: analysisRetryOptions(config),
    webhook: subscribed
      ? {
          callId,
          agent: { id: agent.id, name: agent.name, webhook_url: agent.webhook_url, webhook_secret_encrypted: agent.webhook_secret_encrypted },
          phoneNumber: call.phone_number,
          direction: call.direction,
          initialRetrySecs: config.WEBHOOK_RETRY_INITIAL_SECS,
        }
      : null,
  };
  const workflowId = analysisWorkflowId(callId);
  // Pending from this answer on (the workflow's own first write may come a moment later): a client
  // reading the call right away sees the re-run, not the old result as final.
  await db.models.Call.update({ analysis_status: 'pending' }, { where: { id: callId } });
  try {
    // A re-run already under way is joined, not doubled: one writer per call at a time.
    await temporal.workflow.start('callAnalysisWorkflow', {
      workflowId,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: [
        { key: AgentName, value: agent.name },
        { key: PhoneNumber, value: call.phone_number },
      ],
      staticSummary: `analysis of call ${callId} · agent ${agent.name} v${agent.version}`,
    });
  } catch (err) {
    await db.models.Call.update({ analysis_status: call.analysis_status }, { where: { id: callId } });
    throw new CallError(503, `Could not start the analysis workflow: ${(err as Error).message}`);
  }
  return { workflowId };
}
