/**
 * Starting a document's ingestion workflow, and the Temporal schedule that re-fetches a URL
 * document every `refresh_hours`. The workflow id is the document's: a refresh asked for while an
 * ingestion runs finds that one (it will index what is there now).
 */
import { ScheduleNotFoundError, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Config } from '../config';
import { knowledgeRefreshScheduleId, knowledgeWorkflowId, type KnowledgeIngestInput } from '../../workflows/knowledge-definitions';

interface Deps {
  temporal: Client;
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE'>;
}

export async function startIngestion(deps: Deps, input: KnowledgeIngestInput): Promise<void> {
  await deps.temporal.workflow.start('knowledgeIngestWorkflow', {
    workflowId: knowledgeWorkflowId(input.documentId),
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
    staticSummary: `knowledge document ${input.documentId}`,
  });
}

/** Creates (or replaces) the document's refresh schedule; null hours removes it. */
export async function scheduleRefresh(deps: Deps, documentId: string, hours: number | null): Promise<void> {
  await removeRefresh(deps.temporal, documentId);
  if (hours === null) return;
  const input: KnowledgeIngestInput = { documentId, fetch: true };
  await deps.temporal.schedule.create({
    scheduleId: knowledgeRefreshScheduleId(documentId),
    spec: { intervals: [{ every: `${hours}h` }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'knowledgeIngestWorkflow',
      // The schedule appends the time to it: each refresh is a workflow of its own.
      workflowId: knowledgeWorkflowId(documentId),
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      args: [input],
    },
    // A refresh still running when the next is due: the next is skipped, not queued.
    policies: { overlap: ScheduleOverlapPolicy.SKIP },
  });
}

export async function removeRefresh(temporal: Client, documentId: string): Promise<void> {
  try {
    await temporal.schedule.getHandle(knowledgeRefreshScheduleId(documentId)).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}
