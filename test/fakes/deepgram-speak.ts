/**
 * The Aura TTS half of the fake Deepgram (`/v1/speak` WebSocket), served by startFakeDeepgram on
 * the same port as `/v1/listen`, as the real API shares one host (DEEPGRAM_BASE_URL).
 *
 * - Upgrade checks like Deepgram: `Authorization: Token <key>` else 401; an unknown model, an
 *   encoding other than linear16/mulaw/alaw or a sample rate the encoding does not allow → 400.
 * - `{"type":"Speak","text"}` buffers text; `{"type":"Flush"}` synthesises the buffer (the shared
 *   fake "speech" tone, in the requested encoding and rate), sends it as binary frames, then
 *   `{"type":"Flushed","sequence_id"}`. Flushes are generated one after the other, in order.
 * - `{"type":"Clear"}` drops the buffer and stops the audio being sent → `{"type":"Cleared"}`.
 * - `{"type":"Close"}` → close 1000. Text containing `errorText` → `{"type":"Error"}` instead of audio.
 */
import type http from 'node:http';
import type { WebSocket } from 'ws';
import { playChunks, splitChunks, synthesize, type FakeTtsAudioOptions } from './fake-tts-audio';
import { sendJson, type UpgradeRejection } from './ws-fake-server';

export interface FakeDeepgramSpeakOptions extends FakeTtsAudioOptions {
  /** Models accepted; unset = any `aura-…` model. */
  models?: string[];
  /** A Speak text containing this answers an Error message instead of audio. */
  errorText?: string;
}

export interface FakeDeepgramSpeakConnection {
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  /** Every JSON message received, in order. */
  messages: Array<Record<string, any>>;
  /** Texts synthesised, one per Flush. */
  spoken: string[];
  audioBytesSent: number;
  clears: number;
}

export interface FakeDeepgramSpeak {
  connections: FakeDeepgramSpeakConnection[];
  rejected: Array<{ status: number; reason: string }>;
  readonly messages: Array<Record<string, any>>;
}

const RATES: Record<string, number[]> = { linear16: [8000, 16000, 24000, 32000, 48000], mulaw: [8000, 16000], alaw: [8000, 16000] };

export function speakCheck(req: http.IncomingMessage, url: URL, apiKey: string, options: FakeDeepgramSpeakOptions): UpgradeRejection | undefined {
  const fail = (status: number, errMsg: string): UpgradeRejection => ({
    status,
    headers: { 'dg-error': errMsg, 'content-type': 'application/json' },
    body: JSON.stringify({ err_code: status === 401 ? 'INVALID_AUTH' : 'Bad Request', err_msg: errMsg }),
  });
  if ((req.headers.authorization ?? '') !== `Token ${apiKey}`) return fail(401, 'Invalid credentials.');
  const q = url.searchParams;
  const model = q.get('model') ?? 'aura-asteria-en';
  if (options.models ? !options.models.includes(model) : !model.startsWith('aura')) return fail(400, `No such model: ${model}`);
  const encoding = q.get('encoding') ?? 'linear16';
  if (!RATES[encoding]) return fail(400, `Unsupported encoding: ${encoding}`);
  const rate = Number(q.get('sample_rate') ?? 24000);
  if (!RATES[encoding]!.includes(rate)) return fail(400, `Unsupported sample_rate ${rate} for ${encoding}`);
  return undefined;
}

export function speakConnected(ws: WebSocket, req: http.IncomingMessage, url: URL, options: FakeDeepgramSpeakOptions, record: FakeDeepgramSpeak): void {
  const conn: FakeDeepgramSpeakConnection = { query: Object.fromEntries(url.searchParams), headers: req.headers, messages: [], spoken: [], audioBytesSent: 0, clears: 0 };
  record.connections.push(conn);
  const encoding = url.searchParams.get('encoding') ?? 'linear16';
  const rate = Number(url.searchParams.get('sample_rate') ?? 24000);
  const bytesPerMs = ((encoding === 'linear16' ? 2 : 1) * rate) / 1000;
  let buffer = '';
  let sequence = 0;
  let samples = 0;
  // Flushes waiting to be generated, and the epoch that a Clear advances to cancel them.
  const jobs: string[] = [];
  let generating = false;
  let epoch = 0;

  const next = (): void => {
    if (generating) return;
    const text = jobs.shift();
    if (text === undefined) return;
    generating = true;
    const mine = epoch;
    const done = (): void => {
      generating = false;
      if (mine === epoch) sendJson(ws, { type: 'Flushed', sequence_id: sequence++ });
      next();
    };
    if (options.errorText && text.includes(options.errorText)) {
      sendJson(ws, { type: 'Error', err_code: 'INVALID_INPUT', description: 'Text could not be synthesised.' });
      generating = false;
      return next();
    }
    conn.spoken.push(text);
    const { audio, samples: n } = synthesize(text, options, samples, encoding === 'linear16' ? 'pcm_s16le' : 'mulaw', rate);
    samples += n;
    const chunks = splitChunks(audio, options, bytesPerMs);
    playChunks(
      chunks,
      options,
      (chunk) => {
        if (mine !== epoch || ws.readyState !== ws.OPEN) return false;
        ws.send(chunk, { binary: true });
        conn.audioBytesSent += chunk.length;
        return true;
      },
      done,
    );
  };

  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    let msg: Record<string, any>;
    try {
      msg = JSON.parse(data.toString());
    } catch {
      sendJson(ws, { type: 'Warning', warn_code: 'INVALID_JSON', warn_msg: 'Could not parse the message.' });
      return;
    }
    conn.messages.push(msg);
    switch (msg.type) {
      case 'Speak':
        buffer += String(msg.text ?? '');
        return;
      case 'Flush':
        jobs.push(buffer);
        buffer = '';
        return next();
      case 'Clear':
        conn.clears++;
        epoch++;
        buffer = '';
        jobs.length = 0;
        sendJson(ws, { type: 'Cleared', sequence_id: sequence });
        return;
      case 'Close':
        ws.close(1000);
        return;
      default:
        sendJson(ws, { type: 'Warning', warn_code: 'UNKNOWN_MESSAGE_TYPE', warn_msg: `Unknown message type: ${msg.type}` });
    }
  });
}

