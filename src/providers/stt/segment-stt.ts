/**
 * Speech-to-text for vendors that transcribe a whole utterance per HTTP request (OpenAI's
 * `/v1/audio/transcriptions`, Sarvam's REST `/speech-to-text`). Caller audio is buffered; at
 * finalize() (the gateway's VAD said the caller stopped) the buffered utterance goes out as one
 * WAV upload and its text comes back as the final transcript (`fromFinalize`).
 *
 * What the buffer keeps: the audio since the previous finalize(), minus leading silence beyond
 * LEAD_IN_MS (the caller is silent while the agent talks; a transcription model fed long silence
 * invents words), capped at `maxSegmentMs` (vendors refuse longer uploads). Requests run one at a
 * time so transcripts come out in the order the caller spoke.
 *
 * Such an adapter has no interim results and needs a round trip after the VAD stop, so it tells
 * the gateway how long to wait for its final (`finalWaitMs`) instead of the streaming default.
 */
import { EventEmitter } from 'node:events';
import { decodeMulaw } from '../../audio/g711';
import { pcmFromBytes, pcmToBytes, rms } from '../../audio/pcm';
import { encodeWav } from '../../audio/wav';
import type { Logger } from '../../shared/logger';
import { SpeechProviderError } from '../speech-socket';
import type { SttEvents, SttStream } from './types';

/** Silence kept before the first loud frame, so the model hears the onset. */
const LEAD_IN_MS = 300;
const FRAME_MS = 20;
/** 16-bit RMS below which a 20 ms frame counts as silence (about -45 dBFS). */
const SILENCE_RMS = 180;

export interface SegmentTranscription {
  text: string;
  confidence?: number;
}

export interface SegmentSttOptions {
  provider: string;
  sampleRate: number;
  log: Logger;
  /** Uploads one utterance (a complete 16-bit PCM mono WAV); rejects with a SpeechProviderError. */
  transcribe(wav: Buffer, signal: AbortSignal): Promise<SegmentTranscription>;
  /** Longest utterance sent; older audio is dropped. */
  maxSegmentMs: number;
  /** How long the gateway should wait for a final after finalize(). */
  finalWaitMs: number;
  /** How long close() waits for requests in flight. */
  closeTimeoutMs?: number;
  /** The caller audio arrives as μ-law (decoded here); default 16-bit PCM. */
  encoding?: 'mulaw' | 'linear16';
}

export class SegmentStt extends EventEmitter<SttEvents> implements SttStream {
  readonly provider: string;
  readonly ready: Promise<void> = Promise.resolve();
  readonly finalWaitMs: number;
  audioBytesSent = 0;

  private readonly bytesPerFrame: number;
  private readonly maxBytes: number;
  private readonly leadInBytes: number;
  private chunks: Buffer[] = [];
  private bytes = 0;
  /** A loud frame arrived in this segment; until then only the lead-in of silence is kept. */
  private heardSpeech = false;
  private pendingFrame = Buffer.alloc(0);
  /** Position (bytes since the stream began) of the segment's first buffered byte. */
  private segmentStartByte = 0;
  private totalBytes = 0;
  private queue: Promise<void> = Promise.resolve();
  private readonly controller = new AbortController();
  private closedInfo?: { code: number; reason: string };
  private closing = false;

  constructor(private readonly options: SegmentSttOptions) {
    super();
    this.provider = options.provider.toLowerCase();
    this.finalWaitMs = options.finalWaitMs;
    this.bytesPerFrame = (options.sampleRate * FRAME_MS * 2) / 1000;
    this.maxBytes = Math.round((options.sampleRate * options.maxSegmentMs * 2) / 1000);
    this.leadInBytes = Math.round((options.sampleRate * LEAD_IN_MS * 2) / 1000);
  }

