/**
 * Helpers every media-stream codec needs: the text of a WebSocket message, a JSON object out of
 * it, and base64 audio payloads decoded to 16-bit PCM once (into a reused buffer) or encoded.
 */
import { bytesPerSample, type AudioFormat } from '../../audio/format';
import { decodeMulaw } from '../../audio/g711';

export const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export type JsonObject = Record<string, unknown>;

/** Text of a `ws` message (Buffer, Buffer[], ArrayBuffer or string); null for anything else. */
export function messageText(data: unknown): string | null {
  if (typeof data === 'string') return data;
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data) && data.every((d) => Buffer.isBuffer(d))) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return null;
}

/** A JSON object out of a message, or why not. Never throws. */
export function parseJsonObject(data: unknown): { ok: true; value: JsonObject } | { ok: false; error: string } {
  let text: string | null;
  try {
    text = messageText(data);
  } catch {
    text = null;
  }
  if (text === null) return { ok: false, error: 'message is not text' };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, error: 'message is not JSON' };
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return { ok: false, error: 'message is not a JSON object' };
  return { ok: true, value: json as JsonObject };
}

/**
 * Decodes base64 audio payloads of one stream to 16-bit PCM at the stream's rate. The result is
 * a scratch buffer reused by the next decode (callers copy what they keep), so a call's 50 frames
 * a second allocate nothing of size.
 */
export class PayloadDecoder {
  private scratch = new Int16Array(0);
  private bytes = Buffer.alloc(0);

  constructor(readonly format: AudioFormat) {}

  /** null when the payload is not base64 or not a whole number of samples. */
  decode(base64: string): Int16Array | null {
    if (!BASE64.test(base64)) return null;
    const size = Math.floor((base64.length * 3) / 4);
    if (this.bytes.length < size) this.bytes = Buffer.alloc(Math.max(size, 2 * this.bytes.length));
    const n = this.bytes.write(base64, 'base64');
    if (n % bytesPerSample(this.format) !== 0) return null;
    const samples = n / bytesPerSample(this.format);
    if (this.scratch.length < samples) this.scratch = new Int16Array(Math.max(samples, 2 * this.scratch.length));
    const out = this.scratch.subarray(0, samples);
    if (this.format.encoding === 'mulaw') {
      decodeMulaw(this.bytes.subarray(0, n), out);
    } else {
      // Little-endian samples (pcm.ts); Buffer.alloc never pools, so `bytes` starts 2-aligned.
      out.set(new Int16Array(this.bytes.buffer, this.bytes.byteOffset, samples));
    }
    return out;
  }
}

/** base64 of a view's own bytes (not the whole underlying ArrayBuffer). */
export function base64Of(audio: Uint8Array): string {
  return Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength).toString('base64');
}
