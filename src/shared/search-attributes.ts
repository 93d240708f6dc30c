/**
 * Search attributes that let operators filter calls in the Temporal Web UI. Shared by the client
 * (set at workflow start), the workflow (kept current) and the dev-server launcher (registered).
 * Workflow-safe: no Node built-ins.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const AgentName = defineSearchAttributeKey('AgentName', SearchAttributeType.KEYWORD);
export const CallStatus = defineSearchAttributeKey('CallStatus', SearchAttributeType.KEYWORD);
export const Direction = defineSearchAttributeKey('Direction', SearchAttributeType.KEYWORD);
export const PhoneNumber = defineSearchAttributeKey('PhoneNumber', SearchAttributeType.KEYWORD);
/**
 * The post-call analysis's verdict (absent until there is one). Bool rather than a `true`/`false`
 * Keyword: only two values can be stored, and the UI query reads `CallSuccess = false`.
 */
export const CallSuccess = defineSearchAttributeKey('CallSuccess', SearchAttributeType.BOOL);

export const CALL_SEARCH_ATTRIBUTES = [AgentName, CallStatus, Direction, PhoneNumber, CallSuccess];

/** The type names of `temporal server start-dev --search-attribute` and `temporal operator search-attribute create`. */
export const CLI_TYPE_NAME: Partial<Record<SearchAttributeType, string>> = {
  [SearchAttributeType.KEYWORD]: 'Keyword',
  [SearchAttributeType.BOOL]: 'Bool',
};
