/**
 * A local OpenAI `POST /v1/audio/transcriptions` server speaking the real wire protocol:
 * multipart/form-data upload (`file`, `model`, `language`, `prompt`, `response_format`,
 * `temperature`), `Authorization: Bearer <key>`, JSON `{"text": …}` (or plain text for
 * `response_format=text`) and OpenAI's error JSON (`{"error": {message, type, param, code}}`).
 *
 * The uploaded file must be a WAV the fake can read (16-bit PCM or mu-law); its duration and
 * loudness are recorded. The transcript is the next scripted text, or the transcriber's answer.
 * Zero latency unless `delayMs` is set.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseWav } from '../../src/audio/wav';
import { rms } from '../../src/audio/pcm';

export const OPENAI_TRANSCRIBE_MODELS = ['whisper-1', 'gpt-4o-transcribe', 'gpt-4o-mini-transcribe'];

export interface FakeTranscriptionRequest {
  headers: http.IncomingHttpHeaders;
  fields: Record<string, string>;
  fileName: string;
  fileType: string;
  sampleRate: number;
  durationMs: number;
  rms: number;
}

export interface FakeOpenAiTranscription {
  /** Base URL ending in /v1 (OPENAI_STT_BASE_URL). */
  url: string;
  requests: FakeTranscriptionRequest[];
  /** Texts used in order; a function answers when the queue is empty. */
  script(texts: string[] | ((req: FakeTranscriptionRequest) => string)): void;
  /** Delay of every response. */
  setDelay(ms: number): void;
  /** The next n requests answer this status with an OpenAI error body. */
  failNext(n: number, status: number, message?: string): void;
  /** Requests not yet answered or abandoned: what a call still holds of this vendor. */
  openRequests(): number;
  stop(): Promise<void>;
}

export async function startFakeOpenAiTranscription(options: { apiKey: string; port?: number }): Promise<FakeOpenAiTranscription> {
  const requests: FakeTranscriptionRequest[] = [];
  const queue: string[] = [];
  let transcriber: ((req: FakeTranscriptionRequest) => string) | undefined;
  let delayMs = 0;
  let failures: { n: number; status: number; message?: string } = { n: 0, status: 500 };

  let inFlight = 0;
  const server = http.createServer((req, res) => {
    inFlight++;
    res.once('close', () => inFlight--);
    void handle(req, res).catch((err) => sendError(res, 500, (err as Error).message, 'server_error'));
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (req.method !== 'POST' || req.url !== '/v1/audio/transcriptions') return sendError(res, 404, `Invalid URL (${req.method} ${req.url})`, 'invalid_request_error');
    if (req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendError(res, 401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    }
    const contentType = req.headers['content-type'] ?? '';
    if (!contentType.startsWith('multipart/form-data')) return sendError(res, 400, 'Expected multipart/form-data', 'invalid_request_error');
    // undici parses multipart bodies for us: the fake reads the upload as a real server would.
    const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
    const fields: Record<string, string> = {};
    let file: File | undefined;
    for (const [k, v] of form.entries()) {
      if (typeof v === 'string') fields[k] = v;
      else file = v as File;
    }
    if (!file) return sendError(res, 400, "you must provide a 'file'", 'invalid_request_error', null, 'file');
    if (!fields.model) return sendError(res, 400, "you must provide a model parameter", 'invalid_request_error', null, 'model');
    if (!OPENAI_TRANSCRIBE_MODELS.includes(fields.model)) return sendError(res, 404, `The model \`${fields.model}\` does not exist or you do not have access to it.`, 'invalid_request_error', 'model_not_found');
    if (fields.language && !/^[a-z]{2}$/.test(fields.language)) {
      return sendError(res, 400, `Invalid language '${fields.language}'. Language parameter must be specified in ISO-639-1 format.`, 'invalid_request_error', null, 'language');
    }
    let wav;
    try {
      wav = parseWav(Buffer.from(await file.arrayBuffer()));
    } catch {
      return sendError(res, 400, 'Invalid file format. Supported formats: flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm', 'invalid_request_error');
    }
    const record: FakeTranscriptionRequest = {
      headers: req.headers,
      fields,
      fileName: file.name,
      fileType: file.type,
      sampleRate: wav.sampleRate,
      durationMs: wav.durationMs,
      rms: rms(wav.samples),
    };
    requests.push(record);
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    if (failures.n > 0) {
      failures.n--;
      return sendError(res, failures.status, failures.message ?? 'The server had an error while processing your request.', 'server_error');
    }
    const text = queue.shift() ?? transcriber?.(record) ?? '';
    if (fields.response_format === 'text') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(text);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ text, usage: { type: 'duration', seconds: Math.ceil(wav.durationMs / 1000) } }));
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    script(texts) {
      if (typeof texts === 'function') transcriber = texts;
      else queue.push(...texts);
    },
    setDelay(ms) {
      delayMs = ms;
    },
    failNext(n, status, message) {
      failures = { n, status, message };
    },
    openRequests: () => inFlight,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendError(res: http.ServerResponse, status: number, message: string, type: string, code: string | null = null, param: string | null = null): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, type, param, code } }));
}
