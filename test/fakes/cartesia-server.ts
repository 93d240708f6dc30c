/**
 * A local Cartesia TTS WebSocket server (`/tts/websocket`) speaking the real protocol, with a
 * tone instead of a voice (see fake-tts-audio.ts: 60 ms of audio per character by default).
 *
 * - Upgrade checks: API key (`X-API-Key` header or `api_key` query) else 401; version
 *   (`Cartesia-Version` header or `cartesia_version` query) else 400.
 * - Generation requests are validated (model_id, voice {mode:"id", id}, output_format raw
 *   pcm_mulaw / pcm_s16le, transcript) and, within one context, must keep every field except
 *   transcript/continue the same — violations answer `{"type":"error", …}` like Cartesia.
 * - Contexts: each transcript becomes audio `chunk`s (base64) on its context; `continue:false`
 *   ends the context with `done` after its audio; `flush:true` adds `flush_done`;
 *   `add_timestamps:true` adds `timestamps`. Text after a context ended is an error.
 * - Buffering: unless `max_buffer_delay_ms` is 0, text waits in the context's buffer until
 *   that delay (default 3000 ms) passes or the context ends, as Cartesia's managed buffering
 *   holds back short inputs. An adapter that forgets `max_buffer_delay_ms: 0` shows it here.
 * - `{context_id, cancel:true}` stops that context at once; nothing more is sent for it.
 * - Closes a connection idle for `idleTimeoutMs` (5 min, like Cartesia).
 */
import crypto from 'node:crypto';
import type http from 'node:http';
import type { WebSocket } from 'ws';
import { FAKE_TTS_DEFAULTS, playChunks, splitChunks, synthesize, words, type AudioEncoding, type FakeTtsAudioOptions } from './fake-tts-audio';
import { sendJson, startWsFakeServer, type UpgradeRejection } from './ws-fake-server';

export interface FakeCartesiaOptions extends FakeTtsAudioOptions {
  apiKey: string;
  port?: number;
  idleTimeoutMs?: number;
}

export interface FakeCartesiaContext {
  contextId: string;
  /** Transcripts received, in order (including the empty closing one). */
  transcripts: string[];
  cancelled: boolean;
  done: boolean;
  chunksSent: number;
  audioBytesSent: number;
}

export interface FakeCartesia {
  url: string;
  received: {
    connections: Array<{ headers: http.IncomingHttpHeaders; query: Record<string, string> }>;
    /** Every JSON message received, in order. */
    messages: Array<Record<string, any>>;
    rejected: Array<{ status: number; body: string }>;
    contexts: Map<string, FakeCartesiaContext>;
  };
  /** Closes every open connection from the server side (default 1011), as an outage would. */
  /** Connections open now (what Cartesia counts against the account's concurrency). */
  openConnections(): number;
  dropConnections(code?: number, reason?: string): void;
  stop(): Promise<void>;
}

// Fields that may change between inputs of one context.
const VARIABLE_FIELDS = new Set(['transcript', 'continue', 'duration', 'flush', 'context_id']);
const ENCODINGS: Record<string, AudioEncoding> = { pcm_mulaw: 'mulaw', pcm_s16le: 'pcm_s16le' };
const DEFAULT_BUFFER_DELAY_MS = 3000;

export async function startFakeCartesia(options: FakeCartesiaOptions): Promise<FakeCartesia> {
  const received: FakeCartesia['received'] = { connections: [], messages: [], rejected: [], contexts: new Map() };
  const server = await startWsFakeServer(
    {
      check(req, url) {
        const rejection = checkUpgrade(req, url, options.apiKey);
        if (rejection) received.rejected.push({ status: rejection.status, body: rejection.body ?? '' });
        return rejection;
      },
      connected(ws, req, url) {
        received.connections.push({ headers: req.headers, query: Object.fromEntries(url.searchParams) });
        new CartesiaConnection(ws, options, received);
      },
    },
    options.port,
  );
  return {
    url: server.url,
    received,
    openConnections: () => server.openConnections(),
    dropConnections: (code, reason) => server.dropConnections(code, reason),
    stop: () => server.stop(),
  };
}

