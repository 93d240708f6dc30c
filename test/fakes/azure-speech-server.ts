/**
 * A local Azure Speech service speaking the WebSocket protocol of the Speech SDK
 * (`microsoft-cognitiveservices-speech-sdk`), reached with `SpeechConfig.fromHost(ws://…)` as an
 * on-premises container would be. Scripted transcripts and a tone instead of models.
 *
 * Framing: text frames are `Header: value\r\n…\r\n\r\n<body>`; binary frames are a 2-byte
 * big-endian header length, the ASCII headers, then the payload. Every message carries `Path` and
 * `X-RequestId`; the SDK ignores answers whose X-RequestId is not its current request's.
 *
 * Upgrade: key in `Ocp-Apim-Subscription-Key` (header or query) unless `apiKey` is null (a
 * container without billing key); else 401. Paths: recognition
 * `/speech/recognition/{conversation,interactive,dictation}/cognitiveservices/v1` and
 * `/stt/speech/universal/v2`; synthesis `/tts/cognitiveservices/websocket/v1`.
 *
 * Recognition: `speech.config`, `speech.context` (language from `phraseDetection.language` or the
 * `language` query, segmentation silence from `…segmentation.segmentationSilenceTimeoutMs`,
 * default 500 ms), then `audio` frames: the first is the WAV header (its rate is the audio's),
 * an empty one ends the audio. A 20 ms frame louder than `speechRms` is speech: the fake answers
 * `turn.start`, `speech.startDetected`, a `speech.hypothesis` per `hypothesisEveryMs` of speech
 * (the words of the next scripted text so far), `speech.phrase` (RecognitionStatus Success,
 * DisplayText) after the segmentation silence or at the end of audio, `speech.endDetected`,
 * `turn.end`. Offsets and durations in 100-ns ticks. A language outside `languages` closes the
 * socket with 1007, as the service does.
 *
 * Synthesis: `speech.config`, `synthesis.context` (outputFormat), `ssml`. Answers `turn.start`,
 * `response` (the audio stream id), binary `audio` frames (X-StreamId) in the requested format,
 * `audio.metadata` (SessionEnd), `turn.end`. A voice outside `voices` closes with 1007.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { WebSocket } from 'ws';
import { pcmFromBytes, rms } from '../../src/audio/pcm';
import { startWsFakeServer } from './ws-fake-server';
import { playChunks, splitChunks, synthesize, words, type AudioEncoding, type FakeTtsAudioOptions } from './fake-tts-audio';

export interface FakeAzureSpeechOptions extends FakeTtsAudioOptions {
  /** null: no key required (a container). */
  apiKey: string | null;
  port?: number;
  speechRms?: number;
  hypothesisEveryMs?: number;
  /** Delay of every speech.phrase. */
  phraseDelayMs?: number;
  languages?: string[];
  voices?: string[];
  /** Synthesis requests are accepted but never answered (a hung service). */
  silentSynthesis?: boolean;
}

export interface FakeAzureRecognition {
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  language?: string;
  context?: any;
  waveRate?: number;
  waveBits?: number;
  audioBytes: number;
  endOfAudio: boolean;
  phrases: string[];
}

export interface FakeAzureSynthesis {
  requestId: string;
  outputFormat: string;
  ssml: string;
  voice?: string;
  lang?: string;
  text: string;
  audioBytesSent: number;
  completed: boolean;
  /** The client went away before the audio was complete. */
  interrupted: boolean;
}

export interface FakeAzureSpeech {
  /** ws://127.0.0.1:<port>, for AZURE_SPEECH_HOST. */
  url: string;
  script(texts: string[] | ((audioMs: number) => string)): void;
  received: {
    recognitions: FakeAzureRecognition[];
    syntheses: FakeAzureSynthesis[];
    synthesisConnections: number;
    rejected: Array<{ status: number; path: string }>;
  };
  /** Connections open now (recognition and synthesis). */
  openConnections(): number;
  dropConnections(code?: number, reason?: string): void;
  stop(): Promise<void>;
}

