/**
 * Exotel Voicebot (bidirectional AgentStream) WebSocket messages, JSON text frames in snake_case:
 * a strict parser for what Exotel sends and builders for what we send back.
 *
 * From Exotel: `connected`, `start` (once: stream and call sids, `custom_parameters` from the
 * stream URL's query, `media_format`), `media` (base64 16-bit little-endian mono PCM, ~100 ms),
 * `dtmf`, `mark` (a mark we sent has played), `stop`. To Exotel: `media`, `mark`, `clear`.
 *
 * Exotel's documents show `stream_sid`; Twilio-style `streamSid` is accepted too, since the
 * protocol descends from Twilio's and not every example agrees. We send `stream_sid`.
 *
 * The parser never throws: malformed input comes back as a typed error the gateway logs and skips.
 */
import type { AudioFormat } from '../../../audio/format';
import { base64Of, BASE64 } from '../stream-support';
import { InvalidMessage, UnknownEvent, obj, parseStreamMessage, type Obj, type StreamParseResult } from '../stream-json';

/** Exotel's minimum outgoing chunk is 3.2 KB (100 ms at 8 kHz); chunks must be multiples of 320 bytes. */
export const EXOTEL_MIN_CHUNK_BYTES = 3200;
export const EXOTEL_MAX_CHUNK_BYTES = 100_000;
export const EXOTEL_CHUNK_MULTIPLE = 320;
/**
 * Length of our outgoing media messages: the shortest that meets the 3.2 KB minimum — 200 ms at
 * 8 kHz, 100 ms at 16 kHz (Exotel calls 3.2 KB "100 ms", which holds for 16 kHz; at 8 kHz 16-bit
 * 100 ms is only 1.6 KB). Both are 3200 bytes, a multiple of 320.
 */
export function exotelFrameMs(sampleRate: number): number {
  return Math.max(20, Math.ceil((EXOTEL_MIN_CHUNK_BYTES * 1000) / (sampleRate * 2) / 20) * 20);
}
/** Rates the Voicebot applet offers (`?sample-rate=`); 24000 is not one the gateway runs. */
export const EXOTEL_SAMPLE_RATES = [8000, 16000] as const;

/** A 100 ms 16 kHz chunk is ~4.3 KB of base64; anything far bigger is not a stream message. */
export const MAX_EXOTEL_MESSAGE_CHARS = 256 * 1024;

/** Whether an outgoing chunk of `bytes` respects Exotel's size rules. */
export function isValidExotelChunk(bytes: number): boolean {
  return bytes >= EXOTEL_MIN_CHUNK_BYTES && bytes <= EXOTEL_MAX_CHUNK_BYTES && bytes % EXOTEL_CHUNK_MULTIPLE === 0;
}

export interface ExotelStartMessage {
  event: 'start';
  streamSid: string;
  callSid: string;
  accountSid: string;
  from: string;
  to: string;
  customParameters: Record<string, string>;
  /** Announced by `media_format`; null when Exotel announced something that is not 16-bit PCM. */
  format: AudioFormat | null;
  /** What was announced, for the refusal message. */
  mediaFormat: string;
}

export interface ExotelMediaMessage {
  event: 'media';
  streamSid: string;
  chunk: number | null;
  /** Milliseconds since the stream started, as Exotel stamps it; null when absent. */
  timestamp: number | null;
  payload: string;
}

export type ExotelStreamMessage =
  | { event: 'connected' }
  | ExotelStartMessage
  | ExotelMediaMessage
  | { event: 'dtmf'; streamSid: string; digit: string }
  | { event: 'mark'; streamSid: string; name: string }
  | { event: 'stop'; streamSid: string; reason: string };

export type ExotelParseResult = StreamParseResult<ExotelStreamMessage>;

const DTMF_DIGIT = /^[0-9*#A-Da-d]$/;
const DIGITS = /^\d{1,15}$/;

/** A string field under its snake_case name or its camelCase alias. */
function text(o: Obj, key: string, field: string, opts: { alias?: string; optional?: boolean } = {}): string {
  const v = o[key] ?? (opts.alias ? o[opts.alias] : undefined);
  if (v === undefined && opts.optional) return '';
  if (typeof v !== 'string') throw new InvalidMessage(`${field}.${key}: expected a string`);
  if (v.length > 256) throw new InvalidMessage(`${field}.${key}: longer than 256 characters`);
  return v;
}

function nonEmpty(o: Obj, key: string, field: string, alias?: string): string {
  const v = text(o, key, field, { alias });
  if (v === '') throw new InvalidMessage(`${field}.${key}: must not be empty`);
  return v;
}

/** Exotel sends numbers as strings ("200"); a JSON number is accepted too. null when absent. */
function optionalInt(o: Obj, key: string, field: string): number | null {
  const v = o[key];
  if (v === undefined || v === null || v === '') return null;
  const n = typeof v === 'number' ? v : typeof v === 'string' && DIGITS.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidMessage(`${field}.${key}: expected a non-negative integer`);
  return n;
}

/** The stream sid of a message after start: top-level, or inside the event's own object. */
function streamSid(m: Obj, inner?: Obj): string {
  const v = m.stream_sid ?? m.streamSid ?? inner?.stream_sid ?? inner?.streamSid;
  if (typeof v !== 'string' || v === '' || v.length > 128) throw new InvalidMessage('stream_sid: expected a non-empty string');
  return v;
}

/** `audio/x-raw` (Exotel's word for slin), 16 bits, at 8 or 16 kHz → pcm16; anything else null. */
export function formatOfMediaFormat(mediaFormat: Obj | undefined): { format: AudioFormat | null; described: string } {
  if (!mediaFormat) return { format: { encoding: 'pcm16', sampleRate: 8000 }, described: 'default (audio/x-raw 8000)' };
  const encoding = typeof mediaFormat.encoding === 'string' ? mediaFormat.encoding.toLowerCase() : 'audio/x-raw';
  const rate = Number(mediaFormat.sample_rate ?? mediaFormat.sampleRate ?? 8000);
  const bits = Number(mediaFormat.bit_rate ?? mediaFormat.bitRate ?? 16);
  const described = `${encoding} ${rate} Hz ${bits}-bit`;
  const pcm = ['audio/x-raw', 'raw', 'slin', 'audio/x-l16', 'audio/l16'].includes(encoding);
  const ok = pcm && bits === 16 && (EXOTEL_SAMPLE_RATES as readonly number[]).includes(rate);
  return { format: ok ? { encoding: 'pcm16', sampleRate: rate } : null, described };
}

function customParameters(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) if (typeof v === 'string' && k.length <= 64) out[k] = v;
  }
  return out;
}

