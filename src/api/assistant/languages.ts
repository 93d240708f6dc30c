/**
 * Language tags for generated agents. Speech-to-text providers want a regional tag for Indian
 * languages (Sarvam only accepts `hi-IN`, Deepgram and Azure accept it too), while multilingual TTS
 * voices take the bare language (`hi`), so one requested language yields both forms.
 */

/** The region a bare language is most often spoken in on phone calls we expect. */
const DEFAULT_REGION: Record<string, string> = {
  // Indian languages
  hi: 'IN', bn: 'IN', ta: 'IN', te: 'IN', kn: 'IN', ml: 'IN', mr: 'IN', gu: 'IN', pa: 'IN', or: 'IN', as: 'IN', ur: 'IN',
  // World languages
  en: 'US', es: 'ES', fr: 'FR', de: 'DE', it: 'IT', pt: 'BR', nl: 'NL', sv: 'SE', pl: 'PL', ru: 'RU', tr: 'TR',
  ar: 'SA', ja: 'JP', ko: 'KR', zh: 'CN', id: 'ID', vi: 'VN', th: 'TH', ms: 'MY', fil: 'PH', he: 'IL', uk: 'UA',
};

const LANGUAGE_NAMES: Record<string, string> = {
  hi: 'Hindi', bn: 'Bengali', ta: 'Tamil', te: 'Telugu', kn: 'Kannada', ml: 'Malayalam', mr: 'Marathi', gu: 'Gujarati',
  pa: 'Punjabi', or: 'Odia', as: 'Assamese', ur: 'Urdu', en: 'English', es: 'Spanish', fr: 'French', de: 'German',
  it: 'Italian', pt: 'Portuguese', nl: 'Dutch', sv: 'Swedish', pl: 'Polish', ru: 'Russian', tr: 'Turkish', ar: 'Arabic',
  ja: 'Japanese', ko: 'Korean', zh: 'Chinese', id: 'Indonesian', vi: 'Vietnamese', th: 'Thai', ms: 'Malay',
  fil: 'Filipino', he: 'Hebrew', uk: 'Ukrainian',
};

export const LANGUAGE_TAG_PATTERN = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

export interface AgentLanguages {
  /** Regional tag for STT, e.g. hi-IN. */
  stt_language: string;
  /** Bare language for TTS, e.g. hi. */
  tts_language: string;
  /** Human name for prompts, e.g. "Hindi (hi-IN)". */
  label: string;
}

/** "hi" → hi-IN / hi; "HI-in" → hi-IN / hi; unknown bare languages are kept as given. */
export function agentLanguages(tag: string): AgentLanguages {
  const [rawBase, ...rest] = tag.split('-');
  const base = rawBase!.toLowerCase();
  const subtags = rest.map((s) => (s.length === 2 ? s.toUpperCase() : s.length === 4 ? s[0]!.toUpperCase() + s.slice(1).toLowerCase() : s));
  const region = DEFAULT_REGION[base];
  const stt = subtags.length ? [base, ...subtags].join('-') : region ? `${base}-${region}` : base;
  const name = LANGUAGE_NAMES[base];
  return { stt_language: stt, tts_language: base, label: name ? `${name} (${stt})` : stt };
}
