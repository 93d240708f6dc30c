/**
 * A simulated phone caller on Plivo's Audio Streaming protocol: the vendor-neutral phone
 * (./phone-caller.ts) with Plivo's wire. It opens the stream the way Plivo does (`start` with
 * `extra_headers` and the negotiated `mediaFormat`), sends 20 ms `media` chunks in the stream's
 * content type (μ-law 8 kHz or L16 8/16 kHz) stamped with epoch milliseconds, answers a
 * `checkpoint` with `playedStream` only once the audio before it has played, and on `clearAudio`
 * drops its buffer and the pending checkpoints (never answered) and confirms with `clearedAudio`.
 * Hanging up closes the socket: Plivo sends no stop message.
 */
import crypto from 'node:crypto';
import type { AudioFormat } from '../../src/audio/format';
import { plivoMimeType } from '../../src/providers/telephony/plivo/media-messages';
import { PhoneCaller, nowMs, type CallerWire, type PhoneCallerOptions, type WireAction } from './phone-caller';

export { FRAME_MS, SPEECH_PEAK, type CloseInfo, type PlayedFrame, type SpeechSpan } from './phone-caller';

export interface PlivoCallerOptions extends PhoneCallerOptions {
  /** The `<Stream>` URL (the element's text). */
  url: string;
  /** The stream's format, from `<Stream contentType>`. */
  format: AudioFormat;
  /** The `<Stream extraHeaders>` value, handed back in `start.extra_headers`. */
  extraHeaders?: string;
  accountId?: string;
  callId?: string;
  streamId?: string;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export class PlivoWire implements CallerWire {
  readonly format: AudioFormat;
  readonly frameMs = 20;
  readonly echoMarksOnClear = false;
  readonly accountId: string;
  readonly callId: string;
  readonly streamId: string;
  private sequence = 0;
  private openedAtMs = 0;

  constructor(private readonly opts: Omit<PlivoCallerOptions, 'url'>) {
    this.format = opts.format;
    this.accountId = opts.accountId ?? `MA${crypto.randomBytes(9).toString('hex').toUpperCase()}`;
    this.callId = opts.callId ?? crypto.randomUUID();
    this.streamId = opts.streamId ?? crypto.randomUUID();
  }

  headers(): Record<string, string> {
    return { 'User-Agent': 'PlivoStream/1.0' };
  }

  opening(): object[] {
    this.openedAtMs = nowMs();
    return [
      {
        event: 'start',
        sequenceNumber: this.next(),
        start: {
          callId: this.callId,
          streamId: this.streamId,
          accountId: this.accountId,
          tracks: ['inbound'],
          mediaFormat: { encoding: plivoMimeType(this.format), sampleRate: this.format.sampleRate },
        },
        extra_headers: this.opts.extraHeaders ?? '',
      },
    ];
  }

  media(audio: Buffer, chunk: number): object {
    return {
      event: 'media',
      sequenceNumber: this.next(),
      streamId: this.streamId,
      // Epoch ms of the chunk's capture (its slot on the caller's clock), as Plivo stamps media.
      media: { track: 'inbound', timestamp: String(Math.round(this.openedAtMs + (chunk - 1) * this.frameMs)), chunk, payload: audio.toString('base64') },
      extra_headers: this.opts.extraHeaders ?? '',
    };
  }

  dtmf(digit: string): object {
    return { event: 'dtmf', sequenceNumber: this.next(), streamId: this.streamId, dtmf: { track: 'inbound', digit } };
  }

  stop(): null {
    return null;
  }

  markPlayed(name: string): object {
    return { event: 'playedStream', sequenceNumber: this.next(), streamId: this.streamId, name };
  }

  cleared(): object {
    return { event: 'clearedAudio', sequenceNumber: this.next(), streamId: this.streamId };
  }

  read(message: any): WireAction {
    if (message === null || typeof message !== 'object') return { kind: 'error', error: 'message is not a JSON object' };
    if (message.event === 'playAudio') return this.playAudio(message.media);
    if (message.streamId !== this.streamId) {
      return { kind: 'error', error: `${message.event ?? 'message'} with streamId ${JSON.stringify(message.streamId)} (expected ${this.streamId})` };
    }
    switch (message.event) {
      case 'checkpoint':
        return typeof message.name === 'string' && message.name !== '' ? { kind: 'mark', name: message.name } : { kind: 'error', error: 'checkpoint without a name' };
      case 'clearAudio':
        return { kind: 'clear' };
      default:
        return { kind: 'error', error: `unknown event ${JSON.stringify(message.event)}` };
    }
  }

  private playAudio(media: any): WireAction {
    const payload = media?.payload;
    if (typeof payload !== 'string' || !BASE64.test(payload) || payload.length % 4 !== 0) return { kind: 'error', error: 'playAudio media.payload is not base64' };
    // Plivo cannot switch codecs within a stream: the audio must be in the stream's content type.
    if (media.contentType !== plivoMimeType(this.format) || Number(media.sampleRate) !== this.format.sampleRate) {
      return { kind: 'error', error: `playAudio as ${media.contentType}/${media.sampleRate} on a ${plivoMimeType(this.format)}/${this.format.sampleRate} stream` };
    }
    const audio = Buffer.from(payload, 'base64');
    if (this.format.encoding === 'pcm16' && audio.length % 2) return { kind: 'error', error: 'playAudio L16 payload with an odd number of bytes' };
    return { kind: 'media', audio };
  }

  private next(): number {
    return ++this.sequence;
  }
}

/** The phone on a Plivo Audio Stream, with Plivo's ids. */
export class PlivoCaller extends PhoneCaller {
  readonly accountId: string;
  readonly callId: string;
  readonly streamId: string;

  constructor(opts: PlivoCallerOptions) {
    const wire = new PlivoWire(opts);
    super(opts.url, wire, opts);
    this.accountId = wire.accountId;
    this.callId = wire.callId;
    this.streamId = wire.streamId;
  }

  /** Sends raw text as if from Plivo (tests of malformed input on a live stream). */
  sendRaw(data: string): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(data);
  }
}

/** Connects a caller to a stream URL and starts streaming (silence until `say`). */
export async function connectPlivoCaller(opts: PlivoCallerOptions): Promise<PlivoCaller> {
  const caller = new PlivoCaller(opts);
  await caller.open();
  return caller;
}
