/**
 * The call workflow's messages with the media gateway that holds a voice call's audio: the
 * signals and query it uses, the activities it runs on its own task queue and their shapes, and
 * the timeouts around it. Part of the workflow's interface (call-definitions.ts re-exports it);
 * types and message definitions only (workflow-safe). Signal and query names are what recorded
 * histories replay by: never rename them.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { AnsweredByVerdict, VoicemailPlan } from '../src/voicemail/settings';
import type { AgentSnapshot, EndReason, LlmTurnRequest, LlmTurnResult } from './call-definitions';

// A voice call's audio lives on one media gateway instance. When the provider's stream connects,
// that gateway signals `mediaConnected` with the task queue of its own Temporal worker; from then
// on the workflow runs the work that must happen next to the socket (speaking, LLM→TTS turns,
// hanging up) as activities on that queue. `mediaSession` runs for the whole call and heartbeats,
// so a dead gateway is noticed within seconds and the call ends as failed.

/** Something the gateway observed, recorded by the workflow as a call event at `timestampMs`. */
export interface GatewayEvent {
  /** `dtmf`: a caller keypress `{digit}` (the gathered input follows as an utterance). */
  type: 'tts_started' | 'tts_stopped' | 'tts_usage' | 'interruption' | 'agent_resumed' | 'ttfb_metric' | 'error' | 'dtmf' | 'voicemail_message_left';
  timestampMs: number;
  data: Record<string, unknown>;
}

export interface MediaConnectedSignal {
  gatewayTaskQueue: string;
  streamSid: string;
  /** Where the gateway writes the call's WAV (absolute path). */
  recordingPath: string | null;
  /** When the stream started (epoch ms at the gateway): the greeting may begin right then. */
  connectedAtMs?: number;
  events?: GatewayEvent[];
}

/** What the gateway needs to run a call's audio pipeline, read once when the stream connects. */
export interface VoiceConfig {
  agentName: string;
  stt: AgentSnapshot['stt'];
  tts: AgentSnapshot['tts'];
  pipeline: AgentSnapshot['pipeline'];
  /**
   * The greeting the workflow will ask for (its `speak` carries the same id and text): the
   * gateway may start synthesising it as soon as the stream connects. Null when none is due.
   */
  greeting?: { utteranceId: string; text: string } | null;
  /**
   * A transfer is under way or came back: the call's stream ended for the hand-over and a new one
   * for the same call is expected (the gateway accepts it although the call's stream closed).
   */
  awaitingStream?: boolean;
  /** Outbound calls whose agent detects voicemail: what to do on a machine. Absent: no detection. */
  voicemail?: VoicemailPlan | null;
}

export interface SpeakRequest {
  callId: string;
  /** Unique per call; names the TTS utterance and its events. */
  utteranceId: string;
  text: string;
}

/** Returned once the audio has finished playing, or was cut off by the caller (barge-in). */
export interface SpeechOutcome {
  /** The part of the text the caller actually heard (all of it unless interrupted). */
  heardText: string;
  interrupted: boolean;
  /** Characters sent to TTS. */
  characters: number;
  /** Gateway events since the last report (tts_started/stopped, tts_usage, interruption, ttfb…). */
  events: GatewayEvent[];
}

export interface VoiceTurnRequest extends LlmTurnRequest {
  utteranceId: string;
}

/**
 * An LLM turn streamed into TTS sentence by sentence. Returns when the reply has finished playing
 * (or was interrupted); when the LLM asked for tools it returns as soon as the LLM is done, and any
 * text before the tool calls keeps playing while the tools run.
 */
export interface VoiceTurnResult extends LlmTurnResult, SpeechOutcome {}

/**
 * The next turn, decided in advance: everything of the LLM request except the caller's words.
 * The gateway holds it until the caller's next utterance, appends the utterance as a user message
 * and starts the LLM at once — no workflow round trip between the caller's last word and the LLM.
 */
export interface ArmedTurnRequest extends VoiceTurnRequest {
  /** Names this arming (disarmTurn refers to it). */
  armId: string;
  /**
   * The last utterance number the workflow has received. If the gateway has reported a later
   * one (a signal still in flight), the plan is stale: the utterance is returned without an LLM.
   */
  afterSeq: number;
  /**
   * The plan assumes the caller heard this agent utterance whole (the greeting, armed while it
   * plays). If it was cut off or is still playing when the caller's utterance completes, the plan
   * is stale: the utterance is returned without an LLM.
   */
  afterSpeech?: string;
  /**
   * If the stream closes with this turn untaken, the media session's result says so (`releasedArm`)
   * and the turn gets no completion of its own: one workflow task fewer at every call's end.
   * Without it, the gateway completes the turn with no utterance.
   */
  releasedWithMedia?: boolean;
  /**
   * A turn run: after a plain reply (no tool call) the gateway arms itself with the next turn —
   * this request, the caller's words and the reply they heard appended, as the workflow would —
   * and reports the turns together (`earlier`), so a call's plain turns cost one workflow task
   * per run instead of one each. The run ends at a reply that asks for tools, a failure, a
   * backchannel candidate or stale plan, `turns` turns, `withinMs` after its first turn was
   * answered, `idleInMs` after this request (the workflow's idle deadline), a disarm, or the
   * stream closing. Absent: one turn per armed activity (the call workflow always sends it).
   */
  carryOn?: { turns: number; withinMs: number; idleInMs: number; minWords: number };
}

