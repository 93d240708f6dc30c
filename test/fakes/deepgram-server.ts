/**
 * A local Deepgram live-transcription server (`/v1/listen`) speaking the real protocol, with
 * scripted transcripts instead of a speech model.
 *
 * - Upgrade checks like Deepgram: `Authorization: Token <key>` (or the `token, <key>`
 *   subprotocol) else 401 with `dg-error` / `dg-request-id` headers and a JSON body; bad query
 *   parameters → 400. Only `mulaw` and `linear16` audio are understood.
 * - Binary frames are audio. Each 20 ms frame louder than `speechRms` counts as speech; that
 *   drives `SpeechStarted` (vad_events), interim `Results` (interim_results), an automatic final
 *   after `endpointing` ms of silence, and `UtteranceEnd` after `utterance_end_ms`.
 * - `{"type":"Finalize"}` → a final Result (`is_final`, `speech_final`, `from_finalize` true)
 *   for the audio since the last final. Its transcript is the next scripted text if that audio
 *   contained speech, else empty, so a Finalize right after an endpointing final does not
 *   consume a script entry.
 * - `KeepAlive` is accepted silently; `CloseStream` (or an empty binary frame) → remaining
 *   final, `Metadata`, close 1000. Nothing at all for `noAudioTimeoutMs` (10 s, like Deepgram)
 *   → close 1011 with a NET-0001 reason.
 * - Results go out with zero latency unless `finalDelayMs` is set.
 */
import crypto from 'node:crypto';
import type http from 'node:http';
import type { WebSocket } from 'ws';
import { decodeMulaw } from '../../src/audio/g711';
import { pcmFromBytes, rms } from '../../src/audio/pcm';
import { sendJson, startWsFakeServer } from './ws-fake-server';
import { checkUpgrade } from './deepgram-upgrade';
import { words } from './fake-tts-audio';
import { speakCheck, speakConnected, type FakeDeepgramSpeak, type FakeDeepgramSpeakOptions } from './deepgram-speak';

export interface FakeDeepgramOptions {
  apiKey: string;
  port?: number;
  /** Close (NET-0001) after this long without any message. Default 10 000, like Deepgram. */
  noAudioTimeoutMs?: number;
  /** Delay of every final result. Default 0. */
  finalDelayMs?: number;
  /** With interim_results=true: an interim Result per this much speech. Default 500; 0 = none. */
  interimEveryMs?: number;
  /** 16-bit RMS above which a 20 ms frame is speech. Default 300 (about -40 dBFS). */
  speechRms?: number;
  /** The Aura TTS endpoint `/v1/speak` (deepgram-speak.ts). */
  speak?: FakeDeepgramSpeakOptions;
}

/** Computes a transcript from the audio of one utterance (ms since the last final, ms of it that was speech). */
export type Transcriber = (audioMs: number, speechMs: number) => string;

export interface FakeDeepgramStream {
  /** Path and query as requested (repeated parameters such as keyterm survive here). */
  url: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  audioBytes: number;
  audioFrames: number;
  /** Types of the text messages received, in order (KeepAlive, Finalize, CloseStream, …). */
  controls: string[];
  /** Transcripts of the final results sent. */
  finals: string[];
  closed?: { code: number; reason: string };
}

export interface FakeDeepgram {
  /** Base URL for DEEPGRAM_BASE_URL (ws://127.0.0.1:<port>). */
  url: string;
  /** Texts are appended to the queue of utterances; a function answers when the queue is empty. */
  script(texts: string[] | Transcriber): void;
  received: {
    streams: FakeDeepgramStream[];
    /** Upgrades refused, with the status sent. */
    rejected: Array<{ status: number; reason: string }>;
    readonly audioBytes: number;
    readonly controls: string[];
  };
  /**
   * An outage of `/v1/listen`: while on, every open stream is dropped (1011) and new ones are
   * refused with 503, as when Deepgram is down.
   */
  outage(on: boolean): void;
  /** What the `/v1/speak` (Aura TTS) endpoint received. */
  speak: FakeDeepgramSpeak;
  /** Connections open now, of one endpoint or both (Deepgram counts concurrent streams per project). */
  openConnections(endpoint?: 'listen' | 'speak'): number;
  /** Closes every open connection from the server side (default 1011), as an outage would. */
  dropConnections(code?: number, reason?: string): void;
  stop(): Promise<void>;
}