function checkUpgrade(req: http.IncomingMessage, url: URL, apiKey: string): UpgradeRejection | undefined {
  const json = (status: number, message: string): UpgradeRejection => ({
    status,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ error: message, message }),
  });
  if (url.pathname !== '/tts/websocket') return json(404, `Not found: ${url.pathname}`);
  const key = req.headers['x-api-key'] ?? url.searchParams.get('api_key');
  if (key !== apiKey) return json(401, 'Invalid API key');
  const version = req.headers['cartesia-version'] ?? url.searchParams.get('cartesia_version');
  if (typeof version !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(version)) return json(400, 'Missing or invalid Cartesia-Version');
  return undefined;
}

interface ContextState {
  record: FakeCartesiaContext;
  fields: string;
  request: Record<string, any>;
  buffer: string;
  bufferTimer?: NodeJS.Timeout;
  /** Transcripts released for generation, waiting their turn. */
  queue: Array<{ text: string; flushId?: number }>;
  busy: boolean;
  ending: boolean;
  samples: number;
  flushes: number;
}

class CartesiaConnection {
  private readonly contexts = new Map<string, ContextState>();
  private idleTimer?: NodeJS.Timeout;

  constructor(
    private readonly ws: WebSocket,
    private readonly options: FakeCartesiaOptions,
    private readonly received: FakeCartesia['received'],
  ) {
    ws.on('message', (data, isBinary) => {
      this.armIdle();
      if (!isBinary) this.message(data.toString());
    });
    ws.on('close', () => {
      if (this.idleTimer) clearTimeout(this.idleTimer);
      for (const ctx of this.contexts.values()) if (ctx.bufferTimer) clearTimeout(ctx.bufferTimer);
    });
    this.armIdle();
  }

  private armIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.ws.close(1000, 'idle timeout'), this.options.idleTimeoutMs ?? 5 * 60_000);
  }

  private message(text: string): void {
    let msg: Record<string, any>;
    try {
      msg = JSON.parse(text) as Record<string, any>;
    } catch {
      return this.error(undefined, 'Invalid JSON');
    }
    this.received.messages.push(msg);
    if (msg.cancel === true) return this.cancel(String(msg.context_id));

    const contextId = typeof msg.context_id === 'string' ? msg.context_id : crypto.randomUUID();
    const problem = validate(msg);
    if (problem) return this.error(contextId, problem);
    const fields = JSON.stringify(Object.entries(msg).filter(([k]) => !VARIABLE_FIELDS.has(k)).sort(([a], [b]) => a.localeCompare(b)));
    let ctx = this.contexts.get(contextId);
    if (!ctx) {
      const record: FakeCartesiaContext = { contextId, transcripts: [], cancelled: false, done: false, chunksSent: 0, audioBytesSent: 0 };
      this.received.contexts.set(contextId, record);
      ctx = { record, fields, request: msg, buffer: '', queue: [], busy: false, ending: false, samples: 0, flushes: 0 };
      this.contexts.set(contextId, ctx);
    }
    if (ctx.record.cancelled) return;
    if (ctx.ending || ctx.record.done) return this.error(contextId, `Context ${contextId} has already finished; start a new context`);
    if (ctx.fields !== fields) return this.error(contextId, 'Inputs on the same context must keep all fields except transcript, continue and duration the same');
    ctx.record.transcripts.push(msg.transcript);

    ctx.buffer += msg.transcript;
    const bufferDelayMs = typeof msg.max_buffer_delay_ms === 'number' ? msg.max_buffer_delay_ms : DEFAULT_BUFFER_DELAY_MS;
    const flushId = msg.flush === true ? ++ctx.flushes : undefined;
    if (msg.continue !== true) ctx.ending = true;
    if (bufferDelayMs === 0 || ctx.ending || flushId !== undefined) this.release(ctx, flushId);
    else if (!ctx.bufferTimer) ctx.bufferTimer = setTimeout(() => this.release(ctx!), bufferDelayMs);
  }

  /** Moves buffered text to generation. */
  private release(ctx: ContextState, flushId?: number): void {
    if (ctx.bufferTimer) clearTimeout(ctx.bufferTimer);
    ctx.bufferTimer = undefined;
    if (ctx.buffer.trim() || flushId !== undefined) ctx.queue.push({ text: ctx.buffer, flushId });
    ctx.buffer = '';
    this.pump(ctx);
  }

  private pump(ctx: ContextState): void {
    if (ctx.busy || ctx.record.cancelled) return;
    const next = ctx.queue.shift();
    if (!next) {
      if (ctx.ending && !ctx.buffer && !ctx.record.done) {
        ctx.record.done = true;
        sendJson(this.ws, { type: 'done', done: true, status_code: 206, context_id: ctx.record.contextId });
      }
      return;
    }
    ctx.busy = true;
    const format = ctx.request.output_format as { encoding: string; sample_rate: number };
    const encoding = ENCODINGS[format.encoding]!;
    const { audio, samples } = synthesize(next.text, this.options, ctx.samples, encoding, format.sample_rate);
    const startSecs = ctx.samples / format.sample_rate;
    ctx.samples += samples;
    const bytesPerMs = ((encoding === 'mulaw' ? 1 : 2) * format.sample_rate) / 1000;
    const chunks = next.text.trim() ? splitChunks(audio, this.options, bytesPerMs) : [];
    playChunks(
      chunks,
      this.options,
      (chunk) => {
        if (ctx.record.cancelled) return false;
        const sent = sendJson(this.ws, { type: 'chunk', data: chunk.toString('base64'), done: false, status_code: 206, step_time: 0, context_id: ctx.record.contextId });
        if (sent) {
          ctx.record.chunksSent++;
          ctx.record.audioBytesSent += chunk.length;
        }
        return sent;
      },
      (completed) => {
        ctx.busy = false;
        if (!completed) return;
        if (ctx.request.add_timestamps === true && next.text.trim()) this.timestamps(ctx, next.text, startSecs);
        if (next.flushId !== undefined) sendJson(this.ws, { type: 'flush_done', done: false, flush_done: true, flush_id: next.flushId, status_code: 206, context_id: ctx.record.contextId });
        this.pump(ctx);
      },
    );
  }

  private timestamps(ctx: ContextState, text: string, startSecs: number): void {
    const list = words(text);
    const msPerChar = this.options.msPerChar ?? FAKE_TTS_DEFAULTS.msPerChar;
    let t = startSecs;
    const start: number[] = [];
    const end: number[] = [];
    for (const w of list) {
      start.push(t);
      t += ([...w].length * msPerChar) / 1000;
      end.push(t);
    }
    sendJson(this.ws, { type: 'timestamps', done: false, status_code: 206, context_id: ctx.record.contextId, word_timestamps: { words: list, start, end } });
  }

  private cancel(contextId: string): void {
    const ctx = this.contexts.get(contextId);
    if (!ctx) return;
    ctx.record.cancelled = true;
    if (ctx.bufferTimer) clearTimeout(ctx.bufferTimer);
    ctx.queue = [];
  }

  private error(contextId: string | undefined, message: string): void {
    sendJson(this.ws, { type: 'error', done: true, status_code: 400, title: 'Invalid request', message, error: message, context_id: contextId });
  }
}

