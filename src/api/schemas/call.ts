/** Response shapes of calls and their events (OpenAPI documentation of the call serializers). */
import { z } from 'zod';
import { CALL_STATUSES, DIRECTIONS, END_REASONS } from '../../shared/catalog';

const timestamp = z.string().describe('ISO 8601 UTC without offset, YYYY-MM-DDTHH:MM:SS');
const preciseTimestamp = z.string().describe('ISO 8601 UTC without offset, with milliseconds');

export const CallSchema = z.object({
  id: z.uuid(),
  agent_id: z.uuid().nullable().describe('null once the agent has been deleted (the call is kept)'),
  phone_number: z.string().describe('E.164'),
  agent_name: z.string(),
  direction: z.enum(DIRECTIONS),
  channel: z
    .enum(['voice', 'text', 'manual'])
    .describe('how the audio reaches the platform: a phone stream, the text test channel, or the client (POST /api/calls/start)'),
  status: z.enum(CALL_STATUSES),
  start_time: timestamp.nullable().describe('when the call connected'),
  end_time: timestamp.nullable(),
  duration: z.number().nullable().describe('seconds'),
  recording_path: z.string().nullable().describe('where the WAV recording is stored, if any'),
  recording_url: z.string().nullable().describe('API path streaming the recording (GET /api/recordings/{call_id})'),
  end_reason: z.enum(END_REASONS).nullable(),
  llm_prompt_tokens: z.number().int(),
  llm_completion_tokens: z.number().int(),
  tts_characters: z.number().int(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: timestamp,
});

export const TranscriptEntrySchema = z.object({
  role: z.enum(['user', 'assistant']),
  text: z.string(),
  timestamp: preciseTimestamp,
});

export const CallDetailSchema = CallSchema.extend({
  context: z.record(z.string(), z.union([z.string(), z.number()])).describe('the custom parameters of the call'),
  agent_version: z.number().int().nullable().describe('version of the agent configuration the call ran on'),
  current_node_key: z.string().nullable().describe('flow agents: the node the conversation is (or ended) in'),
  provider: z.string().nullable().describe('telephony provider'),
  provider_call_sid: z.string().nullable().describe("the provider's own call identifier"),
  updated_at: timestamp,
  transcript: z.array(TranscriptEntrySchema).describe('user_spoke and agent_spoke events in order'),
});

export const CallEventSchema = z.object({
  id: z.number().int().describe('sequence number within the call'),
  call_id: z.uuid(),
  event_type: z.string(),
  timestamp: preciseTimestamp,
  data: z.record(z.string(), z.unknown()),
});

export const CallListItemSchema = CallSchema.extend({
  transcript: z.array(TranscriptEntrySchema).optional().describe('as in GET /api/calls/{call_id}; left out with include_transcript=false'),
});

export const CallListSchema = z.object({ calls: z.array(CallListItemSchema), total: z.number().int() });