const FRAME_MS = 20;

interface Script {
  next(audioMs: number, speechMs: number): string;
  peek(): string;
}
const MODEL_UUID = '00000000-0000-4000-8000-00000000fa4e';

export async function startFakeDeepgram(options: FakeDeepgramOptions): Promise<FakeDeepgram> {
  const queue: string[] = [];
  let transcriber: Transcriber | undefined;
  const streams: FakeDeepgramStream[] = [];
  const rejected: Array<{ status: number; reason: string }> = [];
  let down = false;
  const speak: FakeDeepgramSpeak = {
    connections: [],
    rejected: [],
    get messages() {
      return speak.connections.flatMap((c) => c.messages);
    },
  };

  const script: Script = {
    next: (audioMs, speechMs) => queue.shift() ?? transcriber?.(audioMs, speechMs) ?? '',
    peek: () => queue[0] ?? '',
  };

  const server = await startWsFakeServer(
    {
      check(req, url) {
        if (url.pathname === '/v1/speak') {
          const refused = speakCheck(req, url, options.apiKey, options.speak ?? {});
          if (refused) speak.rejected.push({ status: refused.status, reason: refused.headers?.['dg-error'] ?? '' });
          return refused;
        }
        const rejection = down
          ? { status: 503, headers: { 'dg-error': 'Service unavailable', 'content-type': 'application/json' }, body: '{"err_msg":"Service unavailable"}' }
          : checkUpgrade(req, url, options.apiKey);
        if (rejection) rejected.push({ status: rejection.status, reason: rejection.headers?.['dg-error'] ?? '' });
        return rejection;
      },
      connected(ws, req, url) {
        if (url.pathname === '/v1/speak') return speakConnected(ws, req, url, options.speak ?? {}, speak);
        const record: FakeDeepgramStream = { url: req.url ?? '', query: Object.fromEntries(url.searchParams), headers: req.headers, audioBytes: 0, audioFrames: 0, controls: [], finals: [] };
        streams.push(record);
        new DeepgramStream(ws, record, options, script);
      },
    },
    options.port,
  );

  return {
    url: server.url,
    script(texts) {
      if (typeof texts === 'function') transcriber = texts;
      else queue.push(...texts);
    },
    outage(on) {
      down = on;
      if (on) server.dropConnections(1011, 'Service unavailable');
    },
    speak,
    received: {
      streams,
      rejected,
      get audioBytes() {
        return streams.reduce((n, s) => n + s.audioBytes, 0);
      },
      get controls() {
        return streams.flatMap((s) => s.controls);
      },
    },
    openConnections: (endpoint) => server.openConnections(endpoint ? `/v1/${endpoint}` : ''),
    dropConnections: (code, reason) => server.dropConnections(code, reason),
    stop: () => server.stop(),
  };
}

