/**
 * Exotel's Voicebot stream as a neutral media stream. The format is 16-bit little-endian PCM at
 * the `sample-rate` we asked for in the stream URL (8 or 16 kHz), announced in
 * `start.media_format`; agent audio goes out in 3200-byte chunks (StreamStart.frameMs: 200 ms at
 * 8 kHz, 100 ms at 16 kHz), which meet Exotel's size rules (≥ 3.2 KB, ≤ 100 KB, multiples of
 * 320 bytes). The call id and
 * token come back in `start.custom_parameters` (or the upgrade's query).
 */
import type { MediaStreamCodec, MediaStreamProtocol, StreamEvent, StreamUpgrade } from '../stream';
import { PayloadDecoder } from '../stream-support';
import {
  exotelFrameMs,
  MAX_EXOTEL_MESSAGE_CHARS,
  exotelClearMessage,
  exotelMarkMessage,
  exotelMediaMessage,
  parseExotelStreamMessage,
  type ExotelStartMessage,
} from './media-messages';
import { exotelStreamCredentials } from './stream-auth';

class ExotelCodec implements MediaStreamCodec {
  private streamSid = '';
  private decoder: PayloadDecoder | null = null;
  /** `media.timestamp` of the first chunk: positions are relative to it (Exotel's origin is not documented). */
  private mediaOrigin: number | null = null;
  private readonly query: URLSearchParams | null;

  constructor(upgrade: StreamUpgrade) {
    this.query = upgrade.url?.searchParams ?? null;
  }

  decode(data: Buffer, isBinary: boolean): StreamEvent {
    if (isBinary) return { type: 'invalid', error: 'binary frame (stream messages are JSON text)' };
    const parsed = parseExotelStreamMessage(data);
    if (!parsed.ok) {
      if (parsed.code === 'unknown_event') return { type: 'ignored', what: parsed.error };
      return { type: 'invalid', error: `${parsed.code}: ${parsed.error}` };
    }
    const msg = parsed.message;
    if (msg.event === 'connected') return { type: 'connected' };
    if (msg.event === 'start') return this.start(msg);
    if (!this.decoder) return { type: 'invalid', error: `${msg.event} before start` };
    if (msg.streamSid !== this.streamSid) return { type: 'invalid', error: `${msg.event} for another stream (${msg.streamSid.slice(0, 40)})` };
    switch (msg.event) {
      case 'media': {
        const pcm = this.decoder.decode(msg.payload);
        if (!pcm) return { type: 'invalid', error: 'media.payload: not base64 16-bit PCM' };
        return { type: 'audio', pcm, timestampMs: this.position(msg.timestamp) };
      }
      case 'mark':
        return { type: 'mark', name: msg.name };
      case 'dtmf':
        return { type: 'dtmf', digit: msg.digit };
      case 'stop':
        return { type: 'stop' };
    }
  }

  /** The chunk's position in ms since the first chunk; null (place at arrival) when unusable. */
  private position(timestamp: number | null): number | null {
    if (timestamp === null) return null;
    this.mediaOrigin ??= timestamp;
    const position = timestamp - this.mediaOrigin;
    return position >= 0 && position < 86_400_000 ? position : null;
  }

  private start(msg: ExotelStartMessage): StreamEvent {
    if (this.decoder) return { type: 'invalid', error: 'a second start message' };
    if (!msg.format) return { type: 'refused', reason: `unsupported media format ${msg.mediaFormat}` };
    this.streamSid = msg.streamSid;
    this.decoder = new PayloadDecoder(msg.format);
    const { callId, token } = exotelStreamCredentials(msg.customParameters, this.query);
    return {
      type: 'start',
      start: { streamId: msg.streamSid, providerCallId: msg.callSid, callId, token, format: msg.format, frameMs: exotelFrameMs(msg.format.sampleRate) },
    };
  }

  media(audio: Buffer): string {
    return exotelMediaMessage(this.streamSid, audio);
  }

  mark(name: string): string {
    return exotelMarkMessage(this.streamSid, name);
  }

  clear(): string {
    return exotelClearMessage(this.streamSid);
  }
}

export const exotelMedia: MediaStreamProtocol = {
  name: 'exotel',
  maxMessageBytes: MAX_EXOTEL_MESSAGE_CHARS,
  open: (upgrade) => new ExotelCodec(upgrade),
};
