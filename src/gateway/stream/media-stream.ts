/**
 * One telephony media WebSocket, for any vendor: the vendor's codec turns its messages into
 * neutral events, and this class authenticates the stream, looks the call up, hands it to the
 * call's CallMedia and guards the socket. Everything arriving here is untrusted.
 *
 * What closes a socket (and only that socket): an unauthenticated stream (a bad or missing token,
 * no start within START_TIMEOUT_MS, or anything malformed before its start authenticated it), a
 * stream for an unknown, finished or already streaming call, a stream the codec refuses
 * (unsupported audio format), a flood (more than MAX_MESSAGES_PER_SEC sustained), a peer that
 * stops reading. On an authenticated stream everything else — malformed JSON, a message for
 * another stream, a mark echo missing a field, a binary frame where the vendor sends text, an event nobody knows — is logged
 * (the first few per stream), counted in the gateway's stream statistics and ignored: one bad
 * message never hangs up a live call.
 */
import type { Client } from '@temporalio/client';
import type OpenAI from 'openai';
import WebSocket from 'ws';
import { STREAM_SAMPLE_RATES, describeFormat, type AudioFormat } from '../../audio/format';
import type { Config } from '../../config';
import type { MediaStreamCodec, MediaStreamProtocol, StreamStart, StreamUpgrade } from '../../providers/telephony/stream';
import type { Logger } from '../../shared/logger';
import { callWorkflowId, voiceConfigQuery, type VoiceConfig } from '../../../workflows/call-definitions';
import { voiceSetupFromMemo } from '../../../workflows/voice-setup';
import { CallMedia } from '../call/call-media';
import type { StreamOutput } from '../call/call-media-options';
import { epochMs } from '../workflow-link/events';
import { ANSWERED_WRITE_WAIT_MS, type AnsweredCalls } from './answered-calls';
import type { CallRegistry } from '../call/call-registry';
import type { RunJournal } from '../workflow-link/run-journal';
import type { StreamStats } from './stream-stats';
import { verifyStreamToken } from './stream-token';
import type { TtsSpares } from '../speech/tts-spares';
import type { TemporalReachability } from '../workflow-link/workflow-outbox';
import { connectedWithStart } from '../workflow-link/workflow-reports';
import type { SileroBatcher } from '../vad/silero-batch';
import type { KnowledgeRetriever } from '../../knowledge/retrieval';

/** Close codes (RFC 6455) used when refusing a stream. */
export const CLOSE_POLICY = 1008;
export const CLOSE_INTERNAL = 1011;

/** A stream that has not sent an authenticated start this long after connecting is dropped. */
export const START_TIMEOUT_MS = 10_000;
/** Twilio sends 50 media messages a second plus marks; this allows bursts but not floods. */
export const MAX_MESSAGES_PER_SEC = 200;
export const MESSAGE_BURST = 400;
/** Ignored messages logged per stream (all are counted). */
const LOGGED_PER_STREAM = 5;
/** Caller audio arriving while the call is being set up is kept (at most this much). */
const MAX_EARLY_AUDIO_MS = 5000;
/** A peer not reading what we send (over this much queued) is a dead connection. */
const MAX_BUFFERED_BYTES = 1 << 20;
/** Workflow look-ups at stream start must not hold a call forever. */
const START_LOOKUP_TIMEOUT_MS = 5000;
const CALL_ID = /^[A-Za-z0-9_-]{1,128}$/;

export interface StreamContext {
  calls: CallRegistry;
  /** Signs media stream tokens (the platform's JWT secret). */
  streamSecret: string;
  temporal: Client;
  config: Config;
  /** This gateway's task queue, handed to the workflow in `mediaConnected`. */
  taskQueue: string;
  vad: SileroBatcher;
  /** Connected TTS sessions kept ready per voice. */
  ttsSpares?: TtsSpares;
  /** Whether Temporal takes this gateway's reports (shared by its calls' outboxes). */
  reachability?: TemporalReachability;
  /** Writes `in_progress` to the call's row when its stream starts (none without a database). */
  answered?: Pick<AnsweredCalls, 'mark'>;
  /** LLM clients by provider (replies given alone while Temporal is away). */
  llm?: (provider: string) => OpenAI;
  /** The knowledge-base search of `auto` turns (none without a database). */
  knowledge?: KnowledgeRetriever;
  /** Whether armed turns may carry on as turn runs now (the gateway's load, GATEWAY_TURN_RUN_LOAD). */
  runsTurns?: () => boolean;
  /** Where turn runs keep their unreported turns (none without a database). */
  runJournal?: RunJournal;
  stats: StreamStats;
  log: Logger;
}

