/**
 * The agent form's own turn phrases (`pipeline_settings.backchannel_phrases` and
 * `interrupt_phrases`): a mode and one phrase a line, converted to and from the API's
 * `{ mode, phrases }`.
 */
export type PhraseMode = 'add' | 'replace';
export type PhraseKey = 'backchannel_phrases' | 'interrupt_phrases';

export interface PhraseFormValues {
  mode: PhraseMode;
  /** One phrase a line. */
  text: string;
}

export const PHRASE_FIELDS = [
  {
    key: 'backchannel_phrases',
    label: 'Backchannel phrases',
    description: 'Never interrupt the agent, never answered (one a line). Built in: the agent’s STT language and English.',
  },
  {
    key: 'interrupt_phrases',
    label: 'Interruption words',
    description: 'Stop the agent at once, whatever the minimum words (one a line). Built in: the agent’s STT language and English.',
  },
] as const satisfies ReadonlyArray<{ key: PhraseKey; label: string; description: string }>;

export const PHRASE_FORM_PATHS = PHRASE_FIELDS.flatMap((f) => [`phrases.${f.key}.mode`, `phrases.${f.key}.text`]);

type ApiPhrases = { mode?: PhraseMode; phrases?: string[] } | null | undefined;

export function phraseFormValues(pipeline: Partial<Record<PhraseKey, ApiPhrases>> | undefined): Record<PhraseKey, PhraseFormValues> {
  const one = (p: ApiPhrases): PhraseFormValues => ({ mode: p?.mode ?? 'add', text: (p?.phrases ?? []).join('\n') });
  return { backchannel_phrases: one(pipeline?.backchannel_phrases), interrupt_phrases: one(pipeline?.interrupt_phrases) };
}

const lines = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);

/** The changed phrase settings: `{ mode, phrases }`, or null (the default: add nothing) when cleared. */
export function phraseRequest(values: Record<PhraseKey, PhraseFormValues>, initial: Record<PhraseKey, PhraseFormValues>, isNew: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const { key } of PHRASE_FIELDS) {
    const v = values[key];
    const i = initial[key];
    if (v.mode === i.mode && v.text === i.text) continue;
    const phrases = lines(v.text);
    if (v.mode === 'add' && !phrases.length) {
      if (!isNew) body[key] = null;
    } else body[key] = { mode: v.mode, phrases };
  }
  return body;
}
