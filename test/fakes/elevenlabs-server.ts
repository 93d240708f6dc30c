/**
 * A local ElevenLabs input-streaming TTS server (`/v1/text-to-speech/{voice_id}/stream-input`)
 * speaking the real protocol, with a tone instead of a voice (see fake-tts-audio.ts: 60 ms of
 * audio per character by default).
 *
 * - The key comes in the `xi-api-key` header (checked on connect) or as `xi_api_key` in the
 *   first message. A wrong key, unknown voice or unsupported output_format answers the way
 *   ElevenLabs reports input errors: a `{"message","error","code":1008}` message, then close 1008.
 * - The first message must be `{"text":" "}` (voice_settings / generation_config may ride
 *   along); later messages may repeat voice_settings only unchanged.
 * - Text is buffered and generated when the buffer reaches the chunk_length_schedule
 *   (default [120,160,250,290] characters), on `flush:true`, on every message with
 *   `auto_mode=true`, and at `{"text":""}`, which ends the stream: remaining audio, then
 *   `{"isFinal":true}`, then close 1000.
 * - Audio messages: `{"audio": base64, "isFinal": null, "normalizedAlignment", "alignment"}`.
 * - Closes after `inactivity_timeout` seconds (default 20) without a message, like ElevenLabs;
 *   `inactivityTimeoutMs` overrides that for fast tests.
 */
import type http from 'node:http';
import type { WebSocket } from 'ws';
import { FAKE_TTS_DEFAULTS, playChunks, splitChunks, synthesize, type AudioEncoding, type FakeTtsAudioOptions } from './fake-tts-audio';
import { sendJson, startWsFakeServer, type UpgradeRejection } from './ws-fake-server';

export interface FakeElevenLabsOptions extends FakeTtsAudioOptions {
  apiKey: string;
  port?: number;
  /** Known voice ids; unset = any voice id is accepted. */
  voiceIds?: string[];
  /** Overrides the inactivity timeout the client asked for. */
  inactivityTimeoutMs?: number;
}

export interface FakeElevenLabsConnection {
  voiceId: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  /** Every JSON message received, in order. */
  messages: Array<Record<string, any>>;
  /** The text of each generation, in order. */
  generations: string[];
  audioBytesSent: number;
  chunksSent: number;
  sentFinal: boolean;
  closed?: { code: number; by: 'client' | 'server'; reason: string };
}

export interface FakeElevenLabs {
  url: string;
  received: {
    connections: FakeElevenLabsConnection[];
    rejected: Array<{ status: number; body: string }>;
  };
  /** Connections currently open. */
  openConnections(): number;
  /** Closes every open connection from the server side (default 1011), as an outage would. */
  dropConnections(code?: number, reason?: string): void;
  stop(): Promise<void>;
}

const OUTPUT_FORMATS: Record<string, { encoding: AudioEncoding; rate: number }> = {
  ulaw_8000: { encoding: 'mulaw', rate: 8000 },
  pcm_8000: { encoding: 'pcm_s16le', rate: 8000 },
  pcm_16000: { encoding: 'pcm_s16le', rate: 16000 },
  pcm_22050: { encoding: 'pcm_s16le', rate: 22050 },
  pcm_24000: { encoding: 'pcm_s16le', rate: 24000 },
};
const DEFAULT_SCHEDULE = [120, 160, 250, 290];
const DEFAULT_INACTIVITY_SECS = 20;
const PATH = /^\/v1\/text-to-speech\/([^/]+)\/stream-input$/;

