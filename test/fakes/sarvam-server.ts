/**
 * A local Sarvam speech-to-text server speaking the real protocols, with scripted transcripts
 * instead of a speech model.
 *
 * Streaming `GET /speech-to-text/ws` (WebSocket):
 * - Upgrade checks: header `api-subscription-key` else 403 `{"error": {"message": "Invalid API
 *   key", "code": "invalid_api_key_error"}}`; `language-code` one of Sarvam's (else 400); model
 *   `saarika:*` / `saaras:*`; `mode` only for saaras; `sample_rate` 8000 or 16000;
 *   `input_audio_codec` must be pcm_s16le (the fake decodes nothing else).
 * - `{"audio": {data: base64, sample_rate, encoding}}` messages are audio; a 20 ms frame louder
 *   than `speechRms` is speech. With `vad_signals=true`: `{"type":"events","data":{"signal_type":
 *   "START_SPEECH"}}` at the first loud frame, `END_SPEECH` after the end-of-speech silence
 *   (0.5 s with high_vad_sensitivity, else 1 s), then `{"type":"data","data":{"transcript", …}}`.
 * - `{"type":"flush"}` (with flush_signal=true) → the transcript of the speech since the last
 *   one at once; with no speech pending nothing is sent (the adapter must not wait for it).
 * - A malformed message → `{"type":"error","data":{"error", "code"}}`; nothing for
 *   `idleTimeoutMs` (60 s like Sarvam) → close 1000.
 * - `refuseStreaming: <status>` answers every upgrade with that status (a plan without streaming).
 *
 * REST `POST /speech-to-text` (multipart `file`, `model`, `language_code`, `mode`) → `{request_id,
 * transcript, language_code}`; the same key check.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { WebSocket } from 'ws';
import { pcmFromBytes, rms } from '../../src/audio/pcm';
import { parseWav } from '../../src/audio/wav';
import { sendJson, startWsFakeServer } from './ws-fake-server';

const LANGUAGES = ['hi-IN', 'bn-IN', 'kn-IN', 'ml-IN', 'mr-IN', 'od-IN', 'pa-IN', 'ta-IN', 'te-IN', 'en-IN', 'gu-IN', 'unknown'];

export interface FakeSarvamOptions {
  apiKey: string;
  port?: number;
  idleTimeoutMs?: number;
  /** Delay of every transcript (streamed or REST). */
  transcriptDelayMs?: number;
  speechRms?: number;
  refuseStreaming?: number;
}

export interface FakeSarvamStream {
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  audioBytes: number;
  /** Every message received except audio, and a count of audio messages. */
  controls: string[];
  audioMessages: Array<{ sample_rate: string; encoding: string }>;
  sent: Array<Record<string, any>>;
  closed?: { code: number; reason: string };
}

export interface FakeSarvamRestRequest {
  headers: http.IncomingHttpHeaders;
  fields: Record<string, string>;
  sampleRate: number;
  durationMs: number;
}

export interface FakeSarvam {
  /** http://127.0.0.1:<port> (SARVAM_BASE_URL); the adapter derives ws:// from it. */
  url: string;
  /** Texts in order; a function (model, mode, language) answers when the queue is empty. */
  script(texts: string[] | ((q: { model: string; mode?: string; language: string }) => string)): void;
  received: { streams: FakeSarvamStream[]; rejected: Array<{ status: number; body: string }>; rest: FakeSarvamRestRequest[] };
  /** Streaming connections open now. */
  openConnections(): number;
  dropConnections(code?: number, reason?: string): void;
  stop(): Promise<void>;
}

const FRAME_MS = 20;

