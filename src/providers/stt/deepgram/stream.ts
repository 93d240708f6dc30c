/**
 * Deepgram live transcription (`/v1/listen` WebSocket). Audio goes out as binary frames;
 * control messages (KeepAlive, Finalize, CloseStream) as JSON text frames; results come back
 * as JSON `Results` / `UtteranceEnd` / `SpeechStarted` / `Metadata`.
 *
 * Latency choices: the socket opens in the constructor and audio/finalize issued before it is
 * open are queued and flushed on open, so the gateway never waits for the handshake.
 */
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import { createLogger } from '../../../shared/logger';
import { KeepAlive } from '../../../shared/keep-alive';
import { sttRole } from '../../socket-census';
import { openSpeechSocket, parseVendorJson, SpeechProviderError, wsBaseUrl } from '../../speech-socket';
import { PendingSends } from '../pending-sends';
import type { SttEvents, SttOptions, SttStream, SttTranscript } from '../types';

const log = createLogger('stt.deepgram');

export const DEEPGRAM_DEFAULTS = {
  baseUrl: 'wss://api.deepgram.com',
  // Listed by the official @deepgram/sdk 5.13.0 (ListenV1Model: nova-3).
  model: 'nova-3',
  language: 'en',
  encoding: 'mulaw',
  sampleRate: 8000,
  interimResults: true,
  // Deepgram's own default (10 ms) splits sentences at every breath; 300 ms suits phone calls.
  endpointingMs: 300,
  // Deepgram's minimum useful value; needs interim_results.
  utteranceEndMs: 1000,
  vadEvents: true,
  // Deepgram closes a stream after 10 s without audio; it asks for a KeepAlive every 3-5 s.
  keepAliveIntervalMs: 4000,
  closeTimeoutMs: 2000,
} as const;

// 30 s of 8 kHz mu-law held while the handshake runs.
const MAX_QUEUED_AUDIO_BYTES = 240_000;

const AUDIO_PARAMETERS = new Set(['encoding', 'sample_rate', 'channels']);

/** Builds the `/v1/listen` URL: our defaults, then the agent's stt_settings (null removes a parameter). */
export function deepgramListenUrl(options: SttOptions): string {
  const params = new Map<string, string[]>();
  const set = (k: string, v: unknown) => params.set(k, [String(v)]);
  set('model', options.model || DEEPGRAM_DEFAULTS.model);
  set('language', options.language || DEEPGRAM_DEFAULTS.language);
  set('encoding', options.encoding ?? DEEPGRAM_DEFAULTS.encoding);
  set('sample_rate', options.sampleRate ?? DEEPGRAM_DEFAULTS.sampleRate);
  set('channels', 1);
  const interim = options.interimResults ?? DEEPGRAM_DEFAULTS.interimResults;
  set('interim_results', interim);
  const endpointing = options.endpointingMs ?? DEEPGRAM_DEFAULTS.endpointingMs;
  set('endpointing', endpointing);
  if (interim) set('utterance_end_ms', options.utteranceEndMs ?? DEEPGRAM_DEFAULTS.utteranceEndMs);
  set('vad_events', options.vadEvents ?? DEEPGRAM_DEFAULTS.vadEvents);
  set('smart_format', true);
  for (const [key, value] of Object.entries(options.settings ?? {})) {
    if (AUDIO_PARAMETERS.has(key)) continue; // the audio is what the gateway sends, whatever the settings say
    if (value === null || value === undefined) params.delete(key);
    else if (Array.isArray(value)) params.set(key, value.map((v) => String(v)));
    else if (typeof value === 'object') params.set(key, [JSON.stringify(value)]);
    else set(key, value);
  }
  const query = new URLSearchParams();
  for (const [k, values] of params) for (const v of values) query.append(k, v);
  return `${wsBaseUrl(options.baseUrl || DEEPGRAM_DEFAULTS.baseUrl)}/v1/listen?${query.toString()}`;
}

export class DeepgramStt extends EventEmitter<SttEvents> implements SttStream {
  readonly provider = 'deepgram';
  readonly ready: Promise<void>;
  audioBytesSent = 0;

  private readonly ws: WebSocket;
  private readonly keepAlive: KeepAlive;
  private readonly closeTimeoutMs: number;
  private readonly pending = new PendingSends<'Finalize' | 'CloseStream'>(MAX_QUEUED_AUDIO_BYTES);
  private opened = false;
  private closing = false;
  private closedInfo?: { code: number; reason: string };
  private readonly closedWaiters: Array<() => void> = [];

  constructor(options: SttOptions) {
    super();
    this.keepAlive = new KeepAlive(options.keepAliveIntervalMs ?? DEEPGRAM_DEFAULTS.keepAliveIntervalMs, () => this.sendControl('KeepAlive'));
    this.closeTimeoutMs = options.closeTimeoutMs ?? DEEPGRAM_DEFAULTS.closeTimeoutMs;
    let resolveReady!: () => void;
    let rejectReady!: (err: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      resolveReady = resolve;
      rejectReady = reject;
    });
    this.ready.catch(() => {}); // failures are also reported as 'error' events; awaiting is optional

