/**
 * Plivo Audio Streaming WebSocket messages (JSON text frames): a strict parser for what Plivo
 * sends, builders for what we send back, and the mapping between Plivo's content types and our
 * AudioFormat.
 *
 * From Plivo: `start` (once, with `extra_headers`), `media`, `dtmf`, `playedStream` (a checkpoint's
 * audio has played; older docs call it `played`) and `clearedAudio`. There is no `stop`: the
 * socket closing is the end of the stream. To Plivo: `playAudio`, `checkpoint`, `clearAudio`.
 *
 * The parser never throws: the gateway reads untrusted bytes and must survive any of them, so
 * malformed input comes back as a typed error the caller can log and skip.
 */
import { describeFormat, type AudioFormat } from '../../../audio/format';
import { base64Of, BASE64 } from '../stream-support';
import { InvalidMessage, UnknownEvent, nonEmpty, obj, parseStreamMessage, str, type Obj, type StreamParseErrorCode, type StreamParseResult } from '../stream-json';

// ---- content types ---------------------------------------------------------------------------

/** The `contentType` values Plivo's `<Stream>` accepts. */
export const PLIVO_CONTENT_TYPES = ['audio/x-mulaw;rate=8000', 'audio/x-l16;rate=8000', 'audio/x-l16;rate=16000'] as const;
export type PlivoContentType = (typeof PLIVO_CONTENT_TYPES)[number];

/**
 * μ-law 8 kHz: it carries no byte-order question (Plivo does not document the byte order of
 * L16; we send and expect little-endian), it is what every TTS vendor produces natively, and the
 * phone leg is 8 kHz G.711 anyway. See README "Phone calls (Plivo)".
 */
export const DEFAULT_PLIVO_CONTENT_TYPE: PlivoContentType = 'audio/x-mulaw;rate=8000';

export function isPlivoContentType(value: unknown): value is PlivoContentType {
  return typeof value === 'string' && (PLIVO_CONTENT_TYPES as readonly string[]).includes(value);
}

/** `audio/x-l16;rate=16000` → pcm16 at 16 kHz. */
export function plivoContentTypeFormat(contentType: PlivoContentType): AudioFormat {
  const rate = Number(/rate=(\d+)/.exec(contentType)![1]);
  return { encoding: contentType.startsWith('audio/x-mulaw') ? 'mulaw' : 'pcm16', sampleRate: rate };
}

/** The MIME type (without rate) Plivo uses for a format in `mediaFormat.encoding` and `playAudio`. */
export function plivoMimeType(format: AudioFormat): 'audio/x-mulaw' | 'audio/x-l16' {
  return format.encoding === 'mulaw' ? 'audio/x-mulaw' : 'audio/x-l16';
}

/**
 * The stream's format from the `start` message's `mediaFormat`, or null when Plivo announces
 * something we cannot play (a combination outside PLIVO_CONTENT_TYPES).
 */
export function formatOfMediaFormat(mediaFormat: PlivoMediaFormat): AudioFormat | null {
  const encoding = mediaFormat.encoding.toLowerCase().split(';')[0].trim();
  const contentType = `${encoding};rate=${mediaFormat.sampleRate}`;
  return isPlivoContentType(contentType) ? plivoContentTypeFormat(contentType) : null;
}

// ---- from Plivo --------------------------------------------------------------------------------

export interface PlivoMediaFormat {
  encoding: string;
  sampleRate: number;
}

export interface PlivoStartMessage {
  event: 'start';
  sequenceNumber: number;
  start: {
    callId: string;
    streamId: string;
    accountId: string;
    tracks: string[];
    mediaFormat: PlivoMediaFormat;
  };
  /** The `<Stream extraHeaders>` pairs, decoded (keys lower-cased). */
  extraHeaders: Record<string, string>;
}

export interface PlivoMediaMessage {
  event: 'media';
  sequenceNumber: number;
  streamId: string;
  media: {
    track: string;
    /** Unix epoch milliseconds (Plivo), as sent. */
    timestamp: string;
    chunk: number;
    /** base64 of raw audio in the stream's content type. */
    payload: string;
  };
}

export interface PlivoDtmfMessage {
  event: 'dtmf';
  sequenceNumber: number;
  streamId: string;
  dtmf: { track: string; digit: string };
}