function parseStart(m: Obj): ExotelStartMessage {
  const s = obj(m.start, 'start');
  const mf = s.media_format ?? s.mediaFormat;
  const { format, described } = formatOfMediaFormat(mf === undefined ? undefined : obj(mf, 'start.media_format'));
  return {
    event: 'start',
    streamSid: nonEmpty(s, 'stream_sid', 'start', 'streamSid'),
    callSid: nonEmpty(s, 'call_sid', 'start', 'callSid'),
    accountSid: text(s, 'account_sid', 'start', { alias: 'accountSid', optional: true }),
    from: text(s, 'from', 'start', { optional: true }),
    to: text(s, 'to', 'start', { optional: true }),
    customParameters: customParameters(s.custom_parameters ?? s.customParameters),
    format,
    mediaFormat: described,
  };
}

function parseObject(m: Obj): ExotelStreamMessage {
  const event = m.event;
  if (typeof event !== 'string') throw new InvalidMessage('event: expected a string');
  switch (event) {
    case 'connected':
      return { event };
    case 'start':
      return parseStart(m);
    case 'media': {
      const media = obj(m.media, 'media');
      const payload = media.payload;
      if (typeof payload !== 'string') throw new InvalidMessage('media.payload: expected a string');
      if (!BASE64.test(payload)) throw new InvalidMessage('media.payload: expected base64');
      return { event, streamSid: streamSid(m, media), chunk: optionalInt(media, 'chunk', 'media'), timestamp: optionalInt(media, 'timestamp', 'media'), payload };
    }
    case 'dtmf': {
      const d = m.dtmf === undefined ? m : obj(m.dtmf, 'dtmf');
      const digit = text(d, 'digit', 'dtmf');
      if (!DTMF_DIGIT.test(digit)) throw new InvalidMessage('dtmf.digit: expected one DTMF digit');
      return { event, streamSid: streamSid(m, d), digit };
    }
    case 'mark': {
      const mark = obj(m.mark, 'mark');
      return { event, streamSid: streamSid(m, mark), name: nonEmpty(mark, 'name', 'mark') };
    }
    case 'stop': {
      const stop = m.stop === undefined ? {} : obj(m.stop, 'stop');
      return { event, streamSid: streamSid(m, stop), reason: text(stop, 'reason', 'stop', { optional: true }) };
    }
    default:
      throw new UnknownEvent(event.slice(0, 40));
  }
}

/** Parses one WebSocket message from Exotel. Never throws. */
export function parseExotelStreamMessage(data: unknown): ExotelParseResult {
  return parseStreamMessage(data, MAX_EXOTEL_MESSAGE_CHARS, parseObject);
}

// ---- to Exotel ---------------------------------------------------------------------------------

/**
 * Agent audio: one chunk of 16-bit PCM in the stream's format. Exotel plays chunks below 3.2 KB
 * or off the 320-byte grid with gaps; the gateway sends whole 100 ms frames, which fit, and a
 * chunk that does not (never expected) is padded with silence rather than sent broken.
 */
export function exotelMediaMessage(streamSid: string, audio: Uint8Array): string {
  let chunk = audio;
  if (!isValidExotelChunk(chunk.byteLength) && chunk.byteLength < EXOTEL_MAX_CHUNK_BYTES) {
    const size = Math.max(EXOTEL_MIN_CHUNK_BYTES, Math.ceil(chunk.byteLength / EXOTEL_CHUNK_MULTIPLE) * EXOTEL_CHUNK_MULTIPLE);
    const padded = new Uint8Array(size);
    padded.set(chunk);
    chunk = padded;
  }
  return JSON.stringify({ event: 'media', stream_sid: streamSid, media: { payload: base64Of(chunk) } });
}

/** Exotel answers with a `mark` of the same name once the audio sent before it has played. */
export function exotelMarkMessage(streamSid: string, name: string): string {
  return JSON.stringify({ event: 'mark', stream_sid: streamSid, mark: { name } });
}

/** Drops the audio Exotel has buffered (barge-in). */
export function exotelClearMessage(streamSid: string): string {
  return JSON.stringify({ event: 'clear', stream_sid: streamSid });
}
