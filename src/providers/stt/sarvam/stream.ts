/**
 * Sarvam speech-to-text (saarika / saaras), streaming over `wss://api.sarvam.ai/speech-to-text/ws`
 * with header `api-subscription-key`. Caller audio (16-bit PCM at the stream's rate, which Sarvam
 * takes as `pcm_s16le` at 8 or 16 kHz) goes out as base64 in `{"audio": {data, sample_rate,
 * encoding}}` text frames; Sarvam's own VAD sends `events` (START_SPEECH / END_SPEECH) and one
 * `data` message with the transcript per utterance. There are no interim results.
 *
 * finalize() sends `{"type": "flush"}` only while Sarvam still owes a transcript (speech started,
 * no transcript since); otherwise it answers at once with an empty final, so the gateway never
 * waits for a flush of nothing.
 *
 * When Sarvam refuses the streaming socket itself (HTTP 403 without a key problem, 404, 426 —
 * a plan or region without streaming), the adapter falls back to REST (`POST /speech-to-text`,
 * one upload per utterance at finalize(), segment-stt.ts) on the same stream object.
 */
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import { decodeMulaw } from '../../../audio/g711';
import { pcmFromBytes, pcmToBytes, rms } from '../../../audio/pcm';
import { createLogger } from '../../../shared/logger';
import { KeepAlive } from '../../../shared/keep-alive';
import { sttRole } from '../../socket-census';
import { openSpeechSocket, parseVendorJson, readyLatch, SpeechProviderError } from '../../speech-socket';
import { PendingSends } from '../pending-sends';
import { SegmentStt } from '../segment-stt';
import type { SttEvents, SttOptions, SttStream } from '../types';
import { SARVAM_DEFAULTS, sarvamRequest, sarvamStreamUrl, sarvamTranscribeRest, type SarvamRequest } from './request';

export { SARVAM_DEFAULTS, SARVAM_LANGUAGES, sarvamLanguage, sarvamStreamUrl, sarvamRequest } from './request';

const log = createLogger('stt.sarvam');

// Statuses with which a server says "no streaming here" rather than "bad request".
const STREAMING_REFUSED = new Set([403, 404, 426]);
const KEY_PROBLEM = /api[- _]?key|credential|unauthori[sz]ed/i;
// 16-bit RMS above which audio counts as speech for finalize() (about -45 dBFS).
const SPEECH_RMS = 180;
// 30 s of 8 kHz PCM held while the handshake runs.
const MAX_QUEUED_AUDIO_BYTES = 480_000;

export class SarvamStt extends EventEmitter<SttEvents> implements SttStream {
  readonly provider = 'sarvam';
  readonly ready: Promise<void>;
  audioBytesSent = 0;

  private readonly request: SarvamRequest;
  private readonly ws: WebSocket;
  private readonly settleReady: ReturnType<typeof readyLatch>;
  private readonly pending = new PendingSends<'finalize'>(MAX_QUEUED_AUDIO_BYTES);
  private opened = false;
  private closing = false;
  private closedInfo?: { code: number; reason: string };
  private readonly closedWaiters: Array<() => void> = [];
  /** Sarvam heard speech (START_SPEECH) and has not sent its transcript yet. */
  private owesTranscript = false;
  /** Loud audio went out since the last transcript: Sarvam's START_SPEECH may still be on its way. */
  private sentSpeech = false;
  private flushPending = false;
  private positionBytes = 0;
  private segmentStartBytes = 0;
  private readonly keepAlive: KeepAlive;
  private rest?: SegmentStt;

  constructor(private readonly options: SttOptions) {
    super();
    this.request = sarvamRequest(options);
    this.settleReady = readyLatch();
    // Sarvam has no keep-alive message and closes after 60 s without data; 20 ms of silence does.
    this.keepAlive = new KeepAlive(options.keepAliveIntervalMs ?? SARVAM_DEFAULTS.keepAliveIntervalMs, () => {
      if (this.ws.readyState === WebSocket.OPEN) this.sendFrame(Buffer.alloc((this.request.sampleRate / 50) * 2));
    });
    this.ready = this.settleReady.promise;
    this.ws = openSpeechSocket(
      sarvamStreamUrl(options, this.request),
      { provider: 'Sarvam', vendor: 'sarvam', role: sttRole(), headers: { 'api-subscription-key': options.apiKey }, handshakeTimeoutMs: options.handshakeTimeoutMs },
      (err) => this.handshakeFailed(err),
    );
    this.ws.on('open', () => {
      this.opened = true;
      this.settleReady.resolve();
      this.pending.drain(
        (audio) => this.sendFrame(audio),
        () => this.finalize(),
      );
      this.keepAlive.start();
    });
    this.ws.on('message', (data, isBinary) => {
      if (!isBinary) this.handleMessage(data.toString());
    });
    this.ws.on('close', (code, reason) => this.handleClose(code, reason.toString()));
  }

