/**
 * Records a whole call as a stereo 16-bit PCM WAV (left = caller, right = agent) on one timeline
 * that starts at call start, written to disk as the call goes.
 *
 * Placement: a write at `atMs` lands at sample round(atMs·rate/1000) of its channel, or right
 * after that channel's previous write if they would overlap; gaps stay silent. Audio is kept in
 * memory only until it is `LATE_WRITE_SLACK_MS` older than the newest write time seen (so a
 * frame that arrives a little late still lands where it belongs), then appended to the file in
 * chunks of about `FLUSH_INTERVAL_MS`; the RIFF and data sizes in the header are rewritten after
 * every append. A crashed process therefore leaves a valid WAV missing at most the last
 * ~1.5 s, and memory stays bounded whatever the call length (≈1.5 s × 4 bytes × 8000 ≈ 48 KB).
 * A write older than what is already on disk is placed at the end of the file instead of lost.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createLogger } from '../../shared/logger';
import { TELEPHONY_SAMPLE_RATE } from '../../audio/pcm';
import { WAV_HEADER_BYTES, wavHeader } from '../../audio/wav';

const log = createLogger('recording');

/** Append to disk once this much audio is ready (fewer, larger writes; ≤ this much lost on a crash). */
export const FLUSH_INTERVAL_MS = 1000;
/** Writes may arrive this late (network jitter, pacing) and still land at their own time. */
export const LATE_WRITE_SLACK_MS = 500;

const CHANNELS = 2;
let zeros = Buffer.alloc(0);
function silence(bytes: number): Buffer {
  if (zeros.length < bytes) zeros = Buffer.alloc(bytes);
  return zeros.subarray(0, bytes);
}
const CALLER = 0;
const AGENT = 1;

export interface WavRecorderOptions {
  path: string;
  sampleRate?: number;
  /** Called once if the file cannot be written; the call goes on without a recording. */
  onError?: (err: Error) => void;
}

export interface RecordingResult {
  path: string;
  durationMs: number;
  bytes: number;
}

export class WavRecorder {
  readonly path: string;
  readonly sampleRate: number;
  private readonly onError?: (err: Error) => void;

  /** Interleaved stereo samples not yet on disk; index 0 is frame `baseFrame`. */
  private buf: Int16Array;
  private baseFrame = 0;
  private readonly endFrame = [0, 0];
  /** The newest write time seen, in frames: our notion of "now" on the call timeline. */
  private nowFrame = 0;
  private dataBytesOnDisk = 0;

  private file: fs.promises.FileHandle | null = null;
  private io: Promise<void>;
  private error: Error | null = null;
  private closing: Promise<RecordingResult> | null = null;

  /** Opens (creates or truncates) the file and writes an empty-but-valid WAV header. */
  static async open(options: WavRecorderOptions): Promise<WavRecorder> {
    const recorder = new WavRecorder(options);
    await recorder.io;
    if (recorder.error) throw recorder.error;
    return recorder;
  }

  /** Starts opening the file in the background; writes before it is open are kept in order. */
  constructor(options: WavRecorderOptions) {
    this.path = options.path;
    this.sampleRate = options.sampleRate ?? TELEPHONY_SAMPLE_RATE;
    this.onError = options.onError;
    this.buf = new Int16Array(this.msToFrames(FLUSH_INTERVAL_MS + LATE_WRITE_SLACK_MS + 500) * CHANNELS);
    this.io = this.openFile().catch((err) => this.fail(err));
  }

  writeCaller(pcm: Int16Array, atMs: number): void {
    this.write(CALLER, pcm, atMs);
  }

  writeAgent(pcm: Int16Array, atMs: number): void {
    this.write(AGENT, pcm, atMs);
  }

  /** Audio held in memory, not yet handed to the disk. */
  get bufferedMs(): number {
    const end = Math.max(this.endFrame[CALLER], this.endFrame[AGENT], this.baseFrame);
    return ((end - this.baseFrame) * 1000) / this.sampleRate;
  }

  /** Resolves once everything handed to the disk so far is written (tests, graceful drain). */
  async flushed(): Promise<void> {
    await this.io;
  }

  /**
   * Writes what is left (the call lasts until `endMs` if given, else until the last sample),
   * finalises the header and closes the file.
   */
  close(endMs?: number): Promise<RecordingResult> {
    this.closing ??= this.finish(endMs);
    return this.closing;
  }

