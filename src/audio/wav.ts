/**
 * WAV (RIFF) building and parsing. Recordings are written as canonical 44-byte-header 16-bit PCM;
 * the parser also reads G.711 mu-law WAVs (format 7, with or without a `fact` chunk) so tests and
 * the vendor fakes can load any fixture. A header whose sizes are stale (a recording whose writer
 * crashed) or unknown (0 / 0xFFFFFFFF from streaming writers) is read up to the end of the file.
 */
import fs from 'node:fs';
import { decodeMulaw } from './g711';
import { pcmFromBytes } from './pcm';

export const WAV_FORMAT_PCM = 1;
export const WAV_FORMAT_MULAW = 7;
const WAV_FORMAT_EXTENSIBLE = 0xfffe;

export const WAV_HEADER_BYTES = 44;
/** Offsets of the two sizes a progressive writer patches as the file grows. */
export const RIFF_SIZE_OFFSET = 4;
export const DATA_SIZE_OFFSET = 40;

export class WavError extends Error {
  override name = 'WavError';
}

export interface WavFormat {
  sampleRate: number;
  channels: number;
  /** 1 = 16-bit PCM (default), 7 = 8-bit mu-law. */
  formatTag?: typeof WAV_FORMAT_PCM | typeof WAV_FORMAT_MULAW;
}

/** The 44-byte canonical header for `dataBytes` of audio. */
export function wavHeader(format: WavFormat, dataBytes: number): Buffer {
  const tag = format.formatTag ?? WAV_FORMAT_PCM;
  const bytesPerSample = tag === WAV_FORMAT_MULAW ? 1 : 2;
  const blockAlign = format.channels * bytesPerSample;
  const h = Buffer.alloc(WAV_HEADER_BYTES);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + dataBytes, RIFF_SIZE_OFFSET);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(tag, 20);
  h.writeUInt16LE(format.channels, 22);
  h.writeUInt32LE(format.sampleRate, 24);
  h.writeUInt32LE(format.sampleRate * blockAlign, 28);
  h.writeUInt16LE(blockAlign, 32);
  h.writeUInt16LE(bytesPerSample * 8, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes, DATA_SIZE_OFFSET);
  return h;
}

/** A complete 16-bit PCM WAV file; `samples` are interleaved when `channels` > 1. */
export function encodeWav(samples: Int16Array, sampleRate: number, channels = 1): Buffer {
  const data = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  return Buffer.concat([wavHeader({ sampleRate, channels }, data.length), data]);
}

/** A complete mu-law WAV file (44-byte variant, which every common reader accepts). */
export function encodeMulawWav(codes: Uint8Array, sampleRate = 8000): Buffer {
  return Buffer.concat([wavHeader({ sampleRate, channels: 1, formatTag: WAV_FORMAT_MULAW }, codes.length), codes]);
}

export interface ParsedWav {
  sampleRate: number;
  channels: number;
  encoding: 'pcm16' | 'mulaw';
  /** 16-bit samples (mu-law decoded), interleaved when stereo. */
  samples: Int16Array;
  /** The original mu-law bytes, for mu-law files. */
  mulaw?: Buffer;
  /** Samples per channel. */
  frames: number;
  durationMs: number;
  /** The data size the header claims; differs from the bytes present after a crash. */
  declaredDataBytes: number;
}

export function parseWav(buf: Buffer): ParsedWav {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') {
    throw new WavError('not a RIFF/WAVE file');
  }
  let fmt: { tag: number; channels: number; sampleRate: number; bits: number } | null = null;
  let pos = 12;
  while (pos + 8 <= buf.length) {
    const id = buf.toString('ascii', pos, pos + 4);
    const size = buf.readUInt32LE(pos + 4);
    const body = pos + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > buf.length) throw new WavError('truncated fmt chunk');
      let tag = buf.readUInt16LE(body);
      if (tag === WAV_FORMAT_EXTENSIBLE && size >= 40) tag = buf.readUInt16LE(body + 24);
      fmt = { tag, channels: buf.readUInt16LE(body + 2), sampleRate: buf.readUInt32LE(body + 4), bits: buf.readUInt16LE(body + 14) };
    } else if (id === 'data') {
      if (!fmt) throw new WavError('data chunk before fmt chunk');
      return decodeData(buf, fmt, body, size);
    }
    pos = body + size + (size & 1); // chunks are padded to even sizes
  }
  throw new WavError(fmt ? 'no data chunk' : 'no fmt chunk');
}

function decodeData(
  buf: Buffer,
  fmt: { tag: number; channels: number; sampleRate: number; bits: number },
  start: number,
  declared: number,
): ParsedWav {
  const { tag, channels, sampleRate, bits } = fmt;
  if (channels < 1 || sampleRate < 1) throw new WavError(`invalid format: ${channels} channels at ${sampleRate} Hz`);
  const isPcm16 = tag === WAV_FORMAT_PCM && bits === 16;
  const isMulaw = tag === WAV_FORMAT_MULAW && bits === 8;
  if (!isPcm16 && !isMulaw) throw new WavError(`unsupported WAV encoding (format ${tag}, ${bits} bits)`);
  const available = buf.length - start;
  const unknown = declared === 0 || declared === 0xffffffff;
  const blockAlign = channels * (isPcm16 ? 2 : 1);
  let bytes = unknown ? available : Math.min(declared, available);
  bytes -= bytes % blockAlign;
  const data = buf.subarray(start, start + bytes);
  const samples = isPcm16 ? pcmFromBytes(Buffer.from(data)).slice() : decodeMulaw(data);
  const frames = samples.length / channels;
  return {
    sampleRate,
    channels,
    encoding: isPcm16 ? 'pcm16' : 'mulaw',
    samples,
    mulaw: isMulaw ? Buffer.from(data) : undefined,
    frames,
    durationMs: (frames * 1000) / sampleRate,
    declaredDataBytes: declared,
  };
}

export function readWavFile(path: string): ParsedWav {
  return parseWav(fs.readFileSync(path));
}

/** One channel of an interleaved recording (0 = left = caller, 1 = right = agent). */
export function channelOf(wav: Pick<ParsedWav, 'samples' | 'channels'>, channel: number): Int16Array {
  if (channel < 0 || channel >= wav.channels) throw new RangeError(`channel ${channel} of ${wav.channels}`);
  if (wav.channels === 1) return wav.samples;
  const out = new Int16Array(wav.samples.length / wav.channels);
  for (let i = 0, j = channel; i < out.length; i++, j += wav.channels) out[i] = wav.samples[j];
  return out;
}
