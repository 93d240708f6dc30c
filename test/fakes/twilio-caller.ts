/**
 * A simulated phone caller on Twilio's Media Streams protocol: the vendor-neutral phone
 * (./phone-caller.ts) with Twilio's wire. It opens the stream the way Twilio does (signed upgrade,
 * `connected`, `start` with the TwiML's `<Parameter>`s), sends 160-byte μ-law `media` frames every
 * 20 ms, echoes a `mark` once the audio before it has played, and on `clear` drops its buffer and
 * echoes every pending mark at once.
 */
import crypto from 'node:crypto';
import { MULAW_8K } from '../../src/audio/format';
import { PhoneCaller, newSid, type CallerWire, type PhoneCallerOptions, type WireAction } from './phone-caller';

export {
  FRAME_MS,
  SPEECH_PEAK,
  loadSpeechWav,
  newSid,
  nowMs,
  pcmPeak,
  tonePcm,
  type CloseInfo,
  type EchoedMark,
  type PlayedFrame,
  type ReceivedEvent,
  type SpeechSpan,
} from './phone-caller';

/** Bytes of one 20 ms Twilio media frame. */
export const FRAME_BYTES = 160;

export interface TwilioCallerOptions extends PhoneCallerOptions {
  /** The `<Stream url>` to connect to (wss:// in production; ws:// accepted for local tests). */
  url: string;
  accountSid?: string;
  callSid?: string;
  streamSid?: string;
  /** The `<Parameter>`s of the TwiML, delivered in `start.customParameters`. */
  customParameters?: Record<string, string>;
  /** Sign the upgrade with X-Twilio-Signature like Twilio (HMAC-SHA1 of the URL, no params). */
  authToken?: string;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export class TwilioWire implements CallerWire {
  readonly format = MULAW_8K;
  readonly frameMs = 20;
  readonly echoMarksOnClear = true;
  readonly accountSid: string;
  readonly callSid: string;
  readonly streamSid: string;
  private sequence = 0;

  constructor(private readonly opts: Omit<TwilioCallerOptions, 'url'>) {
    this.accountSid = opts.accountSid ?? newSid('AC');
    this.callSid = opts.callSid ?? newSid('CA');
    this.streamSid = opts.streamSid ?? newSid('MZ');
  }

  headers(url: string): Record<string, string> {
    const headers: Record<string, string> = { 'User-Agent': 'Twilio.TmeWs/1.0' };
    if (this.opts.authToken) headers['X-Twilio-Signature'] = crypto.createHmac('sha1', this.opts.authToken).update(url, 'utf8').digest('base64');
    return headers;
  }

  opening(): object[] {
    return [
      { event: 'connected', protocol: 'Call', version: '1.0.0' },
      {
        event: 'start',
        sequenceNumber: this.next(),
        start: {
          accountSid: this.accountSid,
          streamSid: this.streamSid,
          callSid: this.callSid,
          tracks: ['inbound'],
          mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
          customParameters: this.opts.customParameters ?? {},
        },
        streamSid: this.streamSid,
      },
    ];
  }

  media(audio: Buffer, chunk: number): object {
    return {
      event: 'media',
      sequenceNumber: this.next(),
      media: { track: 'inbound', chunk: String(chunk), timestamp: String((chunk - 1) * this.frameMs), payload: audio.toString('base64') },
      streamSid: this.streamSid,
    };
  }

  dtmf(digit: string): object {
    return { event: 'dtmf', streamSid: this.streamSid, sequenceNumber: this.next(), dtmf: { track: 'inbound_track', digit } };
  }

  stop(): object {
    return { event: 'stop', sequenceNumber: this.next(), streamSid: this.streamSid, stop: { accountSid: this.accountSid, callSid: this.callSid } };
  }

  markPlayed(name: string): object {
    return { event: 'mark', sequenceNumber: this.next(), streamSid: this.streamSid, mark: { name } };
  }

  cleared(): null {
    return null;
  }

  read(message: any): WireAction {
    if (message === null || typeof message !== 'object') return { kind: 'error', error: 'message is not a JSON object' };
    if (message.streamSid !== this.streamSid) {
      return { kind: 'error', error: `${message.event ?? 'message'} with streamSid ${JSON.stringify(message.streamSid)} (expected ${this.streamSid})` };
    }
    switch (message.event) {
      case 'media': {
        const payload = message.media?.payload;
        if (typeof payload !== 'string' || !BASE64.test(payload) || payload.length % 4 !== 0) return { kind: 'error', error: 'media.payload is not base64' };
        return { kind: 'media', audio: Buffer.from(payload, 'base64') };
      }
      case 'mark':
        return typeof message.mark?.name === 'string' ? { kind: 'mark', name: message.mark.name } : { kind: 'error', error: 'mark.name is not a string' };
      case 'clear':
        return { kind: 'clear' };
      default:
        return { kind: 'error', error: `unknown event ${JSON.stringify(message.event)}` };
    }
  }

  private next(): string {
    return String(++this.sequence);
  }
}

/** The phone on a Twilio Media Stream, with Twilio's ids. */
export class TwilioCaller extends PhoneCaller {
  readonly accountSid: string;
  readonly callSid: string;
  readonly streamSid: string;

  constructor(opts: TwilioCallerOptions) {
    const wire = new TwilioWire(opts);
    super(opts.url, wire, opts);
    this.accountSid = wire.accountSid;
    this.callSid = wire.callSid;
    this.streamSid = wire.streamSid;
  }
}

/** Connects a caller to a stream URL and starts streaming (silence until `say`). */
export async function connectTwilioCaller(opts: TwilioCallerOptions): Promise<TwilioCaller> {
  const caller = new TwilioCaller(opts);
  await caller.open();
  return caller;
}
