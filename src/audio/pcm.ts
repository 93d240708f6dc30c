/**
 * 16-bit PCM helpers for the media path: byte views, int16/float32 conversion, RMS, and a
 * splitter that cuts arbitrary provider chunks into fixed telephony frames. Resampling lives in
 * resampler.ts. Samples are little-endian, like every wire format and WAV file we deal with
 * (and every CPU Node runs on in practice).
 */

/** Telephony audio: 8 kHz mono, sent and received in 20 ms frames. */
export const TELEPHONY_SAMPLE_RATE = 8000;
export const FRAME_MS = 20;
export const FRAME_SAMPLES = (TELEPHONY_SAMPLE_RATE * FRAME_MS) / 1000; // 160
/** One 20 ms frame: 160 mu-law bytes, or 320 bytes of 16-bit PCM. */
export const MULAW_FRAME_BYTES = FRAME_SAMPLES;
export const PCM16_FRAME_BYTES = FRAME_SAMPLES * 2;

/**
 * Interprets little-endian 16-bit PCM bytes as samples. Zero-copy when the bytes are 2-aligned
 * (the usual case for Buffers); a trailing odd byte is ignored.
 */
export function pcmFromBytes(bytes: Uint8Array): Int16Array {
  const n = bytes.byteLength >> 1;
  if (bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, n);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = (bytes[2 * i] | (bytes[2 * i + 1] << 8)) << 16 >> 16;
  return out;
}

/** The bytes of a sample array, without copying. */
export function pcmToBytes(pcm: Int16Array): Buffer {
  return Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
}

/** int16 → float in [-1, 1), dividing by 32768 like Silero's and Pipecat's preprocessing. */
export function int16ToFloat32(pcm: Int16Array, out?: Float32Array): Float32Array {
  const f = out ?? new Float32Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) f[i] = pcm[i] / 32768;
  return f;
}

/** float in [-1, 1] → int16, rounded and clipped. */
export function float32ToInt16(f: Float32Array, out?: Int16Array): Int16Array {
  const pcm = out ?? new Int16Array(f.length);
  for (let i = 0; i < f.length; i++) {
    const v = Math.round(f[i] * 32768);
    pcm[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
  }
  return pcm;
}

/** Root mean square in sample units (0..32768); 0 for an empty array. */
export function rms(pcm: Int16Array, start = 0, end = pcm.length): number {
  if (end <= start) return 0;
  let sum = 0;
  for (let i = start; i < end; i++) sum += pcm[i] * pcm[i];
  return Math.sqrt(sum / (end - start));
}

/** RMS relative to full scale in dB (-Infinity for digital silence). */
export function rmsDbfs(pcm: Int16Array): number {
  return 20 * Math.log10(rms(pcm) / 32768);
}

/**
 * Cuts a byte stream arriving in arbitrary chunks (TTS providers send whatever sizes they like)
 * into frames of exactly `frameBytes` (160 for 20 ms of mu-law). Whole frames inside a chunk are
 * returned as views of that chunk, so a caller must not modify a chunk after pushing it; only the
 * frame that straddles two chunks is copied.
 */
export class FrameSplitter {
  private readonly carry: Buffer;
  private carryBytes = 0;

  constructor(
    readonly frameBytes: number,
    /** Byte used to pad the last partial frame on flush: 0xFF for mu-law, 0 for PCM. */
    private readonly padByte: number,
  ) {
    if (!Number.isInteger(frameBytes) || frameBytes <= 0) throw new RangeError('frameBytes must be a positive integer');
    this.carry = Buffer.alloc(frameBytes);
  }

  /** Bytes held back waiting for the rest of their frame. */
  get pendingBytes(): number {
    return this.carryBytes;
  }

  push(chunk: Uint8Array): Buffer[] {
    const frames: Buffer[] = [];
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let pos = 0;
    if (this.carryBytes > 0) {
      const take = Math.min(this.frameBytes - this.carryBytes, bytes.length);
      bytes.copy(this.carry, this.carryBytes, 0, take);
      this.carryBytes += take;
      pos = take;
      if (this.carryBytes < this.frameBytes) return frames;
      frames.push(Buffer.from(this.carry));
      this.carryBytes = 0;
    }
    while (bytes.length - pos >= this.frameBytes) {
      frames.push(bytes.subarray(pos, pos + this.frameBytes));
      pos += this.frameBytes;
    }
    if (pos < bytes.length) {
      bytes.copy(this.carry, 0, pos);
      this.carryBytes = bytes.length - pos;
    }
    return frames;
  }

  /** The held-back remainder padded to a whole frame (end of an utterance), or null if none. */
  flush(): Buffer | null {
    if (this.carryBytes === 0) return null;
    const frame = Buffer.alloc(this.frameBytes, this.padByte);
    this.carry.copy(frame, 0, 0, this.carryBytes);
    this.carryBytes = 0;
    return frame;
  }

  /** Drops the held-back remainder (barge-in: the rest of the utterance will never be played). */
  reset(): void {
    this.carryBytes = 0;
  }
}

export { Resampler, resample } from './resampler';
