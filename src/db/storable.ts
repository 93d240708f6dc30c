/**
 * What PostgreSQL cannot store, made storable. Text and jsonb refuse the NUL character and UTF-16
 * surrogates without their pair; both reach us in ordinary use (an STT transcript, an LLM reply, a
 * tool's response body), and neither must stop a call from being recorded. They are replaced by
 * U+FFFD, the Unicode replacement character.
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function storableText(text: string): string {
  return text.replace(UNSTORABLE, '\uFFFD');
}

/** The value with every string in it (object keys included) made storable. */
export function storable<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) return value.map(storable) as T;
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [storableText(key), storable(item)])) as T;
  }
  return value;
}
