/**
 * The browser's media stream (docs/web-calls.md), served by the gateway at /media/web like a
 * telephony vendor's. Text frames are JSON control messages, binary frames are audio:
 *
 *   browser → gateway  {"event":"start","call_id","token","sample_rate"}   16000 | 24000 | 48000
 *                      binary: 16-bit little-endian mono PCM at sample_rate (20 ms frames)
 *                      {"event":"mark","name"}   a mark we sent has been played ("heard up to here")
 *                      {"event":"stop"}          hang-up
 *   gateway → browser  binary: agent audio, 16-bit PCM mono at 16 kHz, 20 ms frames
 *                      {"event":"mark","name"}   echo it once the audio before it has played
 *                      {"event":"clear"}         barge-in: drop what is buffered
 *
 * A browser capturing at 24 or 48 kHz (the AudioContext's own rate: Firefox cannot connect a
 * microphone to a context of another rate) is resampled here, once, to 16 kHz: everything after
 * this codec is the phone pipeline unchanged.
 */
import crypto from 'node:crypto';
import { PCM16_16K } from '../../../audio/format';
import { Resampler } from '../../../audio/resampler';
import type { MediaStreamCodec, MediaStreamProtocol, StreamEvent, StreamUpgrade } from '../../telephony/stream';
import { parseJsonObject } from '../../telephony/stream-support';
import { verifyWebCallToken } from './token';

export const WEB_CAPTURE_RATES = [16000, 24000, 48000] as const;
/** 100 ms of 48 kHz audio: a browser sends 20 ms frames, this leaves room for a late batch. */
const MAX_MESSAGE_BYTES = 9600 + 1024;
const PIPELINE_RATE = PCM16_16K.sampleRate;

class WebCodec implements MediaStreamCodec {
  private started = false;
  private resampler: Resampler | null = null;
  private scratch = new Int16Array(0);
  private readonly origin: string | undefined;

  constructor(upgrade: StreamUpgrade) {
    const origin = upgrade.headers.origin;
    this.origin = typeof origin === 'string' ? origin : undefined;
  }

  decode(data: Buffer, isBinary: boolean): StreamEvent {
    if (isBinary) return this.audio(data);
    const parsed = parseJsonObject(data);
    if (!parsed.ok) return { type: 'invalid', error: parsed.error };
    const msg = parsed.value;
    switch (msg.event) {
      case 'start':
        return this.start(msg);
      case 'mark':
        return typeof msg.name === 'string' && msg.name ? { type: 'mark', name: msg.name } : { type: 'invalid', error: 'mark without a name' };
      case 'stop':
        return { type: 'stop' };
      default:
        return { type: 'ignored', what: `event ${JSON.stringify(msg.event)?.slice(0, 40)}` };
    }
  }

  private start(msg: Record<string, unknown>): StreamEvent {
    if (this.started) return { type: 'invalid', error: 'a second start message' };
    const rate = msg.sample_rate ?? PIPELINE_RATE;
    if (!(WEB_CAPTURE_RATES as readonly unknown[]).includes(rate)) {
      return { type: 'refused', reason: `unsupported sample_rate ${JSON.stringify(rate)?.slice(0, 20)} (one of ${WEB_CAPTURE_RATES.join(', ')})` };
    }
    this.started = true;
    if (rate !== PIPELINE_RATE) this.resampler = new Resampler(rate as number, PIPELINE_RATE);
    return {
      type: 'start',
      start: {
        streamId: `web-${crypto.randomBytes(8).toString('hex')}`,
        providerCallId: null,
        callId: typeof msg.call_id === 'string' ? msg.call_id : null,
        token: typeof msg.token === 'string' ? msg.token : null,
        format: PCM16_16K,
      },
    };
  }

  private audio(data: Buffer): StreamEvent {
    if (!this.started) return { type: 'invalid', error: 'audio before start' };
    if (data.length % 2 !== 0) return { type: 'invalid', error: `audio frame of ${data.length} bytes (16-bit samples)` };
    const samples = data.length / 2;
    if (this.scratch.length < samples) this.scratch = new Int16Array(samples);
    const pcm = this.scratch.subarray(0, samples);
    for (let i = 0; i < samples; i++) pcm[i] = data.readInt16LE(i * 2);
    return { type: 'audio', pcm: this.resampler ? this.resampler.process(pcm) : pcm, timestampMs: null };
  }

  authenticate(secret: string, callId: string, token: string | null, nowMs: number) {
    return verifyWebCallToken(secret, token, callId, this.origin, nowMs);
  }

  media(audio: Buffer): Buffer {
    return audio;
  }

  mark(name: string): string {
    return JSON.stringify({ event: 'mark', name });
  }

  clear(): string {
    return JSON.stringify({ event: 'clear' });
  }
}

export const webMedia: MediaStreamProtocol = {
  name: 'web',
  maxMessageBytes: MAX_MESSAGE_BYTES,
  open: (upgrade) => new WebCodec(upgrade),
};
