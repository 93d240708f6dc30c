/**
 * Twilio Media Streams as a neutral media stream: `connected`, `start`, `media`, `mark`, `dtmf`,
 * `stop` in; `media`, `mark`, `clear` out; 8 kHz G.711 μ-law both ways. The call id and token
 * come as `<Parameter>`s of the TwiML, in `start.customParameters` (Twilio refuses a query string
 * on the stream URL).
 */
import { MULAW_8K } from '../../../audio/format';
import type { MediaStreamCodec, MediaStreamProtocol, StreamEvent } from '../stream';
import { base64Of, PayloadDecoder } from '../stream-support';
import { clearMessage, markMessage, MAX_TWILIO_MESSAGE_CHARS, parseTwilioStreamMessage, type TwilioStartMessage } from './media-messages';

/**
 * Agent audio per outgoing `media` message. Twilio plays payloads of any length back to back; a
 * message per 20 ms was the gateway's largest cost while many calls speak at once (their
 * greetings, in a burst of calls): one send, one encode and one socket write per message. 40 ms
 * halves that; the gateway then keeps ~80 ms queued at Twilio, which a barge-in's `clear` drops.
 */
export const TWILIO_OUT_FRAME_MS = 40;

class TwilioCodec implements MediaStreamCodec {
  private streamSid = '';
  private mediaPrefix = '';
  private readonly decoder = new PayloadDecoder(MULAW_8K);

  decode(data: Buffer, isBinary: boolean): StreamEvent {
    if (isBinary) return { type: 'invalid', error: 'binary frame (Media Streams messages are JSON text)' };
    const parsed = parseTwilioStreamMessage(data);
    if (!parsed.ok) {
      // Twilio has added events before: an unknown one is not an error.
      if (parsed.code === 'unknown_event') return { type: 'ignored', what: parsed.error };
      return { type: 'invalid', error: `${parsed.code}: ${parsed.error}` };
    }
    const msg = parsed.message;
    if (msg.event === 'connected') return { type: 'connected' };
    if (msg.event === 'start') return this.start(msg);
    if (!this.streamSid) return { type: 'invalid', error: `${msg.event} before start` };
    if (msg.streamSid !== this.streamSid) return { type: 'invalid', error: `${msg.event} for another stream (${msg.streamSid.slice(0, 40)})` };
    switch (msg.event) {
      case 'media': {
        if (msg.media.track !== 'inbound') return { type: 'ignored', what: `media of track ${msg.media.track}` };
        const pcm = this.decoder.decode(msg.media.payload);
        if (!pcm) return { type: 'invalid', error: 'media.payload: not base64 audio' };
        return { type: 'audio', pcm, timestampMs: Number(msg.media.timestamp) };
      }
      case 'mark':
        return { type: 'mark', name: msg.mark.name };
      case 'dtmf':
        return { type: 'dtmf', digit: msg.dtmf.digit };
      case 'stop':
        return { type: 'stop' };
    }
  }

  private start(msg: TwilioStartMessage): StreamEvent {
    if (this.streamSid) return { type: 'invalid', error: 'a second start message' };
    if (msg.start.streamSid !== msg.streamSid) return { type: 'invalid', error: 'start: inconsistent streamSid' };
    const f = msg.start.mediaFormat;
    if (f.encoding !== 'audio/x-mulaw' || f.sampleRate !== 8000 || f.channels !== 1) {
      return { type: 'refused', reason: `unsupported media format ${f.encoding}/${f.sampleRate}/${f.channels}` };
    }
    this.streamSid = msg.streamSid;
    // Every outgoing frame shares this prefix: one string concatenation per frame instead of a JSON.stringify.
    this.mediaPrefix = `{"event":"media","streamSid":${JSON.stringify(this.streamSid)},"media":{"payload":"`;
    const params = msg.start.customParameters;
    return {
      type: 'start',
      start: {
        streamId: msg.streamSid,
        providerCallId: msg.start.callSid,
        callId: params.call_id ?? null,
        token: params.token ?? null,
        format: MULAW_8K,
        frameMs: TWILIO_OUT_FRAME_MS,
      },
    };
  }

  media(audio: Buffer): string {
    return `${this.mediaPrefix}${base64Of(audio)}"}}`;
  }

  mark(name: string): string {
    return markMessage(this.streamSid, name);
  }

  clear(): string {
    return clearMessage(this.streamSid);
  }
}

export const twilioMedia: MediaStreamProtocol = {
  name: 'twilio',
  maxMessageBytes: MAX_TWILIO_MESSAGE_CHARS,
  open: () => new TwilioCodec(),
};