  /** Set while the REST fallback is in use: a round trip per utterance. */
  get finalWaitMs(): number | undefined {
    return this.rest?.finalWaitMs;
  }

  /** `stream` normally, `rest` after Sarvam refused streaming. */
  get transport(): 'stream' | 'rest' {
    return this.rest ? 'rest' : 'stream';
  }

  sendAudio(input: Buffer): void {
    if (input.length === 0 || this.closing || this.closedInfo) return;
    // Sarvam streams take 16-bit PCM only.
    const audio = this.options.encoding === 'mulaw' ? pcmToBytes(decodeMulaw(input)) : input;
    if (this.rest) {
      this.rest.sendAudio(audio);
      return;
    }
    if (this.ws.readyState === WebSocket.OPEN) {
      this.sendFrame(audio);
      return;
    }
    this.pending.pushAudio(audio);
  }

  finalize(): void {
    if (this.closing || this.closedInfo) return;
    if (this.rest) return this.rest.finalize();
    if (this.ws.readyState !== WebSocket.OPEN) {
      this.pending.pushControl('finalize');
      return;
    }
    if (this.owesTranscript || this.sentSpeech) {
      this.flushPending = true;
      // Loud audio Sarvam did not take for speech is not owed twice: the next finalize without
      // new speech answers at once.
      this.sentSpeech = false;
      this.ws.send(JSON.stringify({ type: 'flush' }));
      return;
    }
    // Nothing owed: the turn completes now rather than after the gateway's timeout.
    this.emitTranscript('', true);
  }

  async close(): Promise<void> {
    if (this.closedInfo) return;
    const closed = new Promise<void>((resolve) => this.closedWaiters.push(resolve));
    if (!this.closing) {
      this.closing = true;
      this.keepAlive.stop();
      if (this.rest) {
        await this.rest.close();
        this.ended(1000, '');
      } else if (this.ws.readyState === WebSocket.OPEN && (this.owesTranscript || this.sentSpeech)) {
        // The last words still come back as a final, then the socket closes.
        this.ws.send(JSON.stringify({ type: 'flush' }));
        const timer = setTimeout(() => this.closeSocket(), this.options.closeTimeoutMs ?? SARVAM_DEFAULTS.closeTimeoutMs);
        timer.unref();
        void closed.then(() => clearTimeout(timer));
      } else if (this.ws.readyState === WebSocket.OPEN) {
        this.closeSocket();
      } else {
        this.pending.clear();
        this.ws.terminate();
      }
    }
    await closed;
  }

  /** A clean close, or a hard one if Sarvam does not answer the close handshake. */
  private closeSocket(): void {
    this.ws.close(1000);
    const timer = setTimeout(() => this.ws.terminate(), this.options.closeTimeoutMs ?? SARVAM_DEFAULTS.closeTimeoutMs);
    timer.unref();
    this.ws.once('close', () => clearTimeout(timer));
  }

  private sendFrame(audio: Buffer): void {
    const msg = { audio: { data: audio.toString('base64'), sample_rate: String(this.request.sampleRate), encoding: 'audio/wav' } };
    this.ws.send(JSON.stringify(msg));
    if (!this.sentSpeech && rms(pcmFromBytes(audio.length % 2 ? audio.subarray(1) : audio)) >= SPEECH_RMS) this.sentSpeech = true;
    this.audioBytesSent += audio.length;
    this.positionBytes += audio.length;
    this.keepAlive.touch();
  }