export async function startFakeSarvam(options: FakeSarvamOptions): Promise<FakeSarvam> {
  const queue: string[] = [];
  let transcriber: ((q: { model: string; mode?: string; language: string }) => string) | undefined;
  const next = (q: { model: string; mode?: string; language: string }) => queue.shift() ?? transcriber?.(q) ?? '';
  const received: FakeSarvam['received'] = { streams: [], rejected: [], rest: [] };
  const keyError = JSON.stringify({ error: { message: 'Invalid API key', code: 'invalid_api_key_error', request_id: null } });

  async function handleRest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || req.url !== '/speech-to-text') return json(404, { detail: 'Not Found' });
    if (req.headers['api-subscription-key'] !== options.apiKey) return json(403, JSON.parse(keyError));
    const form = await new Response(Buffer.concat(chunks), { headers: { 'content-type': req.headers['content-type'] ?? '' } }).formData();
    const fields: Record<string, string> = {};
    let file: File | undefined;
    for (const [k, v] of form.entries()) {
      if (typeof v === 'string') fields[k] = v;
      else file = v as File;
    }
    if (!file) return json(422, { error: { message: 'file is required', code: 'invalid_request_error' } });
    const language = fields.language_code ?? 'unknown';
    if (!LANGUAGES.includes(language)) return json(400, { error: { message: `Invalid language_code: ${language}`, code: 'invalid_request_error' } });
    const wav = parseWav(Buffer.from(await file.arrayBuffer()));
    if (wav.durationMs > 30_000) return json(400, { error: { message: 'Audio duration exceeds 30 seconds', code: 'invalid_request_error' } });
    received.rest.push({ headers: req.headers, fields, sampleRate: wav.sampleRate, durationMs: wav.durationMs });
    if (options.transcriptDelayMs) await new Promise((r) => setTimeout(r, options.transcriptDelayMs));
    json(200, { request_id: crypto.randomUUID(), transcript: next({ model: fields.model ?? 'saarika:v2.5', mode: fields.mode, language }), language_code: language });
  }

  function checkUpgrade(req: http.IncomingMessage, url: URL): { status: number; body: string } | undefined {
    const fail = (status: number, message: string) => ({ status, body: JSON.stringify({ error: { message, code: 'invalid_request_error' } }) });
    if (url.pathname !== '/speech-to-text/ws') return { status: 404, body: JSON.stringify({ detail: 'Not Found' }) };
    if (req.headers['api-subscription-key'] !== options.apiKey) return { status: 403, body: keyError };
    if (options.refuseStreaming) return fail(options.refuseStreaming, 'Streaming is not available for this subscription');
    const q = url.searchParams;
    const language = q.get('language-code');
    if (!language || !LANGUAGES.includes(language)) return fail(400, `Invalid language-code: ${language}`);
    const model = q.get('model') ?? 'saarika:v2.5';
    if (!/^(saarika|saaras):/.test(model)) return fail(400, `Invalid model: ${model}`);
    const mode = q.get('mode');
    if (mode !== null && (!model.startsWith('saaras') || !['transcribe', 'translate', 'verbatim', 'translit', 'codemix'].includes(mode))) return fail(400, `Invalid mode ${mode} for ${model}`);
    if (!['8000', '16000', null].includes(q.get('sample_rate'))) return fail(400, 'sample_rate must be 8000 or 16000');
    if (q.get('input_audio_codec') !== 'pcm_s16le') return fail(400, 'The fake Sarvam only decodes input_audio_codec=pcm_s16le');
    return undefined;
  }

  const server = await startWsFakeServer(
    {
      request: (req, res) => void handleRest(req, res).catch((err) => res.writeHead(500).end(String(err))),
      check(req, url) {
        const rejection = checkUpgrade(req, url);
        if (!rejection) return undefined;
        received.rejected.push(rejection);
        return { ...rejection, headers: { 'Content-Type': 'application/json' } };
      },
      connected(ws, req, url) {
        const record: FakeSarvamStream = { query: Object.fromEntries(url.searchParams), headers: req.headers, audioBytes: 0, controls: [], audioMessages: [], sent: [] };
        received.streams.push(record);
        new SarvamStream(ws, record, options, next);
      },
    },
    options.port,
  );
  return {
    url: `http://127.0.0.1:${server.port}`,
    script(texts) {
      if (typeof texts === 'function') transcriber = texts;
      else queue.push(...texts);
    },
    received,
    openConnections: () => server.openConnections(),
    dropConnections: server.dropConnections,
    stop: server.stop,
  };
}

