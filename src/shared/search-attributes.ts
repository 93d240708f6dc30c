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

export const CALL_SEARCH_ATTRIBUTES = [AgentName, CallStatus, Direction, PhoneNumber];