/** A turn a run answered before the one its result ends with (ArmedTurnRequest.carryOn). */
export interface RunTurn {
  utterance: NonNullable<ArmedTurnResult['utterance']>;
  thought: VoiceTurnResult;
  /** When its reply had played (epoch ms): the workflow records the reply's events at this time. */
  answeredAtMs: number;
}

export interface ArmedTurnResult {
  /** The caller's utterance; null when disarmed or the stream closed before anyone spoke. */
  utterance: { text: string; duringAgentSpeech: boolean; seq: number; events: GatewayEvent[]; timestampMs: number } | null;
  /** The reply, when the gateway started the LLM for it (not for a backchannel or a stale plan). */
  thought: VoiceTurnResult | null;
  /** Why the reply failed (error type as the voiceTurn activity would have thrown it). */
  failure: { type: string; message: string } | null;
  /** Gateway events not carried by the utterance or the reply. */
  events: GatewayEvent[];
  /** A turn run's turns before `utterance`, oldest first (absent or empty: none). */
  earlier?: RunTurn[];
}

export interface SendDtmfRequest {
  callId: string;
  /** Unique per call, like a speak request's. */
  utteranceId: string;
  /** 0–9, *, #, A–D; `w` pauses half a second. */
  digits: string;
}

export interface SendDtmfResult {
  /** How the keys went out: `inband` (tones in the call's audio). */
  method: 'inband';
  playedMs: number;
  events: GatewayEvent[];
}

export interface MediaSessionResult {
  /**
   * `hangup`: the caller/provider ended the stream; `closed`: the platform closed it; `failed`:
   * the gateway gave up on the call (its STT stayed down), `error` says why; `drained`: the
   * gateway was draining and its deadline passed: it said `goodbye` and closed the stream;
   * `voicemail`: an answering machine answered; the gateway hung up or left its message (`goodbye`).
   */
  reason: 'hangup' | 'closed' | 'failed' | 'drained' | 'voicemail';
  events: GatewayEvent[];
  error?: { message: string; context: string };
  /** With `drained`: what the caller heard of the gateway's goodbye; with `voicemail`: the message left. */
  goodbye?: string;
  /** The armed turn (`releasedWithMedia`) the stream closed with, untaken: it completes no other way. */
  releasedArm?: string;
}

export const mediaConnectedSignal = defineSignal<[MediaConnectedSignal]>('mediaConnected');

/**
 * The workers' watchdog found the call's gateway without presence (src/calls/gateway-watchdog.ts):
 * the workflow probes the gateway and ends the call only if the gateway does not answer.
 */
export interface GatewayLostSignal {
  gatewayTaskQueue: string;
  reason: string;
}
export const gatewayLostSignal = defineSignal<[GatewayLostSignal]>('gatewayLost');
export const voiceConfigQuery = defineQuery<VoiceConfig>('voiceConfig');

/** Activities each media gateway instance runs on its own task queue, for the calls it holds. */
export interface GatewayActivities {
  speak(req: SpeakRequest): Promise<SpeechOutcome>;
  voiceTurn(req: VoiceTurnRequest): Promise<VoiceTurnResult>;
  /** Presses keys on the line (send_dtmf): DTMF tones in the call's audio; resolves once played. */
  sendDtmf(req: SendDtmfRequest): Promise<SendDtmfResult>;
  /** Holds the next turn until the caller speaks (or disarmTurn / the stream closes). */
  armedTurn(req: ArmedTurnRequest): Promise<ArmedTurnResult>;
  /** Takes an armed turn back unless an utterance already took it (its result then says so). */
  disarmTurn(req: { callId: string; armId: string }): Promise<void>;
  /** Runs (heartbeating) from stream connect until the stream closes. */
  mediaSession(req: { callId: string }): Promise<MediaSessionResult>;
  /** Lets queued agent audio finish (bounded), then closes the provider stream, ending the call. */
  endMedia(req: { callId: string; reason: EndReason }): Promise<void>;
  /** The vendor's AMD found a machine: stop speaking, then hang up or leave the message (voicemail-action.ts). */
  voicemail(req: { callId: string; verdict: AnsweredByVerdict }): Promise<void>;
  /** Is the gateway alive and does it still hold the call? (asked when the watchdog says it is lost) */
  probe(req: { callId: string }): Promise<{ holds: boolean }>;
}

/**
 * The heartbeat timeout of the stand-in call workflow of the gateway tests
 * (test/support/gateway-probe-workflow.ts); the call workflow sends no heartbeats (presence).
 */
export const GATEWAY_HEARTBEAT_TIMEOUT_SECS = 5;
/**
 * A gateway asked whether it lives must answer within this: it polls its own task queue all the
 * time, so a live one picks the probe up in milliseconds (seconds right after a Temporal restart).
 */
export const GATEWAY_PROBE_TIMEOUT_SECS = 5;
