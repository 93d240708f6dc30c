/**
 * OpenAI TTS (`POST /v1/audio/speech`, `response_format: "pcm"`: raw 16-bit 24 kHz mono, streamed
 * as it is generated) through the official SDK, which streams the response body and takes a base
 * URL (OPENAI_BASE_URL: the fake, or any OpenAI-compatible speech server).
 *
 * There is no session socket: every sentence is its own request, started the moment the sentence
 * exists, so the first sentence's audio does not wait for the rest of the reply and later
 * sentences are generated while earlier ones play. Their audio is emitted strictly in sentence
 * order and resampled once, per utterance, from 24 kHz PCM to the call stream's format. Barge-in
 * aborts the utterance's requests.
 */
import OpenAI from 'openai';
import { FormatConverter, MULAW_8K, type AudioFormat } from '../../../audio/format';
import { createLogger } from '../../../shared/logger';
import { countCharacters, SpeechProviderError } from '../../speech-socket';
import { TtsSessionBase } from '../session-base';
import type { TtsOptions, TtsSession } from '../types';

const log = createLogger('tts.openai');

export const OPENAI_TTS_DEFAULTS = {
  // Listed by the official openai SDK 6.49.0 (SpeechModel).
  model: 'gpt-4o-mini-tts',
  voice: 'alloy',
  // What `response_format: "pcm"` is: 24 kHz, 16-bit little-endian, mono.
  pcmRate: 24_000,
  // Until the response headers arrive; the audio then streams for as long as it takes.
  firstByteTimeoutMs: 10_000,
} as const;

// OpenAI refuses an `input` longer than this.
const MAX_INPUT_CHARS = 4096;
// Request fields an agent's tts_settings may not change: the audio must be what we decode.
const FIXED_FIELDS = new Set(['input', 'response_format', 'stream_format']);

const PCM_24K: AudioFormat = Object.freeze({ encoding: 'pcm16', sampleRate: OPENAI_TTS_DEFAULTS.pcmRate });

interface Part {
  chunks: Buffer[];
  done: boolean;
}

interface Utterance {
  id: string;
  characters: number;
  ended: boolean;
  parts: Part[];
  /** The part whose audio is being emitted; later parts buffer until it is done. */
  playing: number;
  converter: FormatConverter;
  abort: AbortController;
}

export class OpenAiTts extends TtsSessionBase<Utterance> implements TtsSession {
  readonly provider = 'openai';
  // No connection to warm: requests reuse fetch's keep-alive pool.
  readonly ready = Promise.resolve();
  charactersSent = 0;

  private readonly client: OpenAI;
  private readonly format: AudioFormat;
  private readonly request: Record<string, unknown>;
  private readonly timeoutMs: number;

  constructor(options: TtsOptions) {
    super(log);
    this.format = options.format ?? MULAW_8K;
    this.timeoutMs = options.handshakeTimeoutMs ?? OPENAI_TTS_DEFAULTS.firstByteTimeoutMs;
    // The first-byte timeout is ours (fetchPart): the SDK's cannot be told apart from a cancel everywhere.
    this.client = new OpenAI({ apiKey: options.apiKey, baseURL: options.baseUrl, maxRetries: 0 });
    this.request = openAiSpeechRequest(options);
  }

  startUtterance(id: string): void {
    this.claimId(id);
    this.utterances.set(id, { id, characters: 0, ended: false, parts: [], playing: 0, converter: new FormatConverter(PCM_24K, this.format), abort: new AbortController() });
  }

  pushText(id: string, text: string): void {
    const utt = this.utterances.get(id);
    if (!utt || utt.ended || !text.trim()) return;
    const n = countCharacters(text);
    utt.characters += n;
    this.charactersSent += n;
    for (let i = 0; i < text.length; i += MAX_INPUT_CHARS) this.speak(utt, text.slice(i, i + MAX_INPUT_CHARS));
  }