class SarvamStream {
  private readonly bytesPerFrame: number;
  private readonly endSilenceMs: number;
  private pending = Buffer.alloc(0);
  private inSpeech = false;
  private owes = false;
  private silenceMs = 0;
  private idleTimer?: NodeJS.Timeout;
  private readonly vadSignals: boolean;
  private outbox: Promise<void> = Promise.resolve();

  constructor(
    private readonly ws: WebSocket,
    private readonly record: FakeSarvamStream,
    private readonly options: FakeSarvamOptions,
    private readonly next: (q: { model: string; mode?: string; language: string }) => string,
  ) {
    const rate = Number(record.query.sample_rate ?? 16000);
    this.bytesPerFrame = (rate * FRAME_MS * 2) / 1000;
    this.endSilenceMs = record.query.high_vad_sensitivity === 'true' ? 500 : 1000;
    this.vadSignals = record.query.vad_signals === 'true';
    ws.on('message', (data, isBinary) => {
      this.armIdle();
      this.message(isBinary ? null : data.toString());
    });
    ws.on('close', (code, reason) => {
      if (this.idleTimer) clearTimeout(this.idleTimer);
      record.closed ??= { code, reason: reason.toString() };
    });
    this.armIdle();
  }

  private armIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.ws.close(1000, 'idle timeout'), this.options.idleTimeoutMs ?? 60_000);
  }

  private message(text: string | null): void {
    let msg: any;
    try {
      msg = text === null ? undefined : JSON.parse(text);
    } catch {
      msg = undefined;
    }
    if (msg?.audio && typeof msg.audio.data === 'string') {
      this.record.audioMessages.push({ sample_rate: msg.audio.sample_rate, encoding: msg.audio.encoding });
      this.audio(Buffer.from(msg.audio.data, 'base64'));
      return;
    }
    if (msg?.type === 'flush' && this.record.query.flush_signal === 'true') {
      this.record.controls.push('flush');
      if (this.owes) this.transcript();
      return;
    }
    this.record.controls.push(text === null ? 'binary' : String(msg?.type ?? 'invalid'));
    this.send({ type: 'error', data: { error: 'Invalid message format', code: 'invalid_request_error' } });
  }

  private audio(bytes: Buffer): void {
    this.record.audioBytes += bytes.length;
    let data = Buffer.concat([this.pending, bytes]);
    while (data.length >= this.bytesPerFrame) {
      this.frame(data.subarray(0, this.bytesPerFrame));
      data = data.subarray(this.bytesPerFrame);
    }
    this.pending = Buffer.from(data);
  }

  private frame(frame: Buffer): void {
    const loud = rms(pcmFromBytes(frame)) >= (this.options.speechRms ?? 300);
    if (loud) {
      this.silenceMs = 0;
      if (!this.inSpeech) {
        this.inSpeech = true;
        this.owes = true;
        if (this.vadSignals) this.send({ type: 'events', data: { signal_type: 'START_SPEECH', occured_at: Date.now() / 1000 } });
      }
      return;
    }
    if (!this.inSpeech) return;
    this.silenceMs += FRAME_MS;
    if (this.silenceMs >= this.endSilenceMs) this.transcript();
  }

  private transcript(): void {
    if (this.inSpeech && this.vadSignals) this.send({ type: 'events', data: { signal_type: 'END_SPEECH', occured_at: Date.now() / 1000 } });
    this.inSpeech = false;
    this.owes = false;
    this.silenceMs = 0;
    const q = this.record.query;
    const language = q['language-code'] ?? 'unknown';
    const text = this.next({ model: q.model ?? 'saarika:v2.5', mode: q.mode, language });
    this.send(
      { type: 'data', data: { request_id: crypto.randomUUID(), transcript: text, language_code: q.mode === 'translate' ? 'en-IN' : language, metrics: { audio_duration: 0, processing_latency: 0 } } },
      this.options.transcriptDelayMs ?? 0,
    );
  }

  /** Messages leave in order; a delay holds this one and everything after it. */
  private send(msg: Record<string, any>, delayMs = 0): void {
    this.outbox = this.outbox.then(async () => {
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      if (sendJson(this.ws, msg)) this.record.sent.push(msg);
    });
  }
}
