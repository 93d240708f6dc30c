/**
 * What a call's media pipeline (call-media.ts) is built from, and what it reports when its stream
 * closes.
 */
import type { WorkflowHandle, AsyncCompletionClient } from '@temporalio/client';
import type OpenAI from 'openai';
import type { AudioFormat } from '../../audio/format';
import type { Config } from '../../config';
import type { Logger } from '../../shared/logger';
import type { GatewayEvent, MediaConnectedSignal, VoiceConfig } from '../../../workflows/call-definitions';
import type { RunJournal } from '../workflow-link/run-journal';
import type { TtsSpares } from '../speech/tts-spares';
import type { SpeechProbability } from '../vad/silero';
import type { TemporalReachability } from '../workflow-link/workflow-outbox';
import type { KnowledgeRetriever } from '../../knowledge/retrieval';

/** How the call talks to its provider socket (the vendor's framing lives in the stream's codec). */
export interface StreamOutput {
  media(frame: Buffer): void;
  mark(name: string): void;
  clear(): void;
  close(code: number, reason: string): void;
}

export interface CallMediaOptions {
  callId: string;
  streamSid: string;
  /** The stream's audio format, both ways. */
  format: AudioFormat;
  /** Length of each outgoing media frame (default 20 ms). */
  frameMs?: number;
  voice: VoiceConfig;
  config: Config;
  workflow: WorkflowHandle;
  /** Sends `mediaConnected` (see WorkflowReportsOptions.sendConnected). */
  sendConnected?: (signal: MediaConnectedSignal) => Promise<unknown>;
  /** Completes the activities run for the call (asynchronously, through its outbox). */
  activities: AsyncCompletionClient;
  /** Per-call speech model streams at the stream's rate (the gateway's shared, batched Silero). */
  vad: { createStream(sampleRate: 8000 | 16000): SpeechProbability };
  out: StreamOutput;
  log: Logger;
  /** performance.now() when the stream started: time 0 of the recording and media timestamps. */
  startPerf: number;
  /** The gateway's ready TTS sessions (see tts-spares.ts). */
  ttsSpares?: TtsSpares;
  /** Whether Temporal takes the gateway's reports (shared by its calls). */
  reachability?: TemporalReachability;
  /** The LLM client of a provider, for replies the gateway gives alone while Temporal is away. */
  llm?: (provider: string) => OpenAI;
  /** The knowledge-base search of `auto` turns (docs/knowledge-base.md); none without a database. */
  knowledge?: KnowledgeRetriever;
  /** Whether an armed turn may carry on as a turn run now (default: always). */
  runsTurns?: () => boolean;
  /** Where a run's unreported turns are kept (none without a database). */
  runJournal?: RunJournal;
  /**
   * A stream re-attached after a transfer that did not reach anyone: recorded to its own file
   * (`<call id>-<n>.wav`) so the first part of the call is kept.
   */
  recordingPart?: number;
}

/**
 * `hangup`: the provider ended the stream; `closed`: the platform did; `shutdown`: this gateway
 * stopped; `failed`: the call cannot go on (its STT is gone for good); `drained`: this gateway's
 * drain deadline passed and it said goodbye; `voicemail`: a machine answered (voicemail-watch.ts).
 */
export type CloseReason = 'hangup' | 'closed' | 'shutdown' | 'failed' | 'drained' | 'voicemail';

export interface MediaClosure {
  reason: CloseReason;
  /** Events reported after the last activity result (e.g. tts_stopped of speech cut by the hang-up). */
  events: GatewayEvent[];
  /** With `failed`: why, and which part failed (`stt`). */
  error?: { message: string; context: string };
  /** With `drained`: what the caller heard of the goodbye; with `voicemail`: the message left. */
  goodbye?: string;
  /** The armed turn the stream closed with, untaken, that only this result completes. */
  releasedArm?: string;
}