function validate(msg: Record<string, any>): string | undefined {
  if (typeof msg.model_id !== 'string' || !msg.model_id) return 'model_id is required';
  if (typeof msg.transcript !== 'string') return 'transcript must be a string';
  const voice = msg.voice as Record<string, unknown> | undefined;
  if (!voice || voice.mode !== 'id' || typeof voice.id !== 'string' || !voice.id) return 'voice must be {"mode":"id","id":"<voice id>"}';
  const format = msg.output_format as Record<string, unknown> | undefined;
  if (!format || format.container !== 'raw') return 'output_format.container must be "raw" on the WebSocket';
  if (typeof format.encoding !== 'string' || !(format.encoding in ENCODINGS)) return `The fake Cartesia only produces ${Object.keys(ENCODINGS).join(', ')}`;
  // Raw μ-law is telephony audio (8 kHz); 16-bit PCM at the rates Cartesia documents.
  const rates = format.encoding === 'pcm_mulaw' ? [8000] : [8000, 16000, 22050, 24000, 44100];
  if (!rates.includes(format.sample_rate as number)) return `The fake Cartesia produces ${String(format.encoding)} at ${rates.join(', ')} Hz only`;
  if (msg.continue !== undefined && typeof msg.continue !== 'boolean') return 'continue must be a boolean';
  if (msg.max_buffer_delay_ms !== undefined && (typeof msg.max_buffer_delay_ms !== 'number' || msg.max_buffer_delay_ms < 0 || msg.max_buffer_delay_ms > 5000)) {
    return 'max_buffer_delay_ms must be between 0 and 5000';
  }
  return undefined;
}