/** One live stream: audio timeline, scripted results, timeouts. */
class DeepgramStream {
  private readonly requestId = crypto.randomUUID();
  private readonly encoding: string;
  private readonly bytesPerMs: number;
  private readonly interim: boolean;
  private readonly vadEvents: boolean;
  private readonly endpointingMs: number | undefined;
  private readonly utteranceEndMs: number | undefined;
  private readonly speechRms: number;
  private readonly interimEveryMs: number;
  private pending = Buffer.alloc(0);
  private positionMs = 0; // audio received so far
  private segmentStartMs = 0; // start of the audio not yet covered by a final
  private segmentSpeechMs = 0;
  private inSpeech = false;
  private silenceMs = 0;
  private lastWordEndMs: number | undefined;
  private utteranceEndSent = true;
  private speechSinceInterimMs = 0;
  private idleTimer?: NodeJS.Timeout;
  private outbox: Promise<void> = Promise.resolve();
  private ended = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly record: FakeDeepgramStream,
    private readonly options: FakeDeepgramOptions,
    private readonly script: Script,
  ) {
    const q = record.query;
    this.encoding = q.encoding ?? 'linear16';
    const rate = Number(q.sample_rate ?? 16000);
    this.bytesPerMs = ((this.encoding === 'mulaw' ? 1 : 2) * rate) / 1000;
    this.interim = q.interim_results === 'true';
    this.vadEvents = q.vad_events === 'true';
    // Deepgram endpoints after 10 ms of silence unless told otherwise.
    this.endpointingMs = q.endpointing === 'false' ? undefined : q.endpointing === undefined || q.endpointing === 'true' ? 10 : Number(q.endpointing);
    this.utteranceEndMs = q.utterance_end_ms !== undefined ? Number(q.utterance_end_ms) : undefined;
    this.speechRms = options.speechRms ?? 300;
    this.interimEveryMs = options.interimEveryMs ?? 500;

    ws.on('message', (data: Buffer, isBinary) => {
      this.armIdleTimer();
      if (isBinary) this.audio(data);
      else this.control(data.toString());
    });
    ws.on('close', (code, reason) => {
      this.ended = true;
      if (this.idleTimer) clearTimeout(this.idleTimer);
      record.closed ??= { code, reason: reason.toString() };
    });
    this.armIdleTimer();
  }

  private armIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.close(1011, 'Deepgram did not receive audio data or a text message within the timeout window. See https://dpgr.am/net0001');
    }, this.options.noAudioTimeoutMs ?? 10_000);
  }

  private audio(data: Buffer): void {
    if (this.ended) return;
    if (data.length === 0) return this.closeStream(); // Deepgram's legacy way to close
    this.record.audioBytes += data.length;
    this.record.audioFrames++;
    this.pending = Buffer.concat([this.pending, data]);
    const frameBytes = Math.round(FRAME_MS * this.bytesPerMs);
    while (this.pending.length >= frameBytes) {
      const frame = this.pending.subarray(0, frameBytes);
      this.pending = this.pending.subarray(frameBytes);
      const pcm = this.encoding === 'mulaw' ? decodeMulaw(frame) : pcmFromBytes(frame);
      this.frame(rms(pcm) > this.speechRms);
    }
  }

  private frame(speech: boolean): void {
    const frameStartMs = this.positionMs;
    this.positionMs += FRAME_MS;
    if (speech) {
      if (!this.inSpeech && this.vadEvents) this.send({ type: 'SpeechStarted', channel: [0], timestamp: frameStartMs / 1000 });
      this.inSpeech = true;
      this.silenceMs = 0;
      this.segmentSpeechMs += FRAME_MS;
      this.lastWordEndMs = this.positionMs;
      this.utteranceEndSent = false;
      this.speechSinceInterimMs += FRAME_MS;
      if (this.interim && this.interimEveryMs > 0 && this.speechSinceInterimMs >= this.interimEveryMs) {
        this.speechSinceInterimMs = 0;
        // The words of the coming scripted text heard so far, one per interim.
        const heard = Math.ceil(this.segmentSpeechMs / this.interimEveryMs);
        const partial = words(this.script.peek()).slice(0, heard).join(' ');
        this.send(this.results(partial, { isFinal: false, speechFinal: false, fromFinalize: false }));
      }
      return;
    }
    this.silenceMs += FRAME_MS;
    if (this.inSpeech && this.endpointingMs !== undefined && this.silenceMs >= this.endpointingMs) {
      this.inSpeech = false;
      this.final({ speechFinal: true, fromFinalize: false });
    }
    if (this.utteranceEndMs !== undefined && !this.utteranceEndSent && this.lastWordEndMs !== undefined && this.positionMs - this.lastWordEndMs >= this.utteranceEndMs) {
      this.utteranceEndSent = true;
      this.send({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: this.lastWordEndMs / 1000 });
    }
  }

  private control(text: string): void {
    if (this.ended) return;
    let msg: { type?: unknown };
    try {
      msg = JSON.parse(text) as { type?: unknown };
    } catch {
      this.record.controls.push('(invalid JSON)');
      return this.close(1008, 'DATA-0000: Invalid JSON in text message');
    }
    const type = String(msg.type);
    this.record.controls.push(type);
    if (type === 'KeepAlive') return;
    if (type === 'Finalize') {
      this.inSpeech = false;
      return this.final({ speechFinal: true, fromFinalize: true });
    }
    if (type === 'CloseStream') return this.closeStream();
    this.close(1008, `DATA-0000: Unknown message type: ${type}`);
  }

  /** The final result for the audio since the last final. */
  private final(flags: { speechFinal: boolean; fromFinalize: boolean }): void {
    const audioMs = this.positionMs - this.segmentStartMs;
    const text = this.segmentSpeechMs > 0 ? this.script.next(audioMs, this.segmentSpeechMs) : '';
    this.record.finals.push(text);
    const msg = this.results(text, { isFinal: true, ...flags });
    this.segmentStartMs = this.positionMs;
    this.segmentSpeechMs = 0;
    this.speechSinceInterimMs = 0;
    this.send(msg, this.options.finalDelayMs ?? 0);
  }

  private results(text: string, flags: { isFinal: boolean; speechFinal: boolean; fromFinalize: boolean }): Record<string, unknown> {
    const startSecs = this.segmentStartMs / 1000;
    const durationSecs = (this.positionMs - this.segmentStartMs) / 1000;
    const list = words(text);
    const step = list.length > 0 ? durationSecs / list.length : 0;
    return {
      type: 'Results',
      channel_index: [0, 1],
      duration: durationSecs,
      start: startSecs,
      is_final: flags.isFinal,
      speech_final: flags.speechFinal,
      from_finalize: flags.fromFinalize,
      channel: {
        alternatives: [
          {
            transcript: text,
            confidence: text ? 0.99 : 0,
            words: list.map((word, i) => ({ word: word.toLowerCase().replace(/[^\p{L}\p{N}']/gu, ''), start: startSecs + i * step, end: startSecs + (i + 1) * step, confidence: 0.99, punctuated_word: word })),
          },
        ],
      },
      metadata: { request_id: this.requestId, model_info: { name: this.record.query.model ?? 'general', version: 'fake', arch: 'fake' }, model_uuid: MODEL_UUID },
    };
  }

  private closeStream(): void {
    if (this.segmentSpeechMs > 0) this.final({ speechFinal: false, fromFinalize: false });
    this.send({
      type: 'Metadata',
      transaction_key: 'deprecated',
      request_id: this.requestId,
      sha256: crypto.createHash('sha256').update(String(this.record.audioBytes)).digest('hex'),
      created: new Date().toISOString(),
      duration: this.positionMs / 1000,
      channels: 1,
    });
    this.ended = true;
    this.outbox = this.outbox.then(() => {
      if (this.ws.readyState === this.ws.OPEN) this.ws.close(1000);
    });
  }

  private close(code: number, reason: string): void {
    this.ended = true;
    this.record.closed = { code, reason };
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(code, reason);
  }

  /** Messages leave in order; a delay holds back this one and everything after it. */
  private send(msg: Record<string, unknown>, delayMs = 0): void {
    if (delayMs === 0 && this.outboxIdle) {
      sendJson(this.ws, msg);
      return;
    }
    this.outboxIdle = false;
    const mine = this.outbox.then(() => new Promise<void>((resolve) => (delayMs > 0 ? setTimeout(resolve, delayMs) : resolve())).then(() => void sendJson(this.ws, msg)));
    this.outbox = mine;
    void mine.then(() => {
      if (this.outbox === mine) this.outboxIdle = true;
    });
  }

  private outboxIdle = true;
}
