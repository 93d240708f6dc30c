/**
 * Value lists of the API (providers, event types, statuses, …), as the OpenAPI document lists
 * them: generated at build time (openapi-typescript --enum-values), never typed in by hand.
 */
export {
  pathsApiAgentsPostRequestBodyContentApplicationJsonStt_providerValues as STT_PROVIDERS,
  pathsApiAgentsPostRequestBodyContentApplicationJsonLlm_providerValues as LLM_PROVIDERS,
  pathsApiAgentsPostRequestBodyContentApplicationJsonTts_providerValues as TTS_PROVIDERS,
  pathsApiAgentsPostRequestBodyContentApplicationJsonWebhook_eventsValues as EVENT_TYPES,
  pathsApiAgentsAgent_idNodesPostRequestBodyContentApplicationJsonBuiltin_toolsValues as BUILTIN_TOOLS,
  pathsApiAgentsAgent_idNodesPostRequestBodyContentApplicationJsonRole_messagesRoleValues as MESSAGE_ROLES,
  pathsApiAgentsAgent_idNodesPostRequestBodyContentApplicationJsonFunctionsPropertiesTypeValues as FUNCTION_PARAM_TYPES,
  pathsApiToolsPostRequestBodyContentApplicationJsonParametersPropertiesTypeValues as TOOL_PARAM_TYPES,
  pathsApiToolsPostRequestBodyContentApplicationJsonWebhook_methodValues as WEBHOOK_METHODS,
  pathsApiCallsGetParametersQueryStatusValues as CALL_STATUSES,
  pathsApiCallsGetParametersQueryDirectionValues as DIRECTIONS,
  pathsApiCallsGetParametersQueryEnd_reasonValues as END_REASONS,
  pathsApiUsersPostRequestBodyContentApplicationJsonRoleValues as USER_ROLES,
} from './schema';
import { pathsApiAgentsPostRequestBodyContentApplicationJsonStt_modeAnyOf0Values } from './schema';

export const STT_MODES = pathsApiAgentsPostRequestBodyContentApplicationJsonStt_modeAnyOf0Values.filter((v): v is NonNullable<typeof v> => v !== null);
