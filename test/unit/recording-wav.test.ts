import path from 'node:path';
import { decodeMulaw } from '../../src/audio/g711';
import {
  channelOf,
  encodeMulawWav,
  encodeWav,
  parseWav,
  readWavFile,
  WavError,
  wavHeader,
} from '../../src/audio/wav';

const FIXTURES = path.join(__dirname, '../fixtures/audio');

describe('WAV files', () => {
  it('reads the 16-bit PCM speech fixture', () => {
    const wav = readWavFile(path.join(FIXTURES, 'hello-appointment.wav'));
    expect(wav).toMatchObject({ sampleRate: 8000, channels: 1, encoding: 'pcm16', frames: 37271 });
    expect(wav.durationMs).toBeCloseTo(4658.9, 0);
    expect(wav.samples.some((s) => Math.abs(s) > 10000)).toBe(true);
  });

  it('reads a mu-law WAV written by SoX (format 7, 18-byte fmt, fact chunk) as the same audio', () => {
    const pcm = readWavFile(path.join(FIXTURES, 'hello-appointment.wav'));
    const mulaw = readWavFile(path.join(FIXTURES, 'hello-appointment-mulaw.wav'));
    expect(mulaw).toMatchObject({ sampleRate: 8000, channels: 1, encoding: 'mulaw', frames: pcm.frames });
    expect(mulaw.mulaw!.length).toBe(pcm.frames);
    // Decoded, it is the PCM fixture within mu-law quantisation (SoX rounds to the nearest step
    // where the Sun reference truncates, so the codes differ by one step now and then).
    let outside = 0;
    for (let i = 0; i < pcm.frames; i++) {
      if (Math.abs(mulaw.samples[i] - pcm.samples[i]) > Math.max(12, 0.051 * Math.abs(pcm.samples[i]))) outside++;
    }
    expect(outside).toBe(0);
    expect(decodeMulaw(mulaw.mulaw!)).toEqual(mulaw.samples);
  });

  it('writes canonical headers and round-trips stereo PCM and mu-law', () => {
    const stereo = Int16Array.from([1, -1, 2, -2, 32767, -32768]);
    const file = encodeWav(stereo, 8000, 2);
    expect(file.length).toBe(44 + 12);
    expect(file.toString('ascii', 0, 4)).toBe('RIFF');
    expect(file.readUInt32LE(4)).toBe(36 + 12);
    expect(file.readUInt32LE(28)).toBe(32000); // byte rate
    const wav = parseWav(file);
    expect(wav).toMatchObject({ channels: 2, frames: 3, encoding: 'pcm16' });
    expect([...channelOf(wav, 0)]).toEqual([1, 2, 32767]);
    expect([...channelOf(wav, 1)]).toEqual([-1, -2, -32768]);

    const codes = Buffer.from([0xff, 0x80, 0x00, 0x7e]);
    const mu = parseWav(encodeMulawWav(codes));
    expect(mu.encoding).toBe('mulaw');
    expect([...mu.samples]).toEqual([0, 32124, -32124, -8]);
  });

  it('reads a file whose header sizes are stale or unknown up to the end of the file', () => {
    const samples = Int16Array.from([5, 6, 7, 8]);
    const data = Buffer.from(samples.buffer);
    // Header promises more than was written (truncated file) — and a trailing odd byte.
    const truncated = Buffer.concat([wavHeader({ sampleRate: 8000, channels: 1 }, 1000), data, Buffer.from([9])]);
    expect([...parseWav(truncated).samples]).toEqual([5, 6, 7, 8]);
    // Streaming writers leave 0xFFFFFFFF or 0.
    const unknown = Buffer.concat([wavHeader({ sampleRate: 8000, channels: 1 }, 0), data]);
    expect(parseWav(unknown).frames).toBe(4);
    unknown.writeUInt32LE(0xffffffff, 40);
    expect(parseWav(unknown).frames).toBe(4);
    // A header that is behind the data (a recorder that crashed between updates) is believed.
    const behind = Buffer.concat([wavHeader({ sampleRate: 8000, channels: 1 }, 4), data]);
    expect([...parseWav(behind).samples]).toEqual([5, 6]);
  });

  it('skips unknown chunks and understands WAVE_FORMAT_EXTENSIBLE', () => {
    const fmt = Buffer.alloc(8 + 40);
    fmt.write('fmt ', 0, 'ascii');
    fmt.writeUInt32LE(40, 4);
    fmt.writeUInt16LE(0xfffe, 8);
    fmt.writeUInt16LE(1, 10);
    fmt.writeUInt32LE(16000, 12);
    fmt.writeUInt32LE(32000, 16);
    fmt.writeUInt16LE(2, 20);
    fmt.writeUInt16LE(16, 22);
    fmt.writeUInt16LE(22, 24);
    fmt.writeUInt16LE(1, 32); // sub-format GUID starts with the PCM tag
    const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([3, 0, 0, 0]), Buffer.from('abc\0')]); // odd size, padded
    const data = Buffer.concat([Buffer.from('data'), Buffer.from([4, 0, 0, 0]), Buffer.from([1, 0, 2, 0])]);
    const body = Buffer.concat([Buffer.from('WAVE'), list, fmt, data]);
    const riff = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), body]);
    riff.writeUInt32LE(body.length, 4);
    const wav = parseWav(riff);
    expect(wav).toMatchObject({ sampleRate: 16000, channels: 1, encoding: 'pcm16' });
    expect([...wav.samples]).toEqual([1, 2]);
  });

  it('rejects what it cannot read with a WavError', () => {
    expect(() => parseWav(Buffer.from('not a wav file at all'))).toThrow(WavError);
    const eightBit = wavHeader({ sampleRate: 8000, channels: 1 }, 2);
    eightBit.writeUInt16LE(8, 34);
    expect(() => parseWav(Buffer.concat([eightBit, Buffer.alloc(2)]))).toThrow(/unsupported WAV encoding/);
    const noData = wavHeader({ sampleRate: 8000, channels: 1 }, 0).subarray(0, 36);
    expect(() => parseWav(noData)).toThrow(/no data chunk/);
  });
});