  private write(channel: number, pcm: Int16Array, atMs: number): void {
    if (this.closing || this.error) return;
    if (!Number.isFinite(atMs) || atMs < 0) throw new RangeError(`atMs must be ms since call start (got ${atMs})`);
    const requested = this.msToFrames(atMs);
    if (requested > this.nowFrame) {
      this.nowFrame = requested;
      // Flushing before placing: nothing placed now can land before the horizon.
      const horizon = requested - this.msToFrames(LATE_WRITE_SLACK_MS);
      if (horizon - this.baseFrame >= this.msToFrames(FLUSH_INTERVAL_MS)) this.flushUpTo(horizon);
    }
    const start = Math.max(requested, this.endFrame[channel], this.baseFrame);
    const end = start + pcm.length;
    this.ensureCapacity(end);
    const buf = this.buf;
    for (let i = 0, j = (start - this.baseFrame) * CHANNELS + channel; i < pcm.length; i++, j += CHANNELS) buf[j] = pcm[i];
    this.endFrame[channel] = end;
  }

  private ensureCapacity(endFrame: number): void {
    const needed = (endFrame - this.baseFrame) * CHANNELS;
    if (needed <= this.buf.length) return;
    const grown = new Int16Array(Math.max(needed, this.buf.length * 2));
    grown.set(this.buf);
    this.buf = grown;
  }

  /** Moves frames [baseFrame, upTo) from memory to the file, at most one buffer at a time. */
  private flushUpTo(upTo: number): void {
    while (this.baseFrame < upTo) {
      const frames = Math.min(upTo - this.baseFrame, this.buf.length / CHANNELS);
      const count = frames * CHANNELS;
      let chunk: Buffer;
      if (this.baseFrame >= Math.max(this.endFrame[CALLER], this.endFrame[AGENT])) {
        chunk = silence(count * 2); // nothing written here: no copy needed
      } else {
        // A copy: the in-memory buffer is reused while the write is in flight.
        chunk = Buffer.from(this.buf.slice(0, count).buffer);
        this.buf.copyWithin(0, count);
        this.buf.fill(0, this.buf.length - count);
      }
      this.baseFrame += frames;
      const offset = WAV_HEADER_BYTES + this.dataBytesOnDisk;
      this.dataBytesOnDisk += chunk.length;
      const dataBytes = this.dataBytesOnDisk;
      this.enqueue(async (file) => {
        await file.write(chunk, 0, chunk.length, offset);
        await file.write(this.header(dataBytes), 0, WAV_HEADER_BYTES, 0);
      });
    }
  }

  private async finish(endMs?: number): Promise<RecordingResult> {
    const end = Math.max(this.endFrame[CALLER], this.endFrame[AGENT], endMs === undefined ? 0 : this.msToFrames(endMs));
    if (!this.error) this.flushUpTo(end);
    await this.io;
    const file = this.file;
    this.file = null;
    if (file) await file.close().catch(() => undefined);
    if (this.error) throw this.error;
    return {
      path: this.path,
      durationMs: (this.dataBytesOnDisk / (CHANNELS * 2) / this.sampleRate) * 1000,
      bytes: WAV_HEADER_BYTES + this.dataBytesOnDisk,
    };
  }

  private async openFile(): Promise<void> {
    // Recordings are private to the platform's user (see src/security/data-files.ts).
    await fs.promises.mkdir(path.dirname(this.path), { recursive: true, mode: 0o700 });
    this.file = await fs.promises.open(this.path, 'w', 0o600);
    await this.file.write(this.header(0), 0, WAV_HEADER_BYTES, 0);
  }

  private enqueue(task: (file: fs.promises.FileHandle) => Promise<void>): void {
    this.io = this.io.then(async () => {
      if (this.error || !this.file) return;
      try {
        await task(this.file);
      } catch (err) {
        this.fail(err);
      }
    });
  }

  private fail(err: unknown): void {
    if (this.error) return;
    this.error = err instanceof Error ? err : new Error(String(err));
    this.buf = new Int16Array(0); // stop holding audio we can no longer write
    log.error('recording failed', { path: this.path, error: this.error.message });
    this.onError?.(this.error);
  }

  private header(dataBytes: number): Buffer {
    return wavHeader({ sampleRate: this.sampleRate, channels: CHANNELS }, dataBytes);
  }

  private msToFrames(ms: number): number {
    return Math.round((ms * this.sampleRate) / 1000);
  }
}
