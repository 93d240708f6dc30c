/**
 * Reading a vendor's JSON stream messages strictly, shared by the codecs' parsers: field readers
 * that throw a typed error naming the field, and the envelope every parser has (text, size cap,
 * JSON, an object, then the vendor's own reading) turned into a result that never throws — the
 * gateway reads untrusted bytes and must survive any of them.
 */
import { messageText } from './stream-support';

/** A message that breaks the vendor's format: `field.key: what was expected`. */
export class InvalidMessage extends Error {}
/** Well-formed, with an event the parser does not handle (safe to ignore). */
export class UnknownEvent extends Error {}

export type Obj = Record<string, unknown>;

export function obj(value: unknown, field: string): Obj {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidMessage(`${field}: expected an object`);
  return value as Obj;
}

export function str(o: Obj, key: string, field: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw new InvalidMessage(`${field}.${key}: expected a string`);
  return v;
}

export function nonEmpty(o: Obj, key: string, field: string): string {
  const v = str(o, key, field);
  if (v === '') throw new InvalidMessage(`${field}.${key}: must not be empty`);
  return v;
}

/**
 * `invalid_json` / `invalid_message`: broken input; `unknown_event`: valid JSON with an event the
 * parser does not handle (safe to ignore); `too_large`: over the vendor's size cap.
 */
export type StreamParseErrorCode = 'invalid_json' | 'invalid_message' | 'unknown_event' | 'too_large';

export type StreamParseResult<M> = { ok: true; message: M } | { ok: false; code: StreamParseErrorCode; error: string };

/** One WebSocket message through the envelope and `parseObject` (which throws InvalidMessage / UnknownEvent). Never throws. */
export function parseStreamMessage<M>(data: unknown, maxChars: number, parseObject: (message: Obj) => M): StreamParseResult<M> {
  let text: string | null;
  try {
    text = messageText(data);
  } catch {
    text = null;
  }
  if (text === null) return { ok: false, code: 'invalid_message', error: 'message is not text' };
  if (text.length > maxChars) return { ok: false, code: 'too_large', error: `message of ${text.length} characters exceeds ${maxChars}` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, code: 'invalid_json', error: 'message is not JSON' };
  }
  try {
    return { ok: true, message: parseObject(obj(json, 'message')) };
  } catch (err) {
    if (err instanceof UnknownEvent) return { ok: false, code: 'unknown_event', error: `unknown event "${err.message.slice(0, 40)}"` };
    if (err instanceof InvalidMessage) return { ok: false, code: 'invalid_message', error: err.message };
    return { ok: false, code: 'invalid_message', error: 'unreadable message' };
  }
}