const RECOGNITION_PATHS = [
  '/speech/recognition/conversation/cognitiveservices/v1',
  '/speech/recognition/interactive/cognitiveservices/v1',
  '/speech/recognition/dictation/cognitiveservices/v1',
  '/stt/speech/universal/v2',
];
const SYNTHESIS_PATH = '/tts/cognitiveservices/websocket/v1';
const FORMATS: Record<string, { encoding: AudioEncoding; rate: number; contentType: string }> = {
  'raw-8khz-8bit-mono-mulaw': { encoding: 'mulaw', rate: 8000, contentType: 'audio/x-mulaw' },
  'raw-8khz-16bit-mono-pcm': { encoding: 'pcm_s16le', rate: 8000, contentType: 'audio/x-wav' },
  'raw-16khz-16bit-mono-pcm': { encoding: 'pcm_s16le', rate: 16000, contentType: 'audio/x-wav' },
  'raw-24khz-16bit-mono-pcm': { encoding: 'pcm_s16le', rate: 24000, contentType: 'audio/x-wav' },
};
const TICKS_PER_MS = 10_000;
const FRAME_MS = 20;

interface Message {
  headers: Record<string, string>;
  body: Buffer;
}

export function parseSpeechMessage(data: Buffer, isBinary: boolean): Message {
  if (!isBinary) {
    const text = data.toString('utf8');
    const split = text.indexOf('\r\n\r\n');
    const head = split >= 0 ? text.slice(0, split) : text;
    return { headers: parseHeaders(head), body: Buffer.from(split >= 0 ? text.slice(split + 4) : '', 'utf8') };
  }
  const length = data.readUInt16BE(0);
  return { headers: parseHeaders(data.subarray(2, 2 + length).toString('ascii')), body: data.subarray(2 + length) };
}

function parseHeaders(head: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return headers;
}

function headerBlock(path: string, requestId: string, extra: Record<string, string>): string {
  const headers = { Path: path, 'X-RequestId': requestId, 'X-Timestamp': new Date().toISOString(), ...extra };
  return Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
}

function sendText(ws: WebSocket, path: string, requestId: string, body: unknown): void {
  if (ws.readyState !== WebSocket.OPEN) return;
  ws.send(`${headerBlock(path, requestId, { 'Content-Type': 'application/json; charset=utf-8' })}\r\n${JSON.stringify(body)}`);
}

function sendBinary(ws: WebSocket, path: string, requestId: string, extra: Record<string, string>, payload: Buffer): boolean {
  if (ws.readyState !== WebSocket.OPEN) return false;
  const head = Buffer.from(headerBlock(path, requestId, extra), 'ascii');
  const frame = Buffer.alloc(2 + head.length + payload.length);
  frame.writeUInt16BE(head.length, 0);
  head.copy(frame, 2);
  payload.copy(frame, 2 + head.length);
  ws.send(frame);
  return true;
}

