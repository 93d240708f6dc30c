/**
 * All API route groups. Each module exports a function taking the ApiContext and returning route
 * definitions; the app mounts them and the OpenAPI document is built from the same list.
 */
import type { ApiContext } from '../context';
import type { AnyRoute } from '../route';
import { authRoutes } from './auth';
import { userRoutes } from './users';
import { callControlRoutes } from './call-control';
import { agentRoutes } from './agents';
import { flowRoutes } from './flow';
import { bundleRoutes } from './bundles';
import { toolRoutes } from './tools';
import { mcpServerRoutes } from './mcp-servers';
import { settingsRoutes } from './settings';
import { endpointRoutes } from './endpoints';
import { callRoutes } from './calls';
import { callAnalysisRoutes } from './call-analysis';
import { callStreamRoutes } from './call-stream';
import { recordingRoutes } from './recordings';
import { generateRoutes } from './generate';
import { sidechatRoutes } from './sidechat';
import { outboundRoutes } from './outbound';
import { telephonyRoutes } from './telephony';
import { telephonyTransferRoutes } from './telephony-transfer';
import { telephonyWarmRoutes } from './telephony-warm';
import { agentTestRoutes } from './agent-tests';
import { testRunRoutes } from './test-runs';
import { webCallRoutes } from './web-calls';
import { publishableKeyRoutes } from './publishable-keys';
import { campaignRoutes } from './campaigns';
import { doNotCallRoutes } from './do-not-call';
import { knowledgeBaseRoutes } from './knowledge-bases';
import { knowledgeDocumentRoutes } from './knowledge-documents';

export function allRoutes(ctx: ApiContext): AnyRoute[] {
  return [...authRoutes(ctx), ...userRoutes(ctx), ...callControlRoutes(ctx), ...agentRoutes(ctx), ...flowRoutes(ctx), ...bundleRoutes(ctx), ...toolRoutes(ctx), ...mcpServerRoutes(ctx), ...settingsRoutes(ctx), ...endpointRoutes(ctx), ...callRoutes(ctx), ...callAnalysisRoutes(ctx), ...callStreamRoutes(ctx), ...recordingRoutes(ctx), ...generateRoutes(ctx), ...sidechatRoutes(ctx), ...outboundRoutes(ctx), ...telephonyRoutes(ctx), ...telephonyTransferRoutes(ctx), ...telephonyWarmRoutes(ctx), ...agentTestRoutes(ctx), ...testRunRoutes(ctx), ...webCallRoutes(ctx), ...publishableKeyRoutes(ctx), ...campaignRoutes(ctx), ...doNotCallRoutes(ctx), ...knowledgeBaseRoutes(ctx), ...knowledgeDocumentRoutes(ctx)];
}