/** A checkpoint we sent has been reached: the audio queued before it has played. */
export interface PlivoPlayedStreamMessage {
  event: 'playedStream';
  sequenceNumber: number;
  streamId: string;
  name: string;
}

/** Plivo dropped its playback buffer after our `clearAudio`. */
export interface PlivoClearedAudioMessage {
  event: 'clearedAudio';
  sequenceNumber: number;
  streamId: string;
}

export type PlivoStreamMessage =
  | PlivoStartMessage
  | PlivoMediaMessage
  | PlivoDtmfMessage
  | PlivoPlayedStreamMessage
  | PlivoClearedAudioMessage;

/** See StreamParseErrorCode; `too_large`: over MAX_PLIVO_MESSAGE_CHARS. */
export type PlivoParseErrorCode = StreamParseErrorCode;

export type PlivoParseResult = StreamParseResult<PlivoStreamMessage>;

/** A 20 ms L16 16 kHz chunk is ~900 characters; anything this big is not a stream message. */
export const MAX_PLIVO_MESSAGE_CHARS = 64 * 1024;

const DTMF_DIGIT = /^[0-9*#A-Da-d]$/;
const DIGITS = /^\d+$/;


/** A non-negative integer; documented as a JSON number, a numeric string is accepted too. */
function int(o: Obj, key: string, field: string): number {
  const v = o[key];
  const n = typeof v === 'number' ? v : typeof v === 'string' && DIGITS.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidMessage(`${field}.${key}: expected a non-negative integer`);
  return n;
}

/** Like int, but a missing field is 0 (sequence numbers are informational). */
function optionalInt(o: Obj, key: string, field: string): number {
  return o[key] === undefined ? 0 : int(o, key, field);
}

/** Digits (Plivo: epoch ms) given as a string or a number; kept as a string. */
function digitString(o: Obj, key: string, field: string): string {
  const v = o[key];
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === 'string' && DIGITS.test(v)) return v;
  throw new InvalidMessage(`${field}.${key}: expected a numeric timestamp`);
}

/**
 * `extraHeaders="callid=…,token=…"` arrives as a string; the documented example separates pairs
 * with `;`, the XML attribute with `,`: both are accepted, and so is an already decoded object.
 * Keys are lower-cased and an `X-PH-` prefix (Plivo's custom SIP header prefix) is dropped.
 */
export function parseExtraHeaders(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (key: string, v: string) => {
    const k = key.trim().toLowerCase().replace(/^x-ph-/, '');
    if (k && !Object.hasOwn(out, k)) out[k] = v.trim();
  };
  if (typeof value === 'string') {
    for (const pair of value.split(/[,;]/)) {
      const eq = pair.indexOf('=');
      if (eq > 0) put(pair.slice(0, eq), pair.slice(eq + 1));
    }
  } else if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) if (typeof v === 'string') put(k, v);
  }
  return out;
}

function parseStart(m: Obj): PlivoStartMessage {
  const s = obj(m.start, 'start');
  const tracks = s.tracks === undefined ? ['inbound'] : s.tracks;
  if (!Array.isArray(tracks) || !tracks.every((t) => typeof t === 'string')) throw new InvalidMessage('start.tracks: expected an array of strings');
  const f = obj(s.mediaFormat, 'start.mediaFormat');
  const sampleRate = int(f, 'sampleRate', 'start.mediaFormat');
  if (sampleRate === 0) throw new InvalidMessage('start.mediaFormat.sampleRate: must be positive');
  return {
    event: 'start',
    sequenceNumber: optionalInt(m, 'sequenceNumber', 'message'),
    start: {
      callId: nonEmpty(s, 'callId', 'start'),
      streamId: nonEmpty(s, 'streamId', 'start'),
      accountId: s.accountId === undefined ? '' : str(s, 'accountId', 'start'),
      tracks: tracks as string[],
      mediaFormat: { encoding: nonEmpty(f, 'encoding', 'start.mediaFormat'), sampleRate },
    },
    extraHeaders: parseExtraHeaders(m.extra_headers ?? m.extraHeaders),
  };
}

