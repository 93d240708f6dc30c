/** Workflow entry points registered with the worker. Workflow code is deterministic: no I/O. */
export { callWorkflow } from './call-workflow';
export { webhookDeliveryWorkflow } from './webhook-workflow';
export { callAnalysisWorkflow } from './analysis-workflow';
export { testRunWorkflow } from './test-run-workflow';
export { testAttemptWorkflow } from './test-attempt-workflow';
export { campaignWorkflow } from './campaign-workflow';
export { knowledgeIngestWorkflow } from './knowledge-workflow';
