/**
 * A simulated phone caller on Exotel's Voicebot (bidirectional AgentStream) protocol: the
 * vendor-neutral phone (./phone-caller.ts) with Exotel's wire. It opens the stream as Exotel does
 * (`connected`, then `start` with the URL's query as `custom_parameters` and `media_format`
 * audio/x-raw at the URL's `sample-rate`), sends ~100 ms `media` chunks of base64 16-bit
 * little-endian PCM in real time, and plays back what it receives: `media` chunks are checked
 * against Exotel's size rules (≥ 3.2 KB, ≤ 100 KB, multiples of 320 bytes; anything else is a
 * protocol error, as it would be an audible gap), `mark` is echoed once the audio before it has
 * played, `clear` drops the buffer and echoes the pending marks at once (Exotel's protocol is
 * Twilio's, which does). Hanging up sends `stop` (reason `callended`) and closes.
 */
import type { AudioFormat } from '../../src/audio/format';
import { PhoneCaller, newSid, type CallerWire, type PhoneCallerOptions, type WireAction } from './phone-caller';

export { FRAME_MS, SPEECH_PEAK, type CloseInfo, type PlayedFrame, type SpeechSpan } from './phone-caller';

export interface ExotelCallerOptions extends PhoneCallerOptions {
  /** The stream URL, as the applet's URL answer or `streamurl` gave it (query included). */
  url: string;
  accountSid?: string;
  callSid?: string;
  from?: string;
  to?: string;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
export const MIN_CHUNK = 3200;
export const MAX_CHUNK = 100_000;
export const CHUNK_MULTIPLE = 320;

/** The stream's format from its URL (`sample-rate`, default 8000): always 16-bit PCM. */
export function exotelStreamFormat(url: string): AudioFormat {
  const rate = Number(new URL(url).searchParams.get('sample-rate') ?? 8000);
  return { encoding: 'pcm16', sampleRate: rate };
}

/** The custom parameters Exotel passes on: the URL's query minus its own `sample-rate`. */
export function exotelCustomParameters(url: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new URL(url).searchParams) if (k !== 'sample-rate') out[k] = v;
  return out;
}

export class ExotelWire implements CallerWire {
  readonly format: AudioFormat;
  readonly frameMs = 100;
  readonly echoMarksOnClear = true;
  readonly accountSid: string;
  readonly callSid: string;
  readonly streamSid: string;
  private sequence = 0;

  constructor(private readonly opts: ExotelCallerOptions) {
    this.format = exotelStreamFormat(opts.url);
    this.accountSid = opts.accountSid ?? 'exotelfake1';
    this.callSid = opts.callSid ?? newSid('').slice(0, 32);
    this.streamSid = newSid('MZ').slice(0, 34);
  }

  headers(): Record<string, string> {
    return { 'User-Agent': 'Exotel-Voicebot/1.0' };
  }

  opening(): object[] {
    return [
      { event: 'connected' },
      {
        event: 'start',
        sequence_number: this.next(),
        stream_sid: this.streamSid,
        start: {
          stream_sid: this.streamSid,
          call_sid: this.callSid,
          account_sid: this.accountSid,
          from: this.opts.from ?? '',
          to: this.opts.to ?? '',
          custom_parameters: exotelCustomParameters(this.opts.url),
          media_format: { encoding: 'audio/x-raw', sample_rate: String(this.format.sampleRate), bit_rate: '16' },
        },
      },
    ];
  }

  media(audio: Buffer, chunk: number): object {
    return {
      event: 'media',
      sequence_number: this.next(),
      stream_sid: this.streamSid,
      media: { chunk: String(chunk), timestamp: String(chunk * this.frameMs), payload: audio.toString('base64') },
    };
  }

  dtmf(digit: string): object {
    return { event: 'dtmf', sequence_number: this.next(), stream_sid: this.streamSid, dtmf: { digit, duration: '100' } };
  }

  stop(): object {
    return { event: 'stop', sequence_number: this.next(), stream_sid: this.streamSid, stop: { call_sid: this.callSid, account_sid: this.accountSid, reason: 'callended' } };
  }

  markPlayed(name: string): object {
    return { event: 'mark', sequence_number: this.next(), stream_sid: this.streamSid, mark: { name } };
  }

  cleared(): null {
    return null;
  }

  read(message: any): WireAction {
    if (message === null || typeof message !== 'object') return { kind: 'error', error: 'message is not a JSON object' };
    const sid = message.stream_sid ?? message.streamSid;
    if (sid !== this.streamSid) return { kind: 'error', error: `${message.event ?? 'message'} with stream_sid ${JSON.stringify(sid)} (expected ${this.streamSid})` };
    switch (message.event) {
      case 'media':
        return this.mediaOf(message.media);
      case 'mark':
        return typeof message.mark?.name === 'string' && message.mark.name !== '' ? { kind: 'mark', name: message.mark.name } : { kind: 'error', error: 'mark without mark.name' };
      case 'clear':
        return { kind: 'clear' };
      default:
        return { kind: 'error', error: `unknown event ${JSON.stringify(message.event)}` };
    }
  }

  private mediaOf(media: any): WireAction {
    const payload = media?.payload;
    if (typeof payload !== 'string' || !BASE64.test(payload) || payload.length % 4 !== 0) return { kind: 'error', error: 'media.payload is not base64' };
    const audio = Buffer.from(payload, 'base64');
    if (audio.length < MIN_CHUNK || audio.length > MAX_CHUNK || audio.length % CHUNK_MULTIPLE !== 0) {
      return { kind: 'error', error: `media chunk of ${audio.length} bytes breaks Exotel's size rules (${MIN_CHUNK}–${MAX_CHUNK}, multiple of ${CHUNK_MULTIPLE})` };
    }
    return { kind: 'media', audio };
  }

  private next(): string {
    return String(++this.sequence);
  }
}

/** The phone on an Exotel Voicebot stream, with Exotel's ids. */
export class ExotelCaller extends PhoneCaller {
  readonly callSid: string;
  readonly streamSid: string;

  constructor(opts: ExotelCallerOptions) {
    const wire = new ExotelWire(opts);
    super(opts.url, wire, opts);
    this.callSid = wire.callSid;
    this.streamSid = wire.streamSid;
  }

  /** Sends raw text as if from Exotel (tests of malformed input on a live stream). */
  sendRaw(data: string): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(data);
  }
}

/** Connects a caller to a stream URL and starts streaming (silence until `say`). */
export async function connectExotelCaller(opts: ExotelCallerOptions): Promise<ExotelCaller> {
  const caller = new ExotelCaller(opts);
  await caller.open();
  return caller;
}
