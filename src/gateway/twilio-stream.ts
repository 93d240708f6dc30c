/**
 * One Twilio Media Streams WebSocket: protocol checks, stream authentication and the hand-over
 * to the call's CallMedia. Everything arriving here is untrusted. Anything wrong with one
 * socket — malformed JSON, a message before `start` or for another stream, a bad token, a call
 * that is unknown, not running or already streaming, binary frames, a flood of messages — is
 * logged and closes that socket only; no handler can throw into the server.
 *
 * Events Twilio may add in future versions are logged once and ignored rather than closing the
 * call (the protocol has grown new events before).
 */
import type { Client } from '@temporalio/client';
import WebSocket from 'ws';
import type { Config } from '../config';
import { clearMessage, markMessage, parseTwilioStreamMessage, type TwilioStartMessage } from '../providers/telephony/twilio/media-messages';
import type { Logger } from '../shared/logger';
import { callWorkflowId, mediaConnectedSignal, voiceConfigQuery, type VoiceConfig } from '../../workflows/call-definitions';
import { CallMedia, type StreamOutput } from './call-media';
import type { CallRegistry } from './call-registry';
import { verifyStreamToken } from './stream-token';
import type { SileroBatcher } from './vad/silero-batch';

/** Close codes (RFC 6455) used when refusing a stream. */
export const CLOSE_POLICY = 1008;
export const CLOSE_UNSUPPORTED = 1003;
export const CLOSE_INVALID = 1007;
export const CLOSE_INTERNAL = 1011;

/** A stream that has not sent `start` this long after connecting is dropped. */
export const START_TIMEOUT_MS = 10_000;
/** Twilio sends 50 media messages a second plus marks; this allows bursts but not floods. */
export const MAX_MESSAGES_PER_SEC = 200;
export const MESSAGE_BURST = 400;
/** Media arriving while the call is being set up is kept (at most this many frames, ~5 s). */
const MAX_EARLY_FRAMES = 250;
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
  log: Logger;
}

type Phase = 'connected' | 'starting' | 'live' | 'closed';

export function acceptTwilioStream(ws: WebSocket, ctx: StreamContext, remote: string): void {
  new TwilioStream(ws, ctx, remote);
}

class TwilioStream {
  private phase: Phase = 'connected';
  private streamSid = '';
  private callId = '';
  private call: CallMedia | null = null;
  private early: Array<{ payload: string; timestampMs: number }> = [];
  private tokens = MESSAGE_BURST;
  private lastRefill = performance.now();
  private unknownLogged = false;
  private startTimer: NodeJS.Timeout | undefined;
  private mediaPrefix = '';

  constructor(
    private readonly ws: WebSocket,
    private readonly ctx: StreamContext,
    private readonly remote: string,
  ) {
    this.startTimer = setTimeout(() => this.reject(CLOSE_POLICY, 'no start message'), START_TIMEOUT_MS);
    ws.on('message', (data, isBinary) => this.guard('message', () => this.onMessage(data as Buffer, isBinary)));
    ws.on('close', () => this.guard('close', () => this.onClose()));
    ws.on('error', (err) => this.ctx.log.warn('media stream socket error', { remote: this.remote, callId: this.callId || undefined, error: err.message }));
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
    if (!this.takeToken()) return this.reject(CLOSE_POLICY, 'message flood');
    if (isBinary) return this.reject(CLOSE_UNSUPPORTED, 'binary frames are not Media Streams messages');
    const parsed = parseTwilioStreamMessage(data);
    if (!parsed.ok) {
      if (parsed.code === 'unknown_event') {
        if (!this.unknownLogged) this.ctx.log.warn('ignoring unknown media stream event', { callId: this.callId || undefined, error: parsed.error });
        this.unknownLogged = true;
        return;
      }
      return this.reject(parsed.code === 'invalid_json' ? CLOSE_INVALID : CLOSE_POLICY, `${parsed.code}: ${parsed.error}`);
    }
    const msg = parsed.message;
    if (msg.event === 'connected') {
      if (this.phase !== 'connected') this.reject(CLOSE_POLICY, 'connected after start');
      return;
    }
    if (msg.event === 'start') {
      if (this.phase !== 'connected') return this.reject(CLOSE_POLICY, 'second start message');
      this.begin(msg);
      return;
    }
    if (this.phase === 'connected') return this.reject(CLOSE_POLICY, `${msg.event} before start`);
    if (msg.streamSid !== this.streamSid) return this.reject(CLOSE_POLICY, `${msg.event} for another stream`);
    switch (msg.event) {
      case 'media':
        if (msg.media.track !== 'inbound') return;
        if (this.call) this.call.onCallerAudio(msg.media.payload, Number(msg.media.timestamp));
        else {
          if (this.early.length >= MAX_EARLY_FRAMES) this.early.shift();
          this.early.push({ payload: msg.media.payload, timestampMs: Number(msg.media.timestamp) });
        }
        return;
      case 'mark':
        this.call?.onMark(msg.mark.name);
        return;
      case 'dtmf':
        this.ctx.log.debug('dtmf', { callId: this.callId, digit: msg.dtmf.digit });
        return;
      case 'stop':
        this.hangup();
        return;
    }
  }