type Phase = 'connected' | 'starting' | 'live' | 'closed';

export function acceptMediaStream(ws: WebSocket, protocol: MediaStreamProtocol, upgrade: StreamUpgrade, ctx: StreamContext): void {
  new MediaStream(ws, protocol, upgrade, ctx);
}

/** The stream's format is one the pipeline runs: μ-law 8 kHz or 16-bit PCM at 8 or 16 kHz. */
export function isSupportedStreamFormat(format: AudioFormat): boolean {
  const rateOk = (STREAM_SAMPLE_RATES as readonly number[]).includes(format.sampleRate);
  return rateOk && (format.encoding === 'pcm16' || format.sampleRate === 8000);
}

class MediaStream {
  private phase: Phase = 'connected';
  private readonly codec: MediaStreamCodec;
  private callId = '';
  private streamId = '';
  private sampleRate = 8000;
  private call: CallMedia | null = null;
  private early: Array<{ pcm: Int16Array; timestampMs: number | null; arrivedPerf: number }> = [];
  private earlySamples = 0;
  private tokens = MESSAGE_BURST;
  private lastRefill = performance.now();
  private logged = 0;
  private startTimer: NodeJS.Timeout | undefined;
  /** The call's stream ended here before: accepted only if its workflow awaits a new one (transfer). */
  private reattach = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly protocol: MediaStreamProtocol,
    upgrade: StreamUpgrade,
    private readonly ctx: StreamContext,
  ) {
    this.codec = protocol.open(upgrade);
    this.startTimer = setTimeout(() => this.reject(CLOSE_POLICY, 'no authenticated start message'), START_TIMEOUT_MS);
    ws.on('message', (data, isBinary) => this.guard('message', () => this.onMessage(data as Buffer, isBinary)));
    ws.on('close', () => this.guard('close', () => this.onClose()));
    ws.on('error', (err) => this.ctx.log.warn('media stream socket error', { provider: protocol.name, callId: this.callId || undefined, error: err.message }));
    ctx.stats.opened(protocol.name);
  }

  private guard(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.ctx.log.error(`media stream ${what} handler failed`, { callId: this.callId || undefined, error: (err as Error).message });
      this.reject(CLOSE_INTERNAL, 'internal error');
    }
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.phase === 'closed') return;
    // Caller audio is timed from here: any queueing after this counts in the call's latency.
    const arrivedPerf = performance.now();
    if (!this.takeToken()) return this.reject(CLOSE_POLICY, 'message flood');
    if (data.length > this.protocol.maxMessageBytes) return this.ignore('invalid', `message of ${data.length} bytes`);
    const event = this.codec.decode(data, isBinary);
    switch (event.type) {
      case 'connected':
        return;
      case 'start':
        if (this.phase !== 'connected') return this.ignore('invalid', 'a second start');
        return this.begin(event.start);
      case 'invalid':
        return this.ignore('invalid', event.error);
      case 'ignored':
        return this.ignore('ignored', event.what);
      case 'refused':
        return this.reject(CLOSE_POLICY, event.reason);
    }
    if (this.phase === 'connected') return this.ignore('invalid', `${event.type} before start`);
    switch (event.type) {
      case 'audio':
        if (this.call) this.call.onCallerAudio(event.pcm, event.timestampMs, arrivedPerf);
        else this.keepEarly(event.pcm, event.timestampMs, arrivedPerf);
        return;
      case 'mark':
        this.call?.speech.playback.onMark(event.name);
        return;
      case 'dtmf':
        this.call?.onDtmf(event.digit);
        return;
      case 'cleared':
        return;
      case 'stop':
        this.hangup();
        return;
    }
  }

  private ignore(kind: 'invalid' | 'ignored', what: string): void {
    // Nothing to protect yet, and nobody we know: garbage before the start authenticated is not a call.
    if (kind === 'invalid' && this.phase === 'connected') return this.reject(CLOSE_POLICY, `before an authenticated start: ${what}`);
    this.ctx.stats.message(this.protocol.name, kind);
    if (this.logged++ < LOGGED_PER_STREAM) {
      this.ctx.log.warn(`${kind} media stream message ignored`, { provider: this.protocol.name, callId: this.callId || undefined, what: what.slice(0, 200) });
    }
  }

  private keepEarly(pcm: Int16Array, timestampMs: number | null, arrivedPerf: number): void {
    this.early.push({ pcm: pcm.slice(), timestampMs, arrivedPerf });
    this.earlySamples += pcm.length;
    while (this.early.length > 1 && this.earlySamples > (MAX_EARLY_AUDIO_MS / 1000) * this.sampleRate) this.earlySamples -= this.early.shift()!.pcm.length;
  }

  /** Authenticates the stream, looks the call up, sets its media up and tells the workflow. */
  private begin(start: StreamStart): void {
    this.phase = 'starting';
    this.streamId = start.streamId;
    this.sampleRate = start.format.sampleRate;
    if (!isSupportedStreamFormat(start.format)) return this.reject(CLOSE_POLICY, `unsupported media format ${describeFormat(start.format)}`);
    const callId = start.callId ?? '';
    if (!CALL_ID.test(callId)) return this.reject(CLOSE_POLICY, 'invalid stream token');
    const verdict = this.codec.authenticate
      ? this.codec.authenticate(this.ctx.streamSecret, callId, start.token, Date.now())
      : verifyStreamToken(this.ctx.streamSecret, callId, start.token)
        ? ({ ok: true } as const)
        : ({ ok: false, reason: 'invalid stream token' } as const);
    if (!verdict.ok) return this.reject(CLOSE_POLICY, verdict.reason);
    const reserved = this.ctx.calls.reserve(callId, this.protocol.name, true);
    if (!reserved) return this.reject(CLOSE_POLICY, 'call already streaming or finished');
    this.callId = callId;
    this.reattach = reserved === 'reattach';
    const startPerf = performance.now();
    // Written while the workflow is looked up: the call reads in_progress before its greeting plays.
    const answered = this.ctx.answered?.mark(callId, epochMs(startPerf));
    this.setUp(start, startPerf, answered).catch((err: Error) => {
      this.ctx.calls.release(callId);
      this.reject(CLOSE_POLICY, err.message);
    });
  }

  private async setUp(start: StreamStart, startPerf: number, answered?: Promise<void>): Promise<void> {
    const callId = this.callId;
    const workflow = this.ctx.temporal.workflow.getHandle(callWorkflowId(callId));
    let voice: VoiceConfig;
    let started = { workflowType: 'callWorkflow', workflowId: workflow.workflowId, taskQueue: this.ctx.config.TEMPORAL_TASK_QUEUE };
    try {
      // The server answers describe; the voiceConfig query needs a call worker, so it is only asked
      // for calls started without the voice setup in their memo.
      voice = await withTimeout(
        (async () => {
          const description = await workflow.describe();
          if (description.status.name !== 'RUNNING') throw new Error(`call is ${description.status.name.toLowerCase()}`);
          started = { workflowType: description.type, workflowId: workflow.workflowId, taskQueue: description.taskQueue };
          // A second stream of a call is the workflow's to accept: only a transfer that came back awaits one.
          if (this.reattach) {
            const current = await workflow.query(voiceConfigQuery);
            if (!current.awaitingStream) throw new Error('call already streaming or finished');
            return current;
          }
          return voiceSetupFromMemo(description.memo) ?? (await workflow.query(voiceConfigQuery));
        })(),
        START_LOOKUP_TIMEOUT_MS,
        'call workflow did not answer',
      );
    } catch (err) {
      const e = err as Error;
      throw new Error(e.name === 'WorkflowNotFoundError' ? 'unknown call' : `call lookup failed: ${e.message}`);
    }
    if (answered) await withTimeout(answered, ANSWERED_WRITE_WAIT_MS, 'slow').catch(() => undefined);
    if (this.phase !== 'starting') {
      this.ctx.calls.release(callId); // the socket closed meanwhile
      return;
    }
    if (this.startTimer) clearTimeout(this.startTimer);
    const call = new CallMedia({
      callId,
      streamSid: this.streamId,
      format: start.format,
      frameMs: start.frameMs,
      voice,
      config: this.ctx.config,
      workflow,
      sendConnected: connectedWithStart(this.ctx.temporal, started),
      activities: this.ctx.temporal.activity,
      vad: this.ctx.vad,
      out: this.output(),
      log: this.ctx.log,
      startPerf,
      ttsSpares: this.ctx.ttsSpares,
      reachability: this.ctx.reachability,
      llm: this.ctx.llm,
      ...(this.ctx.knowledge ? { knowledge: this.ctx.knowledge } : {}),
      ...(this.ctx.runsTurns ? { runsTurns: this.ctx.runsTurns } : {}),
      ...(this.ctx.runJournal ? { runJournal: this.ctx.runJournal } : {}),
      ...(this.reattach ? { recordingPart: this.ctx.calls.streamNumber(callId) } : {}),
    });
    this.call = call;
    this.phase = 'live';
    this.ctx.calls.add(call);
    // The greeting is synthesised now, not a workflow round trip later when its speak arrives.
    if (voice.greeting && !this.reattach) call.speech.startGreeting(voice.greeting);
    for (const f of this.early.splice(0)) call.onCallerAudio(f.pcm, f.timestampMs, f.arrivedPerf);
    this.ctx.log.info('media stream started', { callId, provider: this.protocol.name, streamId: this.streamId, format: describeFormat(start.format) });
    // Queued first in the call's outbox: retried while Temporal is away; a workflow that is gone
    // closes the stream (the outbox's orphaned()).
    call.reports.connected({
      gatewayTaskQueue: this.ctx.taskQueue,
      streamSid: this.streamId,
      recordingPath: call.recordingPath,
      connectedAtMs: epochMs(startPerf),
    });
  }

  private output(): StreamOutput {
    const send = (message: string | Buffer) => {
      if (this.ws.readyState !== WebSocket.OPEN) return;
      if (this.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
        this.reject(CLOSE_POLICY, 'peer is not reading');
        return;
      }
      this.ws.send(message);
    };
    return {
      media: (frame) => send(this.codec.media(frame)),
      mark: (name) => send(this.codec.mark(name)),
      clear: () => send(this.codec.clear()),
      close: (code, reason) => {
        if (this.phase !== 'closed') this.phase = 'closed';
        if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(code, reason.slice(0, 120));
      },
    };
  }

  /** The provider ended the stream (`stop`, or the socket closed). */
  private hangup(): void {
    if (this.call) void this.call.close('hangup');
    else this.phase = 'closed';
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1000);
  }

  private onClose(): void {
    if (this.startTimer) clearTimeout(this.startTimer);
    if (this.call) void this.call.close('hangup');
    this.phase = 'closed';
  }

  private reject(code: number, reason: string): void {
    if (this.phase === 'closed') return;
    this.ctx.stats.rejected(this.protocol.name, reason);
    this.ctx.log.warn('closing media stream', { provider: this.protocol.name, callId: this.callId || undefined, reason });
    if (this.startTimer) clearTimeout(this.startTimer);
    // For the workflow this is the stream ending without the platform asking: like a hang-up.
    if (this.call) void this.call.close('hangup', code, reason);
    this.phase = 'closed';
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(code, reason.slice(0, 120));
  }

  /** Token bucket: MESSAGE_BURST messages, refilled at MAX_MESSAGES_PER_SEC. */
  private takeToken(): boolean {
    const now = performance.now();
    this.tokens = Math.min(MESSAGE_BURST, this.tokens + ((now - this.lastRefill) / 1000) * MAX_MESSAGES_PER_SEC);
    this.lastRefill = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
