/**
 * A simulated browser on the web channel's media stream (docs/web-calls.md,
 * src/providers/channels/web/media.ts), as the widget (web/widget/voice-call.ts) speaks it: the
 * vendor-neutral phone (./phone-caller.ts) with the web wire. It opens `/media/web` with the page's
 * `Origin`, sends `start` with the call id and token that `POST /api/calls/web` gave, then 20 ms
 * binary frames of 16-bit little-endian PCM at 16 kHz; the agent's audio arrives as binary
 * frames too, marks and clears as JSON. A mark is echoed once the audio before it has played, and
 * a clear answers the pending marks at once (the widget does, as telephony vendors do). Hanging up
 * sends `stop`. The web channel has no keypad.
 */
import { PCM16_16K } from '../../src/audio/format';
import { PhoneCaller, type CallerWire, type PhoneCallerOptions, type WireAction } from './phone-caller';

export interface WebCallerOptions extends PhoneCallerOptions {
  /** `stream_url` of `POST /api/calls/web`. */
  url: string;
  callId: string;
  token: string;
  /** The page's origin, sent as the upgrade's Origin header (a publishable key checks it). */
  origin?: string;
}

export class WebWire implements CallerWire {
  readonly format = PCM16_16K;
  readonly frameMs = 20;
  readonly echoMarksOnClear = true;

  constructor(private readonly opts: WebCallerOptions) {}

  headers(): Record<string, string> {
    return this.opts.origin ? { Origin: this.opts.origin } : {};
  }

  opening(): object[] {
    return [{ event: 'start', call_id: this.opts.callId, token: this.opts.token, sample_rate: this.format.sampleRate }];
  }

  media(audio: Buffer): Buffer {
    return audio;
  }

  dtmf(): object {
    throw new Error('the web channel has no keypad');
  }

  stop(): object {
    return { event: 'stop' };
  }

  markPlayed(name: string): object {
    return { event: 'mark', name };
  }

  cleared(): null {
    return null;
  }

  read(message: any): WireAction {
    if (message === null || typeof message !== 'object') return { kind: 'error', error: 'message is not a JSON object' };
    if (message.event === 'mark') return typeof message.name === 'string' && message.name ? { kind: 'mark', name: message.name } : { kind: 'error', error: 'mark without a name' };
    if (message.event === 'clear') return { kind: 'clear' };
    return { kind: 'error', error: `unknown event ${JSON.stringify(message.event)}` };
  }

  readBinary(data: Buffer): WireAction {
    // 16-bit samples: an odd length would be a corrupt frame the browser cannot play.
    return data.length % 2 === 0 ? { kind: 'media', audio: data } : { kind: 'error', error: `binary frame of ${data.length} bytes` };
  }
}

/** Connects a browser to a web call's stream and starts streaming (silence until `say`). */
export async function connectWebCaller(opts: WebCallerOptions): Promise<PhoneCaller> {
  const caller = new PhoneCaller(opts.url, new WebWire(opts), opts);
  await caller.open();
  return caller;
}
