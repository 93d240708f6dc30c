/**
 * Twilio Media Streams WebSocket messages (JSON text frames): types, a strict parser for what
 * Twilio sends, and builders for what we send back. Numeric-looking fields (sequenceNumber,
 * chunk, timestamp) are strings on the wire and stay strings here.
 *
 * The parser never throws: the gateway reads untrusted bytes and must survive any of them, so
 * malformed input comes back as a typed error the caller can log and skip.
 */
import { BASE64, base64Of } from '../stream-support';
import { InvalidMessage, UnknownEvent, nonEmpty, obj, parseStreamMessage, str, type Obj, type StreamParseErrorCode, type StreamParseResult } from '../stream-json';

export interface TwilioConnectedMessage {
  event: 'connected';
  protocol: string;
  version: string;
}

export interface TwilioMediaFormat {
  encoding: string;
  sampleRate: number;
  channels: number;
}

export interface TwilioStartMessage {
  event: 'start';
  sequenceNumber?: string;
  streamSid: string;
  start: {
    accountSid: string;
    streamSid: string;
    callSid: string;
    tracks: string[];
    customParameters: Record<string, string>;
    mediaFormat: TwilioMediaFormat;
  };
}

export interface TwilioMediaMessage {
  event: 'media';
  sequenceNumber?: string;
  streamSid: string;
  media: {
    track: string;
    chunk: string;
    /** Milliseconds since the stream started. */
    timestamp: string;
    /** base64 of raw mu-law 8 kHz mono bytes (no header). */
    payload: string;
  };
}

export interface TwilioDtmfMessage {
  event: 'dtmf';
  sequenceNumber?: string;
  streamSid: string;
  dtmf: { track: string; digit: string };
}

/** Echo of a mark we sent: the audio queued before it has played (or a `clear` dropped it). */
export interface TwilioMarkMessage {
  event: 'mark';
  sequenceNumber?: string;
  streamSid: string;
  mark: { name: string };
}

export interface TwilioStopMessage {
  event: 'stop';
  sequenceNumber?: string;
  streamSid: string;
  stop: { accountSid: string; callSid: string };
}

export type TwilioStreamMessage =
  | TwilioConnectedMessage
  | TwilioStartMessage
  | TwilioMediaMessage
  | TwilioDtmfMessage
  | TwilioMarkMessage
  | TwilioStopMessage;

/** See StreamParseErrorCode; `too_large`: over MAX_TWILIO_MESSAGE_CHARS. */
export type TwilioParseErrorCode = StreamParseErrorCode;

export type TwilioParseResult = StreamParseResult<TwilioStreamMessage>;

/** Twilio sends 20 ms frames (~300 characters); anything this big is not a Media Streams message. */
export const MAX_TWILIO_MESSAGE_CHARS = 64 * 1024;

const DIGITS = /^\d+$/;
const DTMF_DIGIT = /^[0-9*#A-Da-dw]$/;


/** Twilio numbers its messages, but nothing here depends on it: absent is fine, malformed is not. */
function optionalDigits(o: Obj, key: string, field: string): string | undefined {
  return o[key] === undefined ? undefined : digits(o, key, field);
}

function digits(o: Obj, key: string, field: string): string {
  const v = str(o, key, field);
  if (!DIGITS.test(v)) throw new InvalidMessage(`${field}.${key}: expected a numeric string`);
  return v;
}

// Documented as JSON numbers; a numeric string is accepted too since nothing is lost by it.
function count(o: Obj, key: string, field: string): number {
  const v = o[key];
  const n = typeof v === 'number' ? v : typeof v === 'string' && DIGITS.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n <= 0) throw new InvalidMessage(`${field}.${key}: expected a positive integer`);
  return n;
}

function parseStart(m: Obj): TwilioStartMessage {
  const s = obj(m.start, 'start');
  const tracks = s.tracks;
  if (!Array.isArray(tracks) || !tracks.every((t) => typeof t === 'string')) throw new InvalidMessage('start.tracks: expected an array of strings');
  const custom = s.customParameters === undefined ? {} : obj(s.customParameters, 'start.customParameters');
  const customParameters: Record<string, string> = {};
  for (const [k, v] of Object.entries(custom)) {
    if (typeof v !== 'string') throw new InvalidMessage(`start.customParameters.${k}: expected a string`);
    customParameters[k] = v;
  }
  const f = obj(s.mediaFormat, 'start.mediaFormat');
  return {
    event: 'start',
    sequenceNumber: optionalDigits(m, 'sequenceNumber', 'message'),
    streamSid: nonEmpty(m, 'streamSid', 'message'),
    start: {
      accountSid: nonEmpty(s, 'accountSid', 'start'),
      streamSid: nonEmpty(s, 'streamSid', 'start'),
      callSid: nonEmpty(s, 'callSid', 'start'),
      tracks: tracks as string[],
      customParameters,
      mediaFormat: {
        encoding: nonEmpty(f, 'encoding', 'start.mediaFormat'),
        sampleRate: count(f, 'sampleRate', 'start.mediaFormat'),
        channels: count(f, 'channels', 'start.mediaFormat'),
      },
    },
  };
}

