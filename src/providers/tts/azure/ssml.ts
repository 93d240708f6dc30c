/**
 * The SSML of one Azure synthesis request: the voice and language always; a speaking style
 * (`mstts:express-as`) and prosody only when the agent's tts_settings ask for them:
 * `style`, `style_degree` (0.01–2), `role`; `rate`, `pitch`, `volume` (SSML values such as
 * `+10%`, `1.2`, `slow`, `-2st`). Every value is escaped; the text is never interpreted as markup.
 */
export interface SsmlOptions {
  voice: string;
  language: string;
  settings: Record<string, unknown>;
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

const attr = (name: string, value: unknown) => (value === undefined || value === null || value === '' ? '' : ` ${name}="${escapeXml(String(value))}"`);

export function azureSsml(text: string, { voice, language, settings }: SsmlOptions): string {
  let body = escapeXml(text);
  const prosody = attr('rate', settings.rate) + attr('pitch', settings.pitch) + attr('volume', settings.volume);
  if (prosody) body = `<prosody${prosody}>${body}</prosody>`;
  if (settings.style) body = `<mstts:express-as${attr('style', settings.style)}${attr('styledegree', settings.style_degree)}${attr('role', settings.role)}>${body}</mstts:express-as>`;
  return (
    `<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xmlns:mstts="https://www.w3.org/2001/mstts" xml:lang="${escapeXml(language)}">` +
    `<voice name="${escapeXml(voice)}">${body}</voice></speak>`
  );
}
