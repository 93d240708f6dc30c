/**
 * OpenAI speech-to-text (`POST /v1/audio/transcriptions`) through the `openai` SDK: each caller
 * utterance (the gateway's VAD segment) is uploaded as a 16-bit PCM WAV when the VAD says the
 * caller stopped, and the returned text is the final transcript. There is no streaming and no
 * interim result; see segment-stt.ts for what is buffered and why.
 *
 * The SDK is used (rather than a hand-written multipart request) because it already handles the
 * upload, OpenAI's error JSON and timeouts, and its `baseURL` points at any OpenAI-compatible
 * server (OPENAI_STT_BASE_URL) — including the local fake in tests.
 */
import OpenAI, { toFile } from 'openai';
import { createLogger } from '../../../shared/logger';
import { SpeechProviderError } from '../../speech-socket';
import { SegmentStt } from '../segment-stt';
import type { SttOptions } from '../types';

const log = createLogger('stt.openai');

export const OPENAI_STT_DEFAULTS = {
  baseUrl: 'https://api.openai.com/v1',
  // Listed by the official openai SDK 6.49.0 (AudioModel).
  model: 'gpt-4o-mini-transcribe',
  sampleRate: 8000,
  // A phone utterance of a few seconds comes back in well under 2 s; the rest is headroom for a
  // slow response before the gateway gives up on the final and goes on without it.
  finalWaitMs: 4000,
  // OpenAI accepts 25 MB; a caller monologue longer than this is cut to its last minute.
  maxSegmentMs: 60_000,
} as const;

/** Request fields taken from stt_settings; anything else is ignored (the SDK would send it on). */
const SETTING_FIELDS = ['prompt', 'temperature'] as const;

/** OpenAI wants ISO-639-1 (`hi`), agents often carry BCP-47 (`hi-IN`). */
export function openaiLanguage(language: string | undefined): string | undefined {
  if (!language) return undefined;
  const primary = language.split(/[-_]/)[0]!.toLowerCase();
  return /^[a-z]{2}$/.test(primary) ? primary : undefined;
}

export function createOpenAiStt(options: SttOptions): SegmentStt {
  const settings = options.settings ?? {};
  const finalWaitMs = typeof settings.final_wait_ms === 'number' ? settings.final_wait_ms : OPENAI_STT_DEFAULTS.finalWaitMs;
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseUrl || OPENAI_STT_DEFAULTS.baseUrl,
    // A retry would land after the caller expected an answer; the turn goes on without this one.
    maxRetries: 0,
    timeout: finalWaitMs + 1000,
  });
  const model = options.model || OPENAI_STT_DEFAULTS.model;
  const language = openaiLanguage(options.language);
  const extra: Record<string, unknown> = {};
  for (const key of SETTING_FIELDS) if (settings[key] !== undefined && settings[key] !== null) extra[key] = settings[key];

  return new SegmentStt({
    provider: 'OpenAI',
    sampleRate: options.sampleRate ?? OPENAI_STT_DEFAULTS.sampleRate,
    log,
    finalWaitMs,
    maxSegmentMs: OPENAI_STT_DEFAULTS.maxSegmentMs,
    encoding: options.encoding,
    async transcribe(wav, signal) {
      // Past the gateway's wait the answer is useless: the turn has already gone on without it.
      const deadline = AbortSignal.timeout(finalWaitMs);
      try {
        const result = await client.audio.transcriptions.create(
          { file: await toFile(wav, 'utterance.wav', { type: 'audio/wav' }), model, response_format: 'json', ...(language ? { language } : {}), ...extra },
          { signal: AbortSignal.any([signal, deadline]) },
        );
        return { text: result.text ?? '' };
      } catch (err) {
        if (deadline.aborted && !signal.aborted) throw new SpeechProviderError(`OpenAI transcription timed out after ${finalWaitMs} ms`, { provider: 'openai' });
        throw openaiSttError(err);
      }
    },
  });
}

function openaiSttError(err: unknown): SpeechProviderError {
  if (err instanceof OpenAI.APIError && err.status) {
    const detail = (err.error as { message?: string } | undefined)?.message ?? err.message;
    const status = err.status;
    return new SpeechProviderError(`OpenAI transcription failed: HTTP ${status} (${detail})`, {
      provider: 'openai',
      status,
      fatal: status === 401 || status === 403 || status === 404,
    });
  }
  return new SpeechProviderError(`OpenAI transcription failed: ${(err as Error).message}`, { provider: 'openai' });
}