  sendAudio(input: Buffer): void {
    if (input.length === 0 || this.closing || this.closedInfo) return;
    const audio = this.options.encoding === 'mulaw' ? pcmToBytes(decodeMulaw(input)) : input;
    // Whole frames are judged for loudness; a partial one waits for the rest.
    let data = this.pendingFrame.length ? Buffer.concat([this.pendingFrame, audio]) : audio;
    const whole = data.length - (data.length % this.bytesPerFrame);
    this.pendingFrame = Buffer.from(data.subarray(whole));
    data = data.subarray(0, whole);
    for (let i = 0; i < data.length; i += this.bytesPerFrame) this.push(data.subarray(i, i + this.bytesPerFrame));
  }

  finalize(): void {
    if (this.closing || this.closedInfo) return;
    if (this.pendingFrame.length) {
      this.push(this.pendingFrame);
      this.pendingFrame = Buffer.alloc(0);
    }
    const startSecs = this.segmentStartByte / 2 / this.options.sampleRate;
    const pcm = this.heardSpeech ? Buffer.concat(this.chunks) : Buffer.alloc(0);
    this.resetSegment();
    const durationSecs = pcm.length / 2 / this.options.sampleRate;
    this.queue = this.queue.then(() => this.transcribeSegment(pcm, startSecs, durationSecs));
  }

  async close(): Promise<void> {
    if (this.closedInfo) return;
    this.closing = true;
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, this.options.closeTimeoutMs ?? 2000).unref());
    await Promise.race([this.queue, timeout]);
    this.end(1000, '');
  }

  private end(code: number, reason: string): void {
    if (this.closedInfo) return;
    this.controller.abort();
    this.closedInfo = { code, reason };
    this.emit('closed', this.closedInfo);
  }

  private push(frame: Buffer): void {
    this.totalBytes += frame.length;
    const loud = rms(pcmFromBytes(frame)) >= SILENCE_RMS;
    if (loud && !this.heardSpeech) this.heardSpeech = true;
    this.chunks.push(Buffer.from(frame));
    this.bytes += frame.length;
    // Before speech only the lead-in is kept; after it, at most maxSegmentMs.
    const limit = this.heardSpeech ? this.maxBytes : this.leadInBytes;
    while (this.bytes > limit && this.chunks.length > 1) {
      const dropped = this.chunks.shift()!;
      this.bytes -= dropped.length;
    }
    this.segmentStartByte = this.totalBytes - this.bytes;
  }

  private resetSegment(): void {
    this.chunks = [];
    this.bytes = 0;
    this.heardSpeech = false;
    this.segmentStartByte = this.totalBytes;
  }

  private async transcribeSegment(pcm: Buffer, startSecs: number, durationSecs: number): Promise<void> {
    if (this.closedInfo) return;
    // Nothing loud since the last finalize: answer at once with an empty final, no request.
    if (pcm.length === 0) {
      this.emitFinal('', 0, startSecs, durationSecs);
      return;
    }
    try {
      const wav = encodeWav(pcmFromBytes(pcm), this.options.sampleRate);
      this.audioBytesSent += pcm.length;
      const result = await this.options.transcribe(wav, this.controller.signal);
      this.emitFinal(result.text.trim(), result.confidence ?? (result.text.trim() ? 1 : 0), startSecs, durationSecs);
    } catch (err) {
      if (this.controller.signal.aborted) return;
      const error =
        err instanceof SpeechProviderError
          ? err
          : new SpeechProviderError(`${this.options.provider} transcription failed: ${(err as Error).message}`, { provider: this.provider });
      if (this.listenerCount('error') > 0) this.emit('error', error);
      else this.options.log.warn(error.message);
      // The turn still completes (with whatever interim the gateway had: none), rather than waiting out the timer.
      this.emitFinal('', 0, startSecs, durationSecs);
      // A refused key or model will be refused on every turn: the stream ends, like a rejected socket.
      if (error.details.fatal) this.end(1008, error.message);
    }
  }

  private emitFinal(text: string, confidence: number, startSecs: number, durationSecs: number): void {
    if (this.closedInfo) return;
    this.emit('transcript', { text, isFinal: true, speechFinal: true, confidence, fromFinalize: true, startSecs, durationSecs });
  }
}
