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
        // Plivo's timestamp is wall-clock epoch ms, not a position in the stream: place audio at arrival.
        return { type: 'audio', pcm, timestampMs: null };
      }
      case 'playedStream':
        return { type: 'mark', name: msg.name };
      case 'clearedAudio':
        return { type: 'cleared' };
      case 'dtmf':
        return { type: 'dtmf', digit: msg.dtmf.digit };
    }
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
