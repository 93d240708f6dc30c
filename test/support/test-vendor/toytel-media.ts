/** Toytel's media stream codec (protocol: ./toytel-wire.ts). Never throws, like every codec. */
import { PCM16_8K } from '../../../src/audio/format';
import type { MediaStreamCodec, MediaStreamProtocol, StreamEvent } from '../../../src/providers/telephony/stream';
import { base64Of, parseJsonObject, PayloadDecoder } from '../../../src/providers/telephony/stream-support';

const MAX_MESSAGE_BYTES = 64 * 1024;

class ToytelCodec implements MediaStreamCodec {
  private readonly decoder = new PayloadDecoder(PCM16_8K);
  private started = false;

  decode(data: Buffer, isBinary: boolean): StreamEvent {
    if (isBinary) return { type: 'invalid', error: 'binary message' };
    const parsed = parseJsonObject(data);
    if (!parsed.ok) return { type: 'invalid', error: parsed.error };
    const m = parsed.value;
    switch (m.type) {
      case 'start': {
        if (this.started) return { type: 'invalid', error: 'a second start' };
        const params = (m.params ?? {}) as Record<string, unknown>;
        if (typeof m.stream_id !== 'string' || typeof m.call_id !== 'string') return { type: 'invalid', error: 'start without stream_id or call_id' };
        this.started = true;
        const text = (v: unknown) => (typeof v === 'string' ? v : null);
        return { type: 'start', start: { streamId: m.stream_id, providerCallId: m.call_id, callId: text(params.call_id), token: text(params.token), format: PCM16_8K } };
      }
      case 'audio': {
        const pcm = typeof m.pcm === 'string' ? this.decoder.decode(m.pcm) : null;
        return pcm ? { type: 'audio', pcm, timestampMs: null } : { type: 'invalid', error: 'audio.pcm: not base64 audio' };
      }
      case 'played':
        return typeof m.name === 'string' ? { type: 'mark', name: m.name } : { type: 'invalid', error: 'played without name' };
      case 'stop':
        return { type: 'stop' };
      default:
        return { type: 'invalid', error: `unknown type ${JSON.stringify(m.type)}` };
    }
  }

  media(audio: Buffer): string {
    return JSON.stringify({ type: 'audio', pcm: base64Of(audio) });
  }

  mark(name: string): string {
    return JSON.stringify({ type: 'mark', name });
  }

  clear(): string {
    return JSON.stringify({ type: 'clear' });
  }
}

export const toytelMedia: MediaStreamProtocol = {
  name: 'toytel',
  maxMessageBytes: MAX_MESSAGE_BYTES,
  open: () => new ToytelCodec(),
};