function parseMedia(m: Obj): PlivoMediaMessage {
  const media = obj(m.media, 'media');
  const payload = str(media, 'payload', 'media');
  if (!BASE64.test(payload)) throw new InvalidMessage('media.payload: expected base64');
  return {
    event: 'media',
    sequenceNumber: optionalInt(m, 'sequenceNumber', 'message'),
    streamId: nonEmpty(m, 'streamId', 'message'),
    media: {
      track: media.track === undefined ? 'inbound' : nonEmpty(media, 'track', 'media'),
      timestamp: media.timestamp === undefined ? '0' : digitString(media, 'timestamp', 'media'),
      chunk: optionalInt(media, 'chunk', 'media'),
      payload,
    },
  };
}

function parseObject(m: Obj): PlivoStreamMessage {
  const event = m.event;
  if (typeof event !== 'string') throw new InvalidMessage('event: expected a string');
  switch (event) {
    case 'start':
      return parseStart(m);
    case 'media':
      return parseMedia(m);
    case 'dtmf': {
      // The digit's place is not documented precisely: `dtmf.digit` (as Twilio), or top-level.
      const d = m.dtmf === undefined ? m : obj(m.dtmf, 'dtmf');
      const digit = str(d, 'digit', 'dtmf');
      if (!DTMF_DIGIT.test(digit)) throw new InvalidMessage('dtmf.digit: expected one DTMF digit');
      return {
        event,
        sequenceNumber: optionalInt(m, 'sequenceNumber', 'message'),
        streamId: nonEmpty(m, 'streamId', 'message'),
        dtmf: { track: typeof d.track === 'string' ? d.track : 'inbound', digit },
      };
    }
    case 'playedStream':
    case 'played':
      return {
        event: 'playedStream',
        sequenceNumber: optionalInt(m, 'sequenceNumber', 'message'),
        streamId: nonEmpty(m, 'streamId', 'message'),
        name: str(m, 'name', 'message'),
      };
    case 'clearedAudio':
      return { event, sequenceNumber: optionalInt(m, 'sequenceNumber', 'message'), streamId: nonEmpty(m, 'streamId', 'message') };
    default:
      throw new UnknownEvent(event);
  }
}

/** Parses one WebSocket message from Plivo. Never throws. */
export function parsePlivoStreamMessage(data: unknown): PlivoParseResult {
  return parseStreamMessage(data, MAX_PLIVO_MESSAGE_CHARS, parseObject);
}

/** The raw audio bytes of a media message, in the stream's content type. */
export function plivoMediaPayload(message: PlivoMediaMessage): Buffer {
  return Buffer.from(message.media.payload, 'base64');
}

// ---- to Plivo ----------------------------------------------------------------------------------

export interface PlivoPlayAudio {
  event: 'playAudio';
  media: { contentType: 'audio/x-mulaw' | 'audio/x-l16'; sampleRate: number; payload: string };
}
export interface PlivoCheckpoint {
  event: 'checkpoint';
  streamId: string;
  name: string;
}
export interface PlivoClearAudio {
  event: 'clearAudio';
  streamId: string;
}
export type PlivoOutboundMessage = PlivoPlayAudio | PlivoCheckpoint | PlivoClearAudio;

/**
 * Audio for the caller, queued and played in order. Plivo does not allow switching codecs within
 * a stream, so `format` must be the stream's own (what `start.mediaFormat` announced).
 */
export function playAudioMessage(format: AudioFormat, audio: Uint8Array): string {
  if (format.encoding === 'mulaw' && format.sampleRate !== 8000) throw new Error(`Plivo cannot play ${describeFormat(format)}`);
  const payload = base64Of(audio);
  return JSON.stringify({
    event: 'playAudio',
    media: { contentType: plivoMimeType(format), sampleRate: format.sampleRate, payload },
  } satisfies PlivoPlayAudio);
}

/** Plivo answers `playedStream` with this name once all audio sent before it has played. */
export function checkpointMessage(streamId: string, name: string): string {
  return JSON.stringify({ event: 'checkpoint', streamId, name } satisfies PlivoCheckpoint);
}

/** Drops Plivo's buffered audio; Plivo answers `clearedAudio`. */
export function clearAudioMessage(streamId: string): string {
  return JSON.stringify({ event: 'clearAudio', streamId } satisfies PlivoClearAudio);
}