  private handleMessage(text: string): void {
    const msg = parseVendorJson<SarvamMessage>(text, log);
    if (!msg) return;
    switch (msg.type) {
      case 'data': {
        const transcript = typeof msg.data?.transcript === 'string' ? msg.data.transcript : '';
        this.owesTranscript = false;
        this.sentSpeech = false;
        const fromFinalize = this.flushPending;
        this.flushPending = false;
        this.emitTranscript(transcript.trim(), fromFinalize);
        if (this.closing && this.ws.readyState === WebSocket.OPEN) this.closeSocket();
        return;
      }
      case 'events': {
        const signal = msg.data?.signal_type;
        if (signal === 'START_SPEECH') {
          this.owesTranscript = true;
          this.emit('speechStarted', { timestampSecs: null });
        }
        return;
      }
      case 'error': {
        const detail = msg.data?.error ?? msg.data?.message ?? 'unknown error';
        this.fail(new SpeechProviderError(`Sarvam error: ${detail}${msg.data?.code ? ` (${msg.data.code})` : ''}`, { provider: 'sarvam' }));
        // A flush that fails must not leave the gateway waiting for its final.
        if (this.flushPending) {
          this.flushPending = false;
          this.owesTranscript = false;
          this.emitTranscript('', true);
        }
        return;
      }
      default:
        log.debug('ignoring message', { type: msg.type });
    }
  }

  private emitTranscript(text: string, fromFinalize: boolean): void {
    const bytesPerSec = this.request.sampleRate * 2;
    const startSecs = this.segmentStartBytes / bytesPerSec;
    const durationSecs = (this.positionBytes - this.segmentStartBytes) / bytesPerSec;
    this.segmentStartBytes = this.positionBytes;
    this.emit('transcript', { text, isFinal: true, speechFinal: true, confidence: text ? 1 : 0, fromFinalize, startSecs, durationSecs });
  }

  private handshakeFailed(err: SpeechProviderError): void {
    this.keepAlive.stop();
    const status = err.details.status;
    if (!this.closing && status !== undefined && STREAMING_REFUSED.has(status) && !(status === 403 && KEY_PROBLEM.test(err.message))) {
      this.fallBackToRest(err);
      return;
    }
    this.settleReady.reject(err);
    if (!this.closing) this.fail(err);
  }

  private fallBackToRest(reason: SpeechProviderError): void {
    log.warn('Sarvam refused streaming; transcribing each utterance over REST', { reason: reason.message });
    const rest = new SegmentStt({
      provider: 'Sarvam',
      sampleRate: this.request.sampleRate,
      log,
      finalWaitMs: SARVAM_DEFAULTS.restFinalWaitMs,
      maxSegmentMs: SARVAM_DEFAULTS.restMaxSegmentMs,
      transcribe: (wav, signal) => sarvamTranscribeRest(this.options, this.request, wav, signal),
    });
    rest.on('transcript', (t) => this.emit('transcript', t));
    rest.on('error', (e) => this.fail(e));
    rest.on('closed', (c) => {
      if (!this.closing) this.ended(c.code, c.reason);
    });
    this.rest = rest;
    this.pending.drain(
      (audio) => rest.sendAudio(audio),
      () => rest.finalize(),
    );
    this.settleReady.resolve();
  }

  private fail(err: SpeechProviderError): void {
    if (this.listenerCount('error') > 0) this.emit('error', err);
    else log.warn(err.message);
  }

  private handleClose(code: number, reason: string): void {
    this.keepAlive.stop();
    if (this.rest) return; // the socket that never opened; the REST stream lives on
    if (this.opened && !this.closing && code !== 1000) {
      const why = code === 1006 ? 'connection dropped' : `stream closed: ${code}${reason ? ` ${reason}` : ''}`;
      this.fail(new SpeechProviderError(`Sarvam ${why}`, { provider: 'sarvam', closeCode: code }));
    }
    this.ended(code, reason);
  }

  private ended(code: number, reason: string): void {
    if (this.closedInfo) return;
    this.closedInfo = { code, reason };
    this.emit('closed', this.closedInfo);
    for (const resolve of this.closedWaiters.splice(0)) resolve();
  }
}

interface SarvamMessage {
  type?: string;
  data?: {
    transcript?: string;
    language_code?: string;
    signal_type?: string;
    error?: string;
    message?: string;
    code?: string;
  };
}