export async function startFakeElevenLabs(options: FakeElevenLabsOptions): Promise<FakeElevenLabs> {
  const received: FakeElevenLabs['received'] = { connections: [], rejected: [] };
  let open = 0;
  const server = await startWsFakeServer(
    {
      check(_req, url) {
        if (PATH.test(url.pathname)) return undefined;
        const rejection: UpgradeRejection = { status: 404, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ detail: { status: 'not_found', message: 'Not found' } }) };
        received.rejected.push({ status: 404, body: rejection.body! });
        return rejection;
      },
      connected(ws, req, url) {
        const voiceId = decodeURIComponent(PATH.exec(url.pathname)![1]!);
        const record: FakeElevenLabsConnection = {
          voiceId,
          query: Object.fromEntries(url.searchParams),
          headers: req.headers,
          messages: [],
          generations: [],
          audioBytesSent: 0,
          chunksSent: 0,
          sentFinal: false,
        };
        received.connections.push(record);
        open++;
        ws.on('close', () => open--);
        new ElevenLabsStream(ws, record, options);
      },
    },
    options.port,
  );
  return {
    url: server.url,
    received,
    openConnections: () => open,
    dropConnections: (code, reason) => server.dropConnections(code, reason),
    stop: () => server.stop(),
  };
}

class ElevenLabsStream {
  private readonly format?: { encoding: AudioEncoding; rate: number };
  private readonly autoMode: boolean;
  private readonly inactivityMs: number;
  private authorized = false;
  private initialised = false;
  private voiceSettings?: string;
  private schedule = DEFAULT_SCHEDULE;
  private buffer = '';
  private queue: string[] = [];
  private busy = false;
  private ending = false;
  private samples = 0;
  private idleTimer?: NodeJS.Timeout;
  private closing = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly record: FakeElevenLabsConnection,
    private readonly options: FakeElevenLabsOptions,
  ) {
    const q = record.query;
    this.format = OUTPUT_FORMATS[q.output_format ?? 'mp3_44100_128'];
    this.autoMode = q.auto_mode === 'true';
    const secs = q.inactivity_timeout !== undefined ? Number(q.inactivity_timeout) : DEFAULT_INACTIVITY_SECS;
    this.inactivityMs = options.inactivityTimeoutMs ?? secs * 1000;
    ws.on('message', (data, isBinary) => this.message(isBinary ? null : data.toString()));
    ws.on('close', (code, reason) => {
      if (this.idleTimer) clearTimeout(this.idleTimer);
      this.closing = true;
      record.closed ??= { code, by: 'client', reason: reason.toString() };
    });

    const problem = this.connectionProblem(secs);
    if (problem) this.fail(problem.error, problem.message);
    else this.armIdle();
  }

  /** What ElevenLabs would refuse about this connection before any text. */
  private connectionProblem(inactivitySecs: number): { error: string; message: string } | undefined {
    const q = this.record.query;
    const headerKey = this.record.headers['xi-api-key'];
    if (headerKey !== undefined) {
      if (headerKey !== this.options.apiKey) return { error: 'invalid_api_key', message: 'Invalid API key' };
      this.authorized = true;
    }
    if (!this.format) return { error: 'invalid_output_format', message: `Unsupported output_format ${q.output_format ?? '(default mp3_44100_128)'} in the fake; use ulaw_8000 or pcm_8000/16000/22050/24000` };
    if (this.options.voiceIds && !this.options.voiceIds.includes(this.record.voiceId)) {
      return { error: 'voice_not_found', message: `A voice with the voice_id ${this.record.voiceId} was not found.` };
    }
    if (!(inactivitySecs >= 5 && inactivitySecs <= 180)) return { error: 'invalid_inactivity_timeout', message: 'inactivity_timeout must be between 5 and 180 seconds' };
    return undefined;
  }

  private armIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const secs = Math.round(this.inactivityMs / 1000);
    this.idleTimer = setTimeout(
      () =>
        this.close(
          1008,
          `Have not received a new text input within the timeout of ${secs} seconds. Streaming input terminated. Please make sure to either feed the input in the timely manner, or to send the end of input text (empty string "") when done.`,
        ),
      this.inactivityMs,
    );
  }

  private message(text: string | null): void {
    if (this.closing) return;
    this.armIdle();
    let msg: Record<string, any>;
    try {
      if (text === null) throw new Error('binary');
      msg = JSON.parse(text) as Record<string, any>;
    } catch {
      return this.fail('input_message_json_decode_fail', 'Could not parse input message as JSON, ensure to send a valid JSON.');
    }
    this.record.messages.push(msg);
    if (typeof msg.text !== 'string') return this.fail('invalid_input_message', 'Could not parse input message, make sure it is a json and follows the schema outlined in protocol.');

    if (!this.initialised) {
      if (!this.authorized) {
        if (msg.xi_api_key !== this.options.apiKey) return this.fail('invalid_api_key', 'Invalid API key');
        this.authorized = true;
      }
      if (msg.text !== ' ') return this.fail('invalid_input_message', 'The first message must contain a single space as text (" ").');
      this.initialised = true;
      this.voiceSettings = JSON.stringify(msg.voice_settings ?? null);
      const schedule = msg.generation_config?.chunk_length_schedule;
      if (Array.isArray(schedule) && schedule.length > 0) this.schedule = schedule as number[];
      return;
    }
    if (msg.voice_settings !== undefined && JSON.stringify(msg.voice_settings) !== this.voiceSettings) {
      return this.fail('invalid_input_message', 'voice_settings field must be provided in the first message and then either be not provided or not change.');
    }
    if (this.ending) return;
    if (msg.text === '') {
      this.ending = true;
      this.release();
      return;
    }
    this.buffer += msg.text;
    const threshold = this.schedule[Math.min(this.record.generations.length, this.schedule.length - 1)]!;
    if (this.autoMode || msg.flush === true || msg.try_trigger_generation === true || [...this.buffer].length >= threshold) this.release();
  }

  private release(): void {
    if (this.buffer.trim()) this.queue.push(this.buffer);
    this.buffer = '';
    this.pump();
  }

  private pump(): void {
    if (this.busy || this.closing) return;
    const text = this.queue.shift();
    if (text === undefined) {
      if (this.ending && !this.record.sentFinal) {
        this.record.sentFinal = true;
        sendJson(this.ws, { isFinal: true });
        this.close(1000, '');
      }
      return;
    }
    this.busy = true;
    this.record.generations.push(text);
    const format = this.format!;
    const { audio, samples } = synthesize(text, this.options, this.samples, format.encoding, format.rate);
    const offsetMs = (this.samples / format.rate) * 1000;
    this.samples += samples;
    const chunks = splitChunks(audio, this.options, ((format.encoding === 'mulaw' ? 1 : 2) * format.rate) / 1000);
    playChunks(
      chunks,
      this.options,
      (chunk, index) => {
        if (this.closing) return false;
        const alignment = index === 0 ? this.alignment(text, offsetMs) : null;
        const sent = sendJson(this.ws, { audio: chunk.toString('base64'), isFinal: null, normalizedAlignment: alignment, alignment });
        if (sent) {
          this.record.chunksSent++;
          this.record.audioBytesSent += chunk.length;
        }
        return sent;
      },
      () => {
        this.busy = false;
        this.pump();
      },
    );
  }

  private alignment(text: string, offsetMs: number): Record<string, unknown> {
    const chars = [...text.trim()];
    const msPerChar = this.options.msPerChar ?? FAKE_TTS_DEFAULTS.msPerChar;
    return { chars, charStartTimesMs: chars.map((_, i) => Math.round(offsetMs + i * msPerChar)), charDurationsMs: chars.map(() => msPerChar) };
  }

  private fail(error: string, message: string): void {
    sendJson(this.ws, { message, error, code: 1008 });
    this.close(1008, message);
  }

  private close(code: number, reason: string): void {
    if (this.closing) return;
    this.closing = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.record.closed = { code, by: 'server', reason };
    // Close reasons are limited to 123 bytes by the WebSocket protocol.
    this.ws.close(code, Buffer.from(reason).subarray(0, 123).toString());
  }
}
