/** Names for the API's shapes, taken from the generated OpenAPI types. */
import type { paths } from './schema';

type Json<R> = R extends { content: { 'application/json': infer J } } ? J : never;

export type Agent = Json<paths['/api/agents/{agent_id}']['get']['responses'][200]>;
export type AgentListItem = Json<paths['/api/agents']['get']['responses'][200]>[number];
export type AgentCreate = NonNullable<paths['/api/agents']['post']['requestBody']>['content']['application/json'];
export type AgentPatch = NonNullable<paths['/api/agents/{agent_id}']['patch']['requestBody']>['content']['application/json'];
export type AgentStats = Json<paths['/api/agents/stats']['get']['responses'][200]>;
export type FlowNode = Json<paths['/api/agents/{agent_id}/flow']['get']['responses'][200]>['nodes'][number];
export type FlowNodeInput = NonNullable<paths['/api/agents/{agent_id}/nodes']['post']['requestBody']>['content']['application/json'];
export type FlowFunction = NonNullable<FlowNodeInput['functions']>[number];
export type Tool = Json<paths['/api/tools/{tool_id}']['get']['responses'][200]>;
export type ToolCreate = NonNullable<paths['/api/tools']['post']['requestBody']>['content']['application/json'];
export type ToolTestResult = Json<paths['/api/tools/{tool_id}/test']['post']['responses'][200]>;
export type CallListItem = Json<paths['/api/calls']['get']['responses'][200]>['calls'][number];
export type CallListQuery = NonNullable<paths['/api/calls']['get']['parameters']['query']>;
export type CallDetail = Json<paths['/api/calls/{call_id}']['get']['responses'][200]>;
export type TranscriptEntry = NonNullable<CallDetail['transcript']>[number];
/** A knowledge-base passage an agent reply was given. */
export type KnowledgeSource = NonNullable<TranscriptEntry['sources']>[number];
export type CallEvent = Json<paths['/api/calls/{call_id}/events']['get']['responses'][200]>[number];
export type Campaign = Json<paths['/api/campaigns/{campaign_id}']['get']['responses'][200]>;
export type CampaignCreate = NonNullable<paths['/api/campaigns']['post']['requestBody']>['content']['application/json'];
export type CampaignUpload = NonNullable<Campaign['upload']>;
export type CampaignContact = Json<paths['/api/campaigns/{campaign_id}/contacts']['get']['responses'][200]>['contacts'][number];
export type DoNotCallEntry = Json<paths['/api/do-not-call']['get']['responses'][200]>['entries'][number];
export type TelephonySettings = Json<paths['/api/settings/telephony']['get']['responses'][200]>;
export type TelephonyProvider = Json<paths['/api/settings/telephony/providers']['get']['responses'][200]>[number];
export type Endpoint = Json<paths['/api/settings/endpoints']['get']['responses'][200]>[number];
export type User = Json<paths['/api/users']['get']['responses'][200]>[number];
export type Me = Json<paths['/api/auth/me']['get']['responses'][200]>;
export type ApiKey = Json<paths['/api/auth/api-keys']['get']['responses'][200]>[number];
export type SidechatReply = Json<paths['/api/sidechat']['post']['responses'][200]>;
export type SidechatMessage = NonNullable<paths['/api/sidechat']['post']['requestBody']>['content']['application/json']['messages'][number];
export type AgentTest = Json<paths['/api/agents/{agent_id}/tests/{test_id}']['get']['responses'][200]>;
export type AgentTestCreate = NonNullable<paths['/api/agents/{agent_id}/tests']['post']['requestBody']>['content']['application/json'];
export type TestRun = Json<paths['/api/test-runs/{run_id}']['get']['responses'][200]>;
export type TestRunTest = TestRun['tests'][number];
export type TestAttempt = NonNullable<TestRunTest['attempts']>[number];
export type McpServer = Json<paths['/api/mcp-servers/{server_id}']['get']['responses'][200]>;
export type McpServerCreate = NonNullable<paths['/api/mcp-servers']['post']['requestBody']>['content']['application/json'];
export type McpTool = McpServer['tools'][number];
/** A telephony provider field as sent: a name or an alias. The picker offers the server's live list, so a typed-in value is checked by the server. */
export type ProviderName = NonNullable<paths['/api/settings/endpoints']['post']['requestBody']>['content']['application/json']['provider'];
export type KnowledgeBase = Json<paths['/api/knowledge-bases/{knowledge_base_id}']['get']['responses'][200]>;
export type KnowledgeBaseCreate = NonNullable<paths['/api/knowledge-bases']['post']['requestBody']>['content']['application/json'];
export type KnowledgeDocument = Json<paths['/api/knowledge-bases/{knowledge_base_id}/documents/{document_id}']['get']['responses'][200]>;
export type KnowledgeDocumentCreate = NonNullable<paths['/api/knowledge-bases/{knowledge_base_id}/documents']['post']['requestBody']>['content']['application/json'];
export type KnowledgeSearchResult = Json<paths['/api/knowledge-bases/{knowledge_base_id}/search']['post']['responses'][200]>;
export type KnowledgePassage = KnowledgeSearchResult['passages'][number];
