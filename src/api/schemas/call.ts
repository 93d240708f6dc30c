/** Response shapes of calls and their events (OpenAPI documentation of the call serializers). */
import { z } from 'zod';
import { ANSWERED_BY } from '../../voicemail/settings';
import { AnalysisStatus, CallDirection, CallStatus, EndReason, PreciseTimestamp, SpeakerRole, TelephonyProviderName, Timestamp } from './common';

const timestamp = Timestamp;
const preciseTimestamp = PreciseTimestamp;

export const CallAnalysisSchema = z
  .object({
    summary: z.string().nullable().describe('null when the analysis failed or was skipped'),
    fields: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).describe("the agent's fields; null for what the call did not establish"),
    success: z.boolean().nullable().describe('the verdict on the success criteria; null without criteria (or no verdict)'),
    success_reason: z.string().nullable().describe('one sentence'),
    model: z.string().nullable(),
    completed_at: timestamp,
    error: z.string().nullable().describe('why the analysis failed (analysis_status failed)'),
    skipped_reason: z.string().nullable().describe('why no analysis ran (analysis_status skipped), e.g. "the caller did not speak"'),
  })
  .meta({ id: 'CallAnalysis', description: 'post-call analysis (docs/post-call-analysis.md)' });

export const KnowledgeSourceSchema = z
  .object({
    chunk_id: z.string(),
    knowledge_base_id: z.string(),
    document: z.string().describe("the document's name (a URL document: its URL)"),
    heading: z.string().describe('the heading path of the chunk, e.g. "Prices > Roaming"'),
    score: z.number().describe('relevance 0–1, as the search ranked it'),
  })
  .meta({ id: 'KnowledgeSource', description: 'a knowledge-base passage an agent reply was given (docs/knowledge-base.md#traceability)' });

export const TranscriptEntrySchema = z
  .object({
    role: SpeakerRole,
    text: z.string(),
    timestamp: preciseTimestamp,
    sources: z
      .array(KnowledgeSourceSchema)
      .optional()
      .describe("agent replies given knowledge-base passages: the chunks of the knowledge_retrieved events of the reply's turn since the agent's previous reply, in the order the LLM was given them; absent on a reply given none"),
  })
  .meta({ id: 'TranscriptEntry' });

/**
 * A call as every operation answers it: the list (its transcript left out with
 * include_transcript=false), the detail, and the call-control operations.
 */
export const CallSchema = z.object({
  id: z.uuid(),
  agent_id: z.uuid().nullable().describe('null once the agent has been deleted (the call is kept)'),
  phone_number: z.string().describe('E.164'),
  agent_name: z.string(),
  direction: CallDirection,
  channel: z
    .enum(['voice', 'web', 'text', 'manual'])
    .meta({ id: 'CallChannel' })
    .describe('how the audio reaches the platform: a phone stream, a browser (POST /api/calls/web), the text test channel, or the client (POST /api/calls/start)'),
  status: CallStatus,
  start_time: timestamp.nullable().describe('when the call connected'),
  end_time: timestamp.nullable(),
  duration: z.number().nullable().describe('seconds'),
  recording_path: z.string().nullable().describe('where the WAV recording is stored, if any (its first part)'),
  recording_parts: z
    .array(z.string())
    .describe('every file of the recording, in order: a call whose stream came back after a transfer, or a warm transfer\'s briefing, has several (recording_url serves them joined); empty without a recording'),
  recording_url: z.string().nullable().describe('API path streaming the recording (GET /api/recordings/{call_id})'),
  end_reason: EndReason.nullable(),
  answered_by: z
    .enum(ANSWERED_BY)
    .meta({ id: 'AnsweredBy' })
    .nullable()
    .describe('outbound calls whose agent detects voicemail: who answered (docs/phone-operations.md#voicemail-on-outbound-calls); null otherwise'),
  transfer_summary: z
    .string()
    .nullable()
    .describe('a warm transfer: the summary of the call the agent gave the person it briefed (docs/phone-operations.md#warm-transfer); null otherwise'),
  llm_prompt_tokens: z.number().int(),
  llm_completion_tokens: z.number().int(),
  tts_characters: z.number().int(),
  analysis_status: AnalysisStatus
    .nullable()
    .describe('post-call analysis: null when the agent had none; pending while it runs (also during a re-run)'),
  analysis: CallAnalysisSchema.nullable().describe('null until the first analysis has finished'),
  analysis_prompt_tokens: z.number().int().describe('LLM tokens of the analyses (re-runs included), apart from the conversation'),
  analysis_completion_tokens: z.number().int(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: timestamp,
  context: z.record(z.string(), z.union([z.string(), z.number()])).describe('the custom parameters of the call'),
  agent_version: z.number().int().nullable().describe('version of the agent configuration the call ran on'),
  current_node_key: z.string().nullable().describe('flow agents: the node the conversation is (or ended) in'),
  provider: TelephonyProviderName.nullable().describe('telephony provider; null for web, text and client-managed calls'),
  provider_call_sid: z.string().nullable().describe("the provider's own call identifier"),
  updated_at: timestamp,
  trace_id: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .nullable()
    .describe("the call's OpenTelemetry trace id (docs/tracing.md), to open it in Jaeger, Tempo or Honeycomb; null when tracing was off as the call started"),
  transcript: z
    .array(TranscriptEntrySchema)
    .optional()
    .describe('user_spoke and agent_spoke events in order; always in GET /api/calls/{call_id}, in the list unless include_transcript=false'),
}).meta({ id: 'Call' });

export const CallEventSchema = z.object({
  id: z.number().int().describe('sequence number within the call'),
  call_id: z.uuid(),
  event_type: z.string().describe('one of EventType; unknown types may be added, so a client should keep what it does not know'),
  timestamp: preciseTimestamp,
  data: z.record(z.string(), z.unknown()),
}).meta({ id: 'CallEvent' });

export const CallListSchema = z.object({
  calls: z.array(CallSchema),
  total: z.number().int().describe('matching calls; exact up to 10,000, past that 10,000 with total_exact false (unless exact_total=true)'),
  total_exact: z.boolean().describe('false when the count stopped at 10,000: there are more matching calls'),
}).meta({ id: 'CallList' });
