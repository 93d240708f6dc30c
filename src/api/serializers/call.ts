/**
 * The API forms of calls and call events. Shared by the read endpoints and the call-control
 * endpoints so every answer describing a call has the same shape.
 */
import type { CallEventRow, CallRow } from '../../db/models';
import { replySources, type ReplySource } from '../../knowledge/reply-sources';
import { apiTimestamp, apiTimestampPrecise } from '../../shared/time';

export interface TranscriptEntry {
  role: 'user' | 'assistant';
  text: string;
  timestamp: string;
  /** An agent reply given knowledge-base passages: which (docs/knowledge-base.md#traceability). */
  sources?: ReplySource[];
}

/** The events a transcript is built from: speech, and the retrievals its replies were given. */
export const TRANSCRIPT_EVENTS = ['user_spoke', 'agent_spoke', 'knowledge_retrieved'];

/**
 * A call's fields except the transcript (added by the list and the detail forms); `extra` is
 * merged last. The list and the detail answer the same fields, so a client has one Call type.
 */
export function callJson(row: CallRow, extra: Record<string, unknown> = {}) {
  return {
    id: row.id,
    agent_id: row.agent_id,
    phone_number: row.phone_number,
    agent_name: row.agent_name,
    direction: row.direction,
    channel: row.channel,
    status: row.status,
    start_time: apiTimestamp(row.start_time),
    end_time: apiTimestamp(row.end_time),
    duration: row.duration,
    recording_path: row.recording_path,
    recording_parts: row.recording_parts ?? (row.recording_path ? [row.recording_path] : []),
    recording_url: row.recording_path ? `/api/recordings/${row.id}` : null,
    end_reason: row.end_reason,
    answered_by: row.answered_by ?? null,
    transfer_summary: row.transfer_summary ?? null,
    llm_prompt_tokens: row.llm_prompt_tokens,
    llm_completion_tokens: row.llm_completion_tokens,
    tts_characters: row.tts_characters,
    analysis_status: row.analysis_status,
    analysis: row.analysis,
    analysis_prompt_tokens: row.analysis_prompt_tokens,
    analysis_completion_tokens: row.analysis_completion_tokens,
    metadata: row.metadata ?? {},
    created_at: apiTimestamp(row.created_at)!,
    context: row.context ?? {},
    agent_version: row.agent_version,
    current_node_key: row.current_node_key,
    provider: row.provider,
    provider_call_sid: row.provider_call_sid,
    updated_at: apiTimestamp(row.updated_at)!,
    trace_id: row.trace_id ?? null,
    ...extra,
  };
}

export function eventJson(row: CallEventRow) {
  return {
    id: row.seq,
    call_id: row.call_id,
    event_type: row.event_type,
    timestamp: apiTimestampPrecise(row.timestamp)!,
    data: row.data ?? {},
  };
}

const SPEAKER: Record<string, TranscriptEntry['role']> = { user_spoke: 'user', agent_spoke: 'assistant' };

/**
 * The conversation as spoken, from the call's user_spoke/agent_spoke events in seq order; a reply
 * that was given passages has their `sources` (from the knowledge_retrieved events among `events`).
 */
export function transcriptOf(events: CallEventRow[]): TranscriptEntry[] {
  const sources = replySources(events);
  return [...events]
    .sort((a, b) => a.seq - b.seq)
    .filter((e) => SPEAKER[e.event_type] && typeof e.data?.text === 'string')
    .map((e) => {
      const entry: TranscriptEntry = { role: SPEAKER[e.event_type]!, text: e.data.text as string, timestamp: apiTimestampPrecise(e.timestamp)! };
      const given = sources.get(e.seq);
      return given ? { ...entry, sources: given } : entry;
    });
}

/** Detail form: the call with its transcript. */
export function callDetailJson(row: CallRow, events: CallEventRow[]) {
  return callJson(row, { transcript: transcriptOf(events) });
}
