/**
 * Value lists of the API (providers, event types, statuses, …), as the OpenAPI document lists
 * them: generated at build time (openapi-typescript --enum-values), never typed in by hand.
 */
export {
  sttProviderValues as STT_PROVIDERS,
  llmProviderValues as LLM_PROVIDERS,
  ttsProviderValues as TTS_PROVIDERS,
  eventTypeValues as EVENT_TYPES,
  campaignEventTypeValues as CAMPAIGN_EVENT_TYPES,
  builtinToolValues as BUILTIN_TOOLS,
  messageRoleValues as MESSAGE_ROLES,
  parameterTypeValues as FUNCTION_PARAM_TYPES,
  parameterTypeValues as TOOL_PARAM_TYPES,
  webhookMethodValues as WEBHOOK_METHODS,
  callStatusValues as CALL_STATUSES,
  campaignStatusValues as CAMPAIGN_STATUSES,
  contactStateValues as CONTACT_STATES,
  attemptOutcomeValues as ATTEMPT_OUTCOMES,
  campaignCreateScheduleWindowsDaysValues as WEEKDAYS,
  callDirectionValues as DIRECTIONS,
  endReasonValues as END_REASONS,
  userRoleValues as USER_ROLES,
  sttModeValues as STT_MODES,
  knowledgeModeValues as KNOWLEDGE_MODES,
  knowledgeDocumentKindValues as KNOWLEDGE_DOCUMENT_KINDS,
} from './schema';