  /** Authenticates the stream, looks the call up, sets its media up and tells the workflow. */
  private begin(msg: TwilioStartMessage): void {
    this.phase = 'starting';
    this.streamSid = msg.streamSid;
    if (msg.start.streamSid !== msg.streamSid) return this.reject(CLOSE_POLICY, 'inconsistent streamSid');
    const format = msg.start.mediaFormat;
    if (format.encoding !== 'audio/x-mulaw' || format.sampleRate !== 8000 || format.channels !== 1) {
      return this.reject(CLOSE_POLICY, `unsupported media format ${format.encoding}/${format.sampleRate}/${format.channels}`);
    }
    const callId = msg.start.customParameters.call_id ?? '';
    if (!CALL_ID.test(callId) || !verifyStreamToken(this.ctx.streamSecret, callId, msg.start.customParameters.token)) {
      return this.reject(CLOSE_POLICY, 'invalid stream token');
    }
    if (!this.ctx.calls.reserve(callId)) return this.reject(CLOSE_POLICY, 'call already streaming or finished');
    this.callId = callId;
    const startPerf = performance.now();
    this.setUp(callId, startPerf).catch((err: Error) => {
      this.ctx.calls.release(callId);
      this.reject(CLOSE_POLICY, err.message);
    });
  }

  private async setUp(callId: string, startPerf: number): Promise<void> {
    const workflow = this.ctx.temporal.workflow.getHandle(callWorkflowId(callId));
    let voice: VoiceConfig;
    try {
      const [description, config] = await withTimeout(
        Promise.all([workflow.describe(), workflow.query(voiceConfigQuery)]),
        START_LOOKUP_TIMEOUT_MS,
        'call workflow did not answer',
      );
      if (description.status.name !== 'RUNNING') throw new Error(`call is ${description.status.name.toLowerCase()}`);
      voice = config;
    } catch (err) {
      const e = err as Error;
      throw new Error(e.name === 'WorkflowNotFoundError' ? 'unknown call' : `call lookup failed: ${e.message}`);
    }
    if (this.phase !== 'starting') {
      this.ctx.calls.release(callId); // the socket closed meanwhile
      return;
    }
    if (this.startTimer) clearTimeout(this.startTimer);
    this.mediaPrefix = `{"event":"media","streamSid":${JSON.stringify(this.streamSid)},"media":{"payload":"`;
    const call = new CallMedia({
      callId,
      streamSid: this.streamSid,
      voice,
      config: this.ctx.config,
      workflow,
      vad: this.ctx.vad,
      out: this.output(),
      log: this.ctx.log,
      startPerf,
    });
    this.call = call;
    this.phase = 'live';
    this.ctx.calls.add(call);
    for (const f of this.early.splice(0)) call.onCallerAudio(f.payload, f.timestampMs);
    this.ctx.log.info('media stream started', { callId, streamSid: this.streamSid });
    try {
      await workflow.signal(mediaConnectedSignal, {
        gatewayTaskQueue: this.ctx.taskQueue,
        streamSid: this.streamSid,
        recordingPath: call.recordingPath,
        events: call.events.drain(),
      });
    } catch (err) {
      this.ctx.log.error('could not tell the call workflow the stream connected', { callId, error: (err as Error).message });
      void call.close('closed', CLOSE_INTERNAL, 'call workflow unreachable');
    }
  }

  private output(): StreamOutput {
    const send = (text: string) => {
      if (this.ws.readyState !== WebSocket.OPEN) return;
      if (this.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
        this.reject(CLOSE_POLICY, 'peer is not reading');
        return;
      }
      this.ws.send(text);
    };
    return {
      media: (frame) => send(`${this.mediaPrefix}${frame.toString('base64')}"}}`),
      mark: (name) => send(markMessage(this.streamSid, name)),
      clear: () => send(clearMessage(this.streamSid)),
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
    this.ctx.log.warn('closing media stream', { remote: this.remote, callId: this.callId || undefined, reason });
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