function parseMedia(m: Obj): TwilioMediaMessage {
  const media = obj(m.media, 'media');
  const payload = str(media, 'payload', 'media');
  if (!BASE64.test(payload)) throw new InvalidMessage('media.payload: expected base64');
  return {
    event: 'media',
    sequenceNumber: optionalDigits(m, 'sequenceNumber', 'message'),
    streamSid: nonEmpty(m, 'streamSid', 'message'),
    media: {
      // Older streams omit the track on single-track media; inbound is the only one we ask for.
      track: media.track === undefined ? 'inbound' : nonEmpty(media, 'track', 'media'),
      chunk: digits(media, 'chunk', 'media'),
      timestamp: digits(media, 'timestamp', 'media'),
      payload,
    },
  };
}

function parseObject(m: Obj): TwilioStreamMessage {
  const event = m.event;
  if (typeof event !== 'string') throw new InvalidMessage('event: expected a string');
  switch (event) {
    case 'connected':
      return { event, protocol: str(m, 'protocol', 'message'), version: str(m, 'version', 'message') };
    case 'start':
      return parseStart(m);
    case 'media':
      return parseMedia(m);
    case 'dtmf': {
      const d = obj(m.dtmf, 'dtmf');
      const digit = str(d, 'digit', 'dtmf');
      if (!DTMF_DIGIT.test(digit)) throw new InvalidMessage('dtmf.digit: expected one DTMF digit');
      return {
        event,
        sequenceNumber: optionalDigits(m, 'sequenceNumber', 'message'),
        streamSid: nonEmpty(m, 'streamSid', 'message'),
        dtmf: { track: d.track === undefined ? 'inbound_track' : str(d, 'track', 'dtmf'), digit },
      };
    }
    case 'mark': {
      const k = obj(m.mark, 'mark');
      return {
        event,
        sequenceNumber: optionalDigits(m, 'sequenceNumber', 'message'),
        streamSid: nonEmpty(m, 'streamSid', 'message'),
        mark: { name: str(k, 'name', 'mark') },
      };
    }
    case 'stop': {
      const s = obj(m.stop, 'stop');
      return {
        event,
        sequenceNumber: optionalDigits(m, 'sequenceNumber', 'message'),
        streamSid: nonEmpty(m, 'streamSid', 'message'),
        stop: { accountSid: str(s, 'accountSid', 'stop'), callSid: str(s, 'callSid', 'stop') },
      };
    }
    default:
      throw new UnknownEvent(event);
  }
}

/** Parses one WebSocket message from Twilio. Never throws. */
export function parseTwilioStreamMessage(data: unknown): TwilioParseResult {
  return parseStreamMessage(data, MAX_TWILIO_MESSAGE_CHARS, parseObject);
}

/** The mu-law bytes of a media message. */
export function mediaPayload(message: TwilioMediaMessage): Buffer {
  return Buffer.from(message.media.payload, 'base64');
}

// ---- to Twilio -------------------------------------------------------------------------------

export interface TwilioOutboundMedia {
  event: 'media';
  streamSid: string;
  media: { payload: string };
}
export interface TwilioOutboundMark {
  event: 'mark';
  streamSid: string;
  mark: { name: string };
}
export interface TwilioOutboundClear {
  event: 'clear';
  streamSid: string;
}
export type TwilioOutboundMessage = TwilioOutboundMedia | TwilioOutboundMark | TwilioOutboundClear;

/** Audio for the caller: raw mu-law 8 kHz, queued and played in order (send 20 ms = 160 bytes). */
export function mediaMessage(streamSid: string, mulaw: Uint8Array): string {
  return JSON.stringify({ event: 'media', streamSid, media: { payload: base64Of(mulaw) } } satisfies TwilioOutboundMedia);
}

/** Twilio echoes the mark once all audio sent before it has played. */
export function markMessage(streamSid: string, name: string): string {
  return JSON.stringify({ event: 'mark', streamSid, mark: { name } } satisfies TwilioOutboundMark);
}

/** Drops all buffered audio; Twilio then echoes every pending mark at once (not proof of playback). */
export function clearMessage(streamSid: string): string {
  return JSON.stringify({ event: 'clear', streamSid } satisfies TwilioOutboundClear);
}
