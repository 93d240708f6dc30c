/**
 * What a Sarvam speech-to-text request says, for both transports: model, language, mode and the
 * streaming URL (`/speech-to-text/ws`), and the REST upload (`POST /speech-to-text`) used when
 * streaming is refused.
 */
import { SpeechProviderError, wsBaseUrl } from '../../speech-socket';
import type { SttOptions } from '../types';

export const SARVAM_DEFAULTS = {
  baseUrl: 'https://api.sarvam.ai',
  /**
   * Transcription in the spoken language (saaras with mode=transcribe). Checked against the
   * official `sarvamai` SDK 1.1.10: SpeechToTextStreamingModel and SpeechToTextModel list only
   * saaras:v3 ("default, recommended") and saaras:v4; Sarvam's docs call saarika:v2.5 legacy.
   */
  transcribeModel: 'saaras:v3',
  /** saaras translates any supported language into English (mode=translate); same SDK check. */
  translateModel: 'saaras:v3',
  sampleRate: 8000,
  // Sarvam closes a socket after 60 s without data; silence goes out after this much quiet.
  keepAliveIntervalMs: 20_000,
  closeTimeoutMs: 2000,
  // REST fallback: one upload per utterance, 30 s at most (Sarvam's limit for the sync API).
  restFinalWaitMs: 4000,
  restMaxSegmentMs: 30_000,
} as const;

/** Languages of saarika/saaras (BCP-47 with the India region); `unknown` lets Sarvam detect it. */
export const SARVAM_LANGUAGES = ['hi-IN', 'bn-IN', 'kn-IN', 'ml-IN', 'mr-IN', 'od-IN', 'pa-IN', 'ta-IN', 'te-IN', 'en-IN', 'gu-IN', 'unknown'] as const;

// The transport and audio are the adapter's; stt_settings cannot change them.
const FIXED_PARAMETERS = new Set(['language-code', 'model', 'mode', 'sample_rate', 'input_audio_codec', 'flush_signal']);

export interface SarvamRequest {
  model: string;
  language: string;
  /** Sent only to saaras models (saarika has no modes). */
  mode?: 'transcribe' | 'translate';
  sampleRate: number;
}

/** `hi` → `hi-IN`; full tags pass through; none → `unknown` (Sarvam detects the language). */
export function sarvamLanguage(language: string | undefined): string {
  if (!language) return 'unknown';
  if (language === 'unknown') return language;
  const [primary, region] = language.split(/[-_]/);
  return `${primary!.toLowerCase()}-${(region ?? 'IN').toUpperCase()}`;
}

export function sarvamRequest(options: SttOptions): SarvamRequest {
  const translate = options.mode === 'translate';
  const model = options.model || (translate ? SARVAM_DEFAULTS.translateModel : SARVAM_DEFAULTS.transcribeModel);
  const saaras = model.startsWith('saaras');
  if (translate && !saaras) {
    throw new SpeechProviderError(`Sarvam stt_mode translate needs a saaras model (got ${model}); saarika only transcribes`, { provider: 'sarvam', fatal: true });
  }
  return {
    model,
    language: sarvamLanguage(options.language),
    ...(saaras ? { mode: translate ? 'translate' : 'transcribe' } : {}),
    sampleRate: options.sampleRate ?? SARVAM_DEFAULTS.sampleRate,
  };
}

export function sarvamStreamUrl(options: SttOptions, req: SarvamRequest): string {
  const query = new URLSearchParams({
    'language-code': req.language,
    model: req.model,
    ...(req.mode ? { mode: req.mode } : {}),
    sample_rate: String(req.sampleRate),
    input_audio_codec: 'pcm_s16le',
    vad_signals: 'true',
    flush_signal: 'true',
  });
  for (const [key, value] of Object.entries(options.settings ?? {})) {
    if (FIXED_PARAMETERS.has(key) || key === 'final_wait_ms') continue;
    if (value === null || value === undefined) query.delete(key);
    else query.set(key, String(value));
  }
  return `${wsBaseUrl(options.baseUrl || SARVAM_DEFAULTS.baseUrl)}/speech-to-text/ws?${query.toString()}`;
}

/** One utterance (WAV) through `POST /speech-to-text`. */
export async function sarvamTranscribeRest(options: SttOptions, req: SarvamRequest, wav: Buffer, signal: AbortSignal): Promise<{ text: string }> {
  const base = (options.baseUrl || SARVAM_DEFAULTS.baseUrl).replace(/^ws(s?):\/\//i, 'http$1://').replace(/\/+$/, '');
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'utterance.wav');
  form.append('model', req.model);
  form.append('language_code', req.language);
  if (req.mode) form.append('mode', req.mode);
  const deadline = AbortSignal.timeout(SARVAM_DEFAULTS.restFinalWaitMs);
  let res: Response;
  try {
    res = await fetch(`${base}/speech-to-text`, {
      method: 'POST',
      headers: { 'api-subscription-key': options.apiKey },
      body: form,
      signal: AbortSignal.any([signal, deadline]),
    });
  } catch (err) {
    if (deadline.aborted && !signal.aborted) throw new SpeechProviderError(`Sarvam transcription timed out after ${SARVAM_DEFAULTS.restFinalWaitMs} ms`, { provider: 'sarvam' });
    throw new SpeechProviderError(`Sarvam transcription failed: ${(err as Error).message}`, { provider: 'sarvam' });
  }
  const body = await res.text();
  if (!res.ok) {
    throw new SpeechProviderError(`Sarvam transcription failed: HTTP ${res.status}${errorDetail(body) ? ` (${errorDetail(body)})` : ''}`, {
      provider: 'sarvam',
      status: res.status,
      fatal: res.status === 401 || res.status === 403,
    });
  }
  try {
    const parsed = JSON.parse(body) as { transcript?: string };
    return { text: parsed.transcript ?? '' };
  } catch {
    throw new SpeechProviderError('Sarvam transcription failed: the response was not JSON', { provider: 'sarvam' });
  }
}

function errorDetail(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: string } | string; detail?: string; message?: string };
    if (typeof parsed.error === 'object' && parsed.error?.message) return parsed.error.message;
    return (typeof parsed.error === 'string' ? parsed.error : undefined) ?? parsed.detail ?? parsed.message ?? '';
  } catch {
    return body.slice(0, 200);
  }
}
