/**
 * Groups a call's caller audio into STT writes. A socket write per 20 ms telephony frame per call
 * was the gateway's largest CPU cost (a quarter of it at 50 calls), so audio goes out in chunks:
 * STT_CHUNK_MS while the caller may be talking, QUIET_CHUNK_MS while the VAD hears nobody — most
 * of a call, since the caller listens while the agent talks. Silence only has to reach the vendor
 * before the transcript that needs it; when the VAD hears speech begin, whatever silence is
 * buffered goes out at once, so the words themselves travel in short chunks as before.
 */
import { pcmToBytes } from '../../audio/pcm';

/** Caller audio per STT write while the caller may be talking (interim results wait ≤ this much). */
export const STT_CHUNK_MS = 80;
/** Caller audio per STT write while the VAD hears no speech. */
export const QUIET_CHUNK_MS = 240;

export class SttChunker {
  private readonly chunkBytes: number;
  private readonly quietBytes: number;
  private chunk: Buffer;
  private filled = 0;

  /** `write` gets each chunk as a buffer of its own (the socket may still hold the previous one). */
  constructor(
    sampleRate: number,
    private readonly write: (chunk: Buffer) => void,
  ) {
    this.chunkBytes = Math.round((sampleRate * STT_CHUNK_MS) / 1000) * 2;
    this.quietBytes = Math.round((sampleRate * QUIET_CHUNK_MS) / 1000) * 2;
    this.chunk = Buffer.allocUnsafe(this.quietBytes);
  }

  /** 16-bit PCM (copied: `pcm` may be reused); `quiet`: the VAD hears no speech right now. */
  push(pcm: Int16Array, quiet: boolean): void {
    const limit = quiet ? this.quietBytes : this.chunkBytes;
    // Speech began with quiet audio buffered: it goes out now, ahead of the words.
    if (this.filled >= limit) this.flush();
    const bytes = pcmToBytes(pcm);
    for (let at = 0; at < bytes.length; ) {
      const n = bytes.copy(this.chunk, this.filled, at, Math.min(bytes.length, at + limit - this.filled));
      this.filled += n;
      at += n;
      if (this.filled === limit) this.flush();
    }
  }

  /** Sends what is buffered (before a finalize: the vendor must have every word). */
  flush(): void {
    if (this.filled === 0) return;
    const full = this.chunk.subarray(0, this.filled);
    this.chunk = Buffer.allocUnsafe(this.quietBytes);
    this.filled = 0;
    this.write(full);
  }

  /** Forgets what is buffered (the call is over). */
  discard(): void {
    this.filled = 0;
  }
}