  endText(id: string): void {
    const utt = this.utterances.get(id);
    if (!utt || utt.ended) return;
    utt.ended = true;
    if (utt.parts.length === 0) queueMicrotask(() => this.finish(utt, 'completed'));
    else this.advance(utt);
  }

  cancel(id: string): void {
    const utt = this.utterances.get(id);
    if (!utt) return;
    utt.abort.abort();
    this.finish(utt, 'cancelled');
  }

  async close(): Promise<void> {
    for (const utt of [...this.utterances.values()]) this.cancel(utt.id);
  }

  private speak(utt: Utterance, input: string): void {
    const part: Part = { chunks: [], done: false };
    utt.parts.push(part);
    void this.fetchPart(utt, part, input);
  }

  private async fetchPart(utt: Utterance, part: Part, input: string): Promise<void> {
    const abort = new AbortController();
    const cancel = () => abort.abort();
    utt.abort.signal.addEventListener('abort', cancel, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, this.timeoutMs);
    try {
      const response = await this.client.audio.speech.create(
        { ...this.request, input } as unknown as OpenAI.Audio.SpeechCreateParams,
        { signal: abort.signal },
      );
      clearTimeout(timer);
      if (!response.body) throw new Error('empty response body');
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        if (!this.live(utt)) return;
        part.chunks.push(Buffer.from(chunk));
        this.advance(utt);
      }
      part.done = true;
      if (this.live(utt)) this.advance(utt);
    } catch (err) {
      if (!this.live(utt) || utt.abort.signal.aborted) return; // cancelled: not an error
      utt.abort.abort();
      const message = timedOut ? `OpenAI TTS timed out: no audio within ${this.timeoutMs / 1000} s` : describe(err);
      this.emitError(new SpeechProviderError(message, { provider: 'openai', utteranceId: utt.id, ...errorDetails(err) }));
      this.finish(utt, 'error');
    } finally {
      clearTimeout(timer);
      utt.abort.signal.removeEventListener('abort', cancel);
    }
  }

  /** Emits whatever audio is next in sentence order; finishes the utterance after its last part. */
  private advance(utt: Utterance): void {
    while (utt.playing < utt.parts.length) {
      const part = utt.parts[utt.playing]!;
      for (const chunk of part.chunks.splice(0)) {
        const audio = utt.converter.convert(chunk);
        if (audio.length) this.emit('audio', { id: utt.id, audio });
        if (!this.live(utt)) return; // a listener cancelled it
      }
      if (!part.done) return;
      utt.playing++;
    }
    if (!utt.ended) return;
    const tail = utt.converter.flush();
    if (tail.length) this.emit('audio', { id: utt.id, audio: tail });
    this.finish(utt, 'completed');
  }

  private live(utt: Utterance): boolean {
    return this.utterances.get(utt.id) === utt;
  }
}

/** The request fields every sentence repeats: model, voice, pcm, then tts_settings (speed, instructions, …). */
export function openAiSpeechRequest(options: TtsOptions): Record<string, unknown> {
  const request: Record<string, unknown> = {
    model: options.model || OPENAI_TTS_DEFAULTS.model,
    voice: options.voice || OPENAI_TTS_DEFAULTS.voice,
  };
  for (const [key, value] of Object.entries(options.settings ?? {})) {
    if (FIXED_FIELDS.has(key)) continue;
    if (value === null) delete request[key];
    else request[key] = value;
  }
  request.response_format = 'pcm';
  return request;
}

function describe(err: unknown): string {
  if (err instanceof OpenAI.APIError && err.status) {
    const body = err.error as { message?: string } | undefined;
    return `OpenAI TTS error ${err.status}: ${body?.message ?? err.message}`;
  }
  if (err instanceof OpenAI.APIConnectionError) return `OpenAI TTS connection failed: ${(err.cause as Error | undefined)?.message ?? err.message}`;
  return `OpenAI TTS failed: ${(err as Error).message}`;
}

function errorDetails(err: unknown): { status?: number; fatal?: boolean } {
  if (err instanceof OpenAI.APIError && err.status) {
    return { status: err.status, fatal: err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429 };
  }
  return {};
}
