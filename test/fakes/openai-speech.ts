/**
 * `POST /v1/audio/speech` of the fake OpenAI server: the real request and error shapes, the
 * audio streamed chunk by chunk (chunked transfer) as OpenAI does with `response_format: "pcm"`
 * (raw 16-bit little-endian, 24 kHz, mono). The audio is the shared fake "speech" tone.
 *
 * - No `Authorization: Bearer …` → 401. Unknown model → 404 `model_not_found`; unknown voice,
 *   empty or > 4096-character input, or a format other than pcm → 400.
 * - `input` containing `errorText` → 500; `headerDelayMs` holds the response headers back (timeouts).
 */
import type http from 'node:http';
import { playChunks, splitChunks, synthesize, type FakeTtsAudioOptions } from './fake-tts-audio';

export interface FakeOpenAISpeechOptions extends FakeTtsAudioOptions {
  errorText?: string;
  /** Wait before the response headers, fixed or per input (to make a later sentence answer first). */
  headerDelayMs?: number | ((input: string) => number);
}

export interface SpeechRequest {
  body: any;
  headers: http.IncomingHttpHeaders;
  /** Audio bytes written before the response ended or the client went away. */
  audioBytes: number;
  /** The client closed the connection before all audio was sent (barge-in). */
  aborted: boolean;
}

export const SPEECH_MODELS = ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts'];
export const SPEECH_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer', 'verse', 'marin', 'cedar'];
const PCM_RATE = 24_000;

type SendError = (res: http.ServerResponse, status: number, message: string) => void;

export async function handleSpeech(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  rawBody: string,
  options: FakeOpenAISpeechOptions,
  log: SpeechRequest[],
  sendError: SendError,
): Promise<void> {
  let body: any;
  try {
    body = JSON.parse(rawBody);
  } catch {
    return sendError(res, 400, 'We could not parse the JSON body of your request.');
  }
  const record: SpeechRequest = { body, headers: { ...req.headers }, audioBytes: 0, aborted: false };
  log.push(record);
  if (!/^Bearer \S+/.test(String(req.headers.authorization ?? ''))) return sendError(res, 401, 'You didn\'t provide an API key.');
  if (!SPEECH_MODELS.includes(body?.model)) return sendError(res, 404, `The model '${body?.model}' does not exist or you do not have access to it.`);
  if (!SPEECH_VOICES.includes(body?.voice)) return sendError(res, 400, `Invalid value for 'voice': '${body?.voice}'.`);
  const input = typeof body?.input === 'string' ? body.input : '';
  if (!input || input.length > 4096) return sendError(res, 400, "Invalid 'input': string must be 1 to 4096 characters.");
  if (body.response_format !== 'pcm') return sendError(res, 400, 'The fake OpenAI only produces response_format "pcm".');
  if (options.errorText && input.includes(options.errorText)) return sendError(res, 500, 'The server had an error while processing your request.');
  const delay = typeof options.headerDelayMs === 'function' ? options.headerDelayMs(input) : options.headerDelayMs;
  if (delay) await new Promise((r) => setTimeout(r, delay));
  if (res.destroyed) return;

  const { audio } = synthesize(input, options, 0, 'pcm_s16le', PCM_RATE);
  res.writeHead(200, { 'content-type': 'audio/pcm', 'transfer-encoding': 'chunked' });
  res.on('close', () => {
    if (!res.writableEnded) record.aborted = true;
  });
  playChunks(
    splitChunks(audio, options, (PCM_RATE * 2) / 1000),
    options,
    (chunk) => {
      if (res.destroyed) return false;
      res.write(chunk);
      record.audioBytes += chunk.length;
      return true;
    },
    () => {
      if (!res.destroyed) res.end();
    },
  );
}
