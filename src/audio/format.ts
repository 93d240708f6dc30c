/**
 * The audio format of a call is a parameter: telephony streams differ (Twilio and Plivo μ-law
 * 8 kHz, Exotel and Plivo L16 16-bit PCM at 8 or 16 kHz), and every stage — STT input, TTS output,
 * playback framing, recording — is told the format instead of assuming one.
 *
 * Inside the gateway caller audio is always 16-bit PCM at the stream's rate (decoded once by the
 * vendor codec); agent audio travels in the stream's own format from the TTS vendor to the socket,
 * so nothing is converted twice. FormatConverter is for the vendors that cannot produce the
 * stream's format (decode → resample → encode, streaming).
 */
import { decodeMulaw, encodeMulaw, MULAW_SILENCE } from './g711';
import { pcmFromBytes, pcmToBytes } from './pcm';
import { Resampler } from './resampler';

export type AudioEncoding = 'mulaw' | 'pcm16';

export interface AudioFormat {
  readonly encoding: AudioEncoding;
  /** Samples per second, mono. */
  readonly sampleRate: number;
}

export const MULAW_8K: AudioFormat = Object.freeze({ encoding: 'mulaw', sampleRate: 8000 });
export const PCM16_8K: AudioFormat = Object.freeze({ encoding: 'pcm16', sampleRate: 8000 });
export const PCM16_16K: AudioFormat = Object.freeze({ encoding: 'pcm16', sampleRate: 16000 });

/** Rates a telephony stream may use (the VAD runs at 8 or 16 kHz; 24 kHz would need a resample). */
export const STREAM_SAMPLE_RATES = [8000, 16000] as const;

export function bytesPerSample(format: AudioFormat): number {
  return format.encoding === 'mulaw' ? 1 : 2;
}

/** Bytes of `ms` milliseconds of audio (20 ms of μ-law 8 kHz = 160, of PCM16 16 kHz = 640). */
export function bytesForMs(format: AudioFormat, ms: number): number {
  return Math.round((format.sampleRate * ms) / 1000) * bytesPerSample(format);
}

/** Milliseconds of audio in `bytes`. */
export function msForBytes(format: AudioFormat, bytes: number): number {
  return (bytes / bytesPerSample(format) / format.sampleRate) * 1000;
}

/** The byte value of silence: 0xFF for μ-law, 0 for PCM (both bytes of a sample). */
export function silenceByte(format: AudioFormat): number {
  return format.encoding === 'mulaw' ? MULAW_SILENCE : 0;
}

export function silence(format: AudioFormat, ms: number): Buffer {
  return Buffer.alloc(bytesForMs(format, ms), silenceByte(format));
}

export function sameFormat(a: AudioFormat, b: AudioFormat): boolean {
  return a.encoding === b.encoding && a.sampleRate === b.sampleRate;
}

/** e.g. `mulaw/8000`, `pcm16/16000` — for logs, errors and metrics labels. */
export function describeFormat(format: AudioFormat): string {
  return `${format.encoding}/${format.sampleRate}`;
}

/** Audio bytes in `format` → 16-bit PCM samples at the same rate. `out` is reused when big enough. */
export function toPcm16(audio: Uint8Array, format: AudioFormat, out?: Int16Array): Int16Array {
  if (format.encoding === 'mulaw') return decodeMulaw(audio, out && out.length >= audio.length ? out : undefined);
  return pcmFromBytes(audio);
}

/** 16-bit PCM samples → bytes in `format`'s encoding (no resampling). */
export function fromPcm16(pcm: Int16Array, format: AudioFormat): Buffer {
  return format.encoding === 'mulaw' ? encodeMulaw(pcm) : Buffer.from(pcmToBytes(pcm));
}

/**
 * Streaming conversion between two formats: decode, resample (the shared polyphase resampler),
 * encode. Identity when the formats are equal. Feed chunks of any size; `flush()` at the end of an
 * utterance returns the resampler's lookahead tail and resets it.
 */
export class FormatConverter {
  private readonly resampler: Resampler | null;
  private readonly identity: boolean;
  private carry: Buffer | null = null;

  constructor(
    readonly from: AudioFormat,
    readonly to: AudioFormat,
  ) {
    this.identity = sameFormat(from, to);
    this.resampler = from.sampleRate === to.sampleRate ? null : new Resampler(from.sampleRate, to.sampleRate);
  }

  convert(chunk: Buffer): Buffer {
    if (this.identity) return chunk;
    let bytes = chunk;
    // A 16-bit sample split across two chunks is carried to the next one.
    if (this.from.encoding === 'pcm16') {
      if (this.carry) {
        bytes = Buffer.concat([this.carry, chunk]);
        this.carry = null;
      }
      if (bytes.length % 2) {
        this.carry = Buffer.from(bytes.subarray(bytes.length - 1));
        bytes = bytes.subarray(0, bytes.length - 1);
      }
    }
    const pcm = this.from.encoding === 'mulaw' ? decodeMulaw(bytes) : pcmFromBytes(bytes);
    const resampled = this.resampler ? this.resampler.process(pcm) : pcm;
    return fromPcm16(resampled, this.to);
  }

  flush(): Buffer {
    this.carry = null;
    if (this.identity || !this.resampler) return Buffer.alloc(0);
    return fromPcm16(this.resampler.flush(), this.to);
  }
}