export async function startFakeAzureSpeech(options: FakeAzureSpeechOptions): Promise<FakeAzureSpeech> {
  const queue: string[] = [];
  let transcriber: ((audioMs: number) => string) | undefined;
  const next = (audioMs: number) => queue.shift() ?? transcriber?.(audioMs) ?? '';
  const peek = () => queue[0] ?? '';
  const received: FakeAzureSpeech['received'] = { recognitions: [], syntheses: [], synthesisConnections: 0, rejected: [] };

  const server = await startWsFakeServer(
    {
      check(req, url) {
        const known = RECOGNITION_PATHS.includes(url.pathname) || url.pathname === SYNTHESIS_PATH;
        const key = req.headers['ocp-apim-subscription-key'] ?? url.searchParams.get('Ocp-Apim-Subscription-Key');
        const status = !known ? 404 : options.apiKey !== null && key !== options.apiKey ? 401 : 0;
        if (!status) return undefined;
        received.rejected.push({ status, path: url.pathname });
        return { status };
      },
      connected(ws, req, url) {
        if (url.pathname === SYNTHESIS_PATH) {
          received.synthesisConnections++;
          new SynthesisConnection(ws, options, received.syntheses);
          return;
        }
        const record: FakeAzureRecognition = {
          path: url.pathname,
          query: Object.fromEntries([...url.searchParams].filter(([k]) => k.toLowerCase() !== 'ocp-apim-subscription-key')),
          headers: req.headers,
          audioBytes: 0,
          endOfAudio: false,
          phrases: [],
        };
        received.recognitions.push(record);
        new RecognitionConnection(ws, record, options, next, peek);
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
    received,
    openConnections: () => server.openConnections(),
    dropConnections: server.dropConnections,
    stop: server.stop,
  };
}

class RecognitionConnection {
  private requestId = '';
  private turnStarted = false;
  private rate = 16000;
  private pending = Buffer.alloc(0);
  private positionMs = 0;
  private speechStartMs: number | null = null;
  private lastLoudMs = 0;
  private speechSinceHypothesisMs = 0;
  private segmentationMs = 500;
  private outbox: Promise<void> = Promise.resolve();

  constructor(
    private readonly ws: WebSocket,
    private readonly record: FakeAzureRecognition,
    private readonly options: FakeAzureSpeechOptions,
    private readonly next: (audioMs: number) => string,
    private readonly peek: () => string,
  ) {
    record.language = record.query.language;
    ws.on('message', (data: Buffer, isBinary) => this.message(parseSpeechMessage(data, isBinary)));
  }

  private message(msg: Message): void {
    const path = (msg.headers.path ?? '').toLowerCase();
    this.requestId = msg.headers['x-requestid'] ?? this.requestId;
    if (path === 'speech.context') {
      const context = JSON.parse(msg.body.toString('utf8') || '{}');
      this.record.context = context;
      this.record.language = context.phraseDetection?.language ?? this.record.language;
      const seg = context.phraseDetection?.conversation?.segmentation?.segmentationSilenceTimeoutMs;
      if (typeof seg === 'number') this.segmentationMs = seg;
      if (this.options.languages && this.record.language && !this.options.languages.includes(this.record.language)) {
        this.ws.close(1007, `Unsupported language: ${this.record.language}`);
      }
      return;
    }
    if (path !== 'audio') return;
    if ((msg.headers['content-type'] ?? '').startsWith('audio/x-wav') && msg.body.toString('ascii', 0, 4) === 'RIFF') {
      this.rate = msg.body.readUInt32LE(24);
      this.record.waveRate = this.rate;
      this.record.waveBits = msg.body.readUInt16LE(34);
      if (!this.turnStarted) {
        this.turnStarted = true;
        this.send('turn.start', { context: { serviceTag: crypto.randomUUID().replace(/-/g, '') } });
      }
      return;
    }
    if (msg.body.length === 0) {
      this.record.endOfAudio = true;
      if (this.speechStartMs !== null) this.phrase();
      this.send('speech.endDetected', { Offset: this.positionMs * TICKS_PER_MS });
      this.send('turn.end', {});
      return;
    }
    this.audio(msg.body);
  }

  private audio(bytes: Buffer): void {
    this.record.audioBytes += bytes.length;
    const frameBytes = (this.rate * FRAME_MS * 2) / 1000;
    let data = Buffer.concat([this.pending, bytes]);
    while (data.length >= frameBytes) {
      this.frame(data.subarray(0, frameBytes));
      data = data.subarray(frameBytes);
    }
    this.pending = Buffer.from(data);
  }

  private frame(frame: Buffer): void {
    const loud = rms(pcmFromBytes(Buffer.from(frame))) >= (this.options.speechRms ?? 300);
    this.positionMs += FRAME_MS;
    if (loud) {
      this.lastLoudMs = this.positionMs;
      if (this.speechStartMs === null) {
        this.speechStartMs = this.positionMs - FRAME_MS;
        this.speechSinceHypothesisMs = 0;
        this.send('speech.startDetected', { Offset: this.speechStartMs * TICKS_PER_MS });
      }
      this.speechSinceHypothesisMs += FRAME_MS;
      const every = this.options.hypothesisEveryMs ?? 300;
      if (every > 0 && this.speechSinceHypothesisMs >= every) {
        this.speechSinceHypothesisMs = 0;
        const all = words(this.peek());
        const heard = Math.min(all.length, Math.max(1, Math.floor((this.positionMs - this.speechStartMs) / 400)));
        if (all.length > 0) this.send('speech.hypothesis', { Text: all.slice(0, heard).join(' '), Offset: this.speechStartMs * TICKS_PER_MS, Duration: (this.positionMs - this.speechStartMs) * TICKS_PER_MS });
      }
      return;
    }
    if (this.speechStartMs !== null && this.positionMs - this.lastLoudMs >= this.segmentationMs) this.phrase();
  }

  private phrase(): void {
    const start = this.speechStartMs!;
    const text = this.next(this.lastLoudMs - start);
    this.record.phrases.push(text);
    this.speechStartMs = null;
    const body = text
      ? { RecognitionStatus: 'Success', DisplayText: text, Offset: start * TICKS_PER_MS, Duration: (this.lastLoudMs - start) * TICKS_PER_MS, Channel: 0 }
      : { RecognitionStatus: 'NoMatch', Offset: start * TICKS_PER_MS, Duration: (this.lastLoudMs - start) * TICKS_PER_MS };
    this.send('speech.phrase', body, this.options.phraseDelayMs ?? 0);
  }

  private send(path: string, body: unknown, delayMs = 0): void {
    const requestId = this.requestId;
    this.outbox = this.outbox.then(async () => {
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      sendText(this.ws, path, requestId, body);
    });
  }
}

class SynthesisConnection {
  private outputFormat = 'riff-16khz-16bit-mono-pcm';

  constructor(
    private readonly ws: WebSocket,
    private readonly options: FakeAzureSpeechOptions,
    private readonly syntheses: FakeAzureSynthesis[],
  ) {
    ws.on('message', (data: Buffer, isBinary) => this.message(parseSpeechMessage(data, isBinary)));
  }

  private message(msg: Message): void {
    const path = (msg.headers.path ?? '').toLowerCase();
    const requestId = msg.headers['x-requestid'] ?? '';
    if (path === 'synthesis.context') {
      const context = JSON.parse(msg.body.toString('utf8') || '{}');
      this.outputFormat = context.synthesis?.audio?.outputFormat ?? this.outputFormat;
      return;
    }
    if (path !== 'ssml') return;
    const ssml = msg.body.toString('utf8');
    const voice = /<voice[^>]*\sname=['"]([^'"]+)['"]/.exec(ssml)?.[1];
    const lang = /<speak[^>]*\sxml:lang=['"]([^'"]+)['"]/.exec(ssml)?.[1];
    const text = decodeXml(ssml.replace(/<[^>]+>/g, ''));
    const record: FakeAzureSynthesis = { requestId, outputFormat: this.outputFormat, ssml, voice, lang, text, audioBytesSent: 0, completed: false, interrupted: false };
    this.syntheses.push(record);
    if (this.options.silentSynthesis) return;
    const format = FORMATS[this.outputFormat];
    if (!format) {
      this.ws.close(1007, `Unsupported output format: ${this.outputFormat}`);
      return;
    }
    if (this.options.voices && (!voice || !this.options.voices.includes(voice))) {
      this.ws.close(1007, `Unsupported voice ${voice}.`);
      return;
    }
    const streamId = crypto.randomUUID().replace(/-/g, '').toUpperCase();
    sendText(this.ws, 'turn.start', requestId, { context: { serviceTag: crypto.randomUUID().replace(/-/g, '') } });
    sendText(this.ws, 'response', requestId, { context: { serviceTag: '' }, audio: { type: 'inline', streamId } });
    const { audio } = synthesize(text, this.options, 0, format.encoding, format.rate);
    const bytesPerMs = ((format.encoding === 'mulaw' ? 1 : 2) * format.rate) / 1000;
    playChunks(
      splitChunks(audio, this.options, bytesPerMs),
      this.options,
      (chunk) => {
        const sent = sendBinary(this.ws, 'audio', requestId, { 'X-StreamId': streamId, 'Content-Type': format.contentType }, chunk);
        if (sent) record.audioBytesSent += chunk.length;
        return sent;
      },
      (completed) => {
        if (!completed) {
          record.interrupted = true;
          return;
        }
        record.completed = true;
        const durationTicks = Math.round((audio.length / bytesPerMs) * TICKS_PER_MS);
        sendText(this.ws, 'audio.metadata', requestId, { Metadata: [{ Type: 'SessionEnd', Data: { Offset: durationTicks } }] });
        sendText(this.ws, 'turn.end', requestId, {});
      },
    );
  }
}

function decodeXml(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
}
