/**
 * Plivo Audio Streaming as a neutral media stream: `start`, `media`, `dtmf`, `playedStream`,
 * `clearedAudio` in; `playAudio`, `checkpoint`, `clearAudio` out; the socket closing is the end
 * (Plivo sends no `stop`). The format is the `<Stream contentType>` we asked for, announced in
 * `start.mediaFormat`: μ-law 8 kHz or 16-bit PCM (L16) at 8 or 16 kHz. The call id and token come
 * from `<Stream extraHeaders>`, in `start.extra_headers`.
 *
 * Plivo answers a checkpoint only once its audio has played; after `clearAudio` the pending
 * checkpoints are never answered — Plivo confirms the clear with `clearedAudio` instead.
 */
import type { AudioFormat } from '../../../audio/format';
import type { MediaStreamCodec, MediaStreamProtocol, StreamEvent } from '../stream';
import { PayloadDecoder } from '../stream-support';
import {
  checkpointMessage,
  clearAudioMessage,
  formatOfMediaFormat,
  MAX_PLIVO_MESSAGE_CHARS,
  parsePlivoStreamMessage,
  playAudioMessage,
  type PlivoStartMessage,
} from './media-messages';
import { plivoStreamCredentials } from './stream-auth';

class PlivoCodec implements MediaStreamCodec {
  private streamId = '';
  private format: AudioFormat | null = null;
  private decoder: PayloadDecoder | null = null;
  /** `media.timestamp` of the first chunk: Plivo's timestamps are epoch ms, positions are relative to it. */
  private mediaOrigin: number | null = null;

  decode(data: Buffer, isBinary: boolean): StreamEvent {
    if (isBinary) return { type: 'invalid', error: 'binary frame (stream messages are JSON text)' };
    const parsed = parsePlivoStreamMessage(data);
    if (!parsed.ok) {
      if (parsed.code === 'unknown_event') return { type: 'ignored', what: parsed.error };
      return { type: 'invalid', error: `${parsed.code}: ${parsed.error}` };
    }
    const msg = parsed.message;
    if (msg.event === 'start') return this.start(msg);
    if (!this.decoder) return { type: 'invalid', error: `${msg.event} before start` };
    if (msg.streamId !== this.streamId) return { type: 'invalid', error: `${msg.event} for another stream (${msg.streamId.slice(0, 40)})` };
    switch (msg.event) {
      case 'media': {
        if (msg.media.track !== 'inbound') return { type: 'ignored', what: `media of track ${msg.media.track}` };
        const pcm = this.decoder.decode(msg.media.payload);
        if (!pcm) return { type: 'invalid', error: 'media.payload: not base64 audio in the stream format' };
        return { type: 'audio', pcm, timestampMs: this.position(msg.media.timestamp) };
      }
      case 'playedStream':
        return { type: 'mark', name: msg.name };
      case 'clearedAudio':
        return { type: 'cleared' };
      case 'dtmf':
        return { type: 'dtmf', digit: msg.dtmf.digit };
    }
  }

  /**
   * The chunk's position in the stream, in ms. Plivo stamps media with epoch milliseconds; the
   * first chunk (sent right after `start`) is position 0. Audio held while the call is being set
   * up thus still lands at its own time in the recording rather than shifting everything after
   * it. null (place at arrival) when a timestamp is unusable.
   */
  private position(timestamp: string): number | null {
    const ms = Number(timestamp);
    if (!Number.isSafeInteger(ms) || ms <= 0) return null;
    this.mediaOrigin ??= ms;
    const position = ms - this.mediaOrigin;
    // Out of order or absurd (over a day): not a position we can trust.
    return position >= 0 && position < 86_400_000 ? position : null;
  }

  private start(msg: PlivoStartMessage): StreamEvent {
    if (this.decoder) return { type: 'invalid', error: 'a second start message' };
    const format = formatOfMediaFormat(msg.start.mediaFormat);
    if (!format) return { type: 'refused', reason: `unsupported media format ${msg.start.mediaFormat.encoding}/${msg.start.mediaFormat.sampleRate}` };
    this.streamId = msg.start.streamId;
    this.format = format;
    this.decoder = new PayloadDecoder(format);
    const creds = plivoStreamCredentials(msg.extraHeaders);
    return {
      type: 'start',
      start: { streamId: this.streamId, providerCallId: msg.start.callId, callId: creds?.callId ?? null, token: creds?.token ?? null, format },
    };
  }

  media(audio: Buffer): string {
    return playAudioMessage(this.format!, audio);
  }

  mark(name: string): string {
    return checkpointMessage(this.streamId, name);
  }

  clear(): string {
    return clearAudioMessage(this.streamId);
  }
}

export const plivoMedia: MediaStreamProtocol = {
  name: 'plivo',
  maxMessageBytes: MAX_PLIVO_MESSAGE_CHARS,
  open: () => new PlivoCodec(),
};