    this.ws = openSpeechSocket(
      deepgramListenUrl(options),
      { provider: 'Deepgram', vendor: 'deepgram', role: sttRole(), headers: { Authorization: `Token ${options.apiKey}` }, handshakeTimeoutMs: options.handshakeTimeoutMs },
      (err) => {
        rejectReady(err);
        if (!this.closing) this.fail(err);
      },
    );
    this.ws.on('open', () => {
      this.opened = true;
      resolveReady();
      this.pending.drain(
        (audio) => this.sendAudio(audio),
        (type) => this.sendControl(type),
      );
      this.keepAlive.start();
    });
    this.ws.on('message', (data, isBinary) => {
      if (!isBinary) this.handleMessage(data.toString());
    });
    this.ws.on('close', (code, reason) => this.handleClose(code, reason.toString()));
  }

  sendAudio(audio: Buffer): void {
    // A zero-length binary frame means CloseStream to Deepgram.
    if (audio.length === 0 || this.closing || this.closedInfo) return;
    if (this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(audio, { binary: true });
      this.audioBytesSent += audio.length;
      this.keepAlive.touch();
      return;
    }
    this.pending.pushAudio(audio);
  }

  finalize(): void {
    if (this.closing || this.closedInfo) return;
    this.sendControl('Finalize');
  }

  async close(): Promise<void> {
    if (this.closedInfo) return;
    const closed = new Promise<void>((resolve) => this.closedWaiters.push(resolve));
    if (!this.closing) {
      this.closing = true;
      this.keepAlive.stop();
      if (this.ws.readyState === WebSocket.OPEN) {
        this.sendControl('CloseStream');
        const timer = setTimeout(() => this.ws.terminate(), this.closeTimeoutMs);
        timer.unref();
        void closed.then(() => clearTimeout(timer));
      } else {
        this.pending.clear();
        this.ws.terminate();
      }
    }
    await closed;
  }

  private sendControl(type: 'KeepAlive' | 'Finalize' | 'CloseStream'): void {
    if (this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify({ type }));
      this.keepAlive.touch();
    } else if (type !== 'KeepAlive') {
      this.pending.pushControl(type);
    }
  }

  private handleMessage(text: string): void {
    const msg = parseVendorJson<DeepgramMessage>(text, log);
    if (!msg) return;
    switch (msg.type) {
      case 'Results': {
        const alt = msg.channel?.alternatives?.[0];
        const transcript: SttTranscript = {
          text: alt?.transcript ?? '',
          isFinal: msg.is_final === true,
          speechFinal: msg.speech_final === true,
          confidence: alt?.confidence ?? 0,
          fromFinalize: msg.from_finalize === true,
          startSecs: msg.start ?? 0,
          durationSecs: msg.duration ?? 0,
        };
        // Empty interim results carry nothing; empty finals still tell the gateway a finalize completed.
        if (transcript.text || transcript.isFinal) this.emit('transcript', transcript);
        return;
      }
      case 'UtteranceEnd':
        this.emit('utteranceEnd', { lastWordEndSecs: msg.last_word_end ?? null });
        return;
      case 'SpeechStarted':
        this.emit('speechStarted', { timestampSecs: msg.timestamp ?? null });
        return;
      case 'Metadata':
        log.debug('stream metadata', { request_id: msg.request_id, duration: msg.duration });
        return;
      case 'Error':
        this.emit('error', new SpeechProviderError(`Deepgram error: ${msg.description ?? msg.message ?? 'unknown'}`, { provider: 'deepgram' }));
        return;
      default:
        log.debug('ignoring message', { type: msg.type });
    }
  }

  private fail(err: SpeechProviderError): void {
    if (this.listenerCount('error') > 0) this.emit('error', err);
    else log.warn(err.message);
  }

  private handleClose(code: number, reason: string): void {
    if (this.closedInfo) return;
    this.keepAlive.stop();
    // A failed handshake was already reported by openSpeechSocket; a close we asked for is no error.
    if (this.opened && !this.closing && code !== 1000) {
      const why = code === 1006 ? 'connection dropped' : `stream closed: ${code}${reason ? ` ${reason}` : ''}`;
      this.fail(new SpeechProviderError(`Deepgram ${why}`, { provider: 'deepgram', closeCode: code }));
    }
    this.closedInfo = { code, reason };
    this.emit('closed', this.closedInfo);
    for (const resolve of this.closedWaiters.splice(0)) resolve();
  }
}

interface DeepgramMessage {
  type?: string;
  is_final?: boolean;
  speech_final?: boolean;
  from_finalize?: boolean;
  start?: number;
  duration?: number;
  channel?: { alternatives?: Array<{ transcript?: string; confidence?: number }> };
  last_word_end?: number;
  timestamp?: number;
  request_id?: string;
  description?: string;
  message?: string;
}
