import { decodeMulaw, encodeMulaw } from '../../src/audio/g711';
import {
  bytesForMs,
  describeFormat,
  FormatConverter,
  fromPcm16,
  msForBytes,
  MULAW_8K,
  PCM16_16K,
  PCM16_8K,
  silence,
  toPcm16,
  type AudioFormat,
} from '../../src/audio/format';
import { pcmFromBytes, rms } from '../../src/audio/pcm';

function tone(rate: number, ms: number, hz = 440, amplitude = 8000): Int16Array {
  const n = (rate * ms) / 1000;
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate));
  return out;
}

describe('audio formats', () => {
  it('sizes 20 ms frames for every stream format', () => {
    expect(bytesForMs(MULAW_8K, 20)).toBe(160);
    expect(bytesForMs(PCM16_8K, 20)).toBe(320);
    expect(bytesForMs(PCM16_16K, 20)).toBe(640);
    expect(msForBytes(PCM16_16K, 640)).toBe(20);
    expect(describeFormat(PCM16_16K)).toBe('pcm16/16000');
  });

  it('makes silence that decodes to zero samples', () => {
    expect([...toPcm16(silence(MULAW_8K, 20), MULAW_8K)].every((s) => s === 0)).toBe(true);
    expect([...silence(PCM16_8K, 20)].every((b) => b === 0)).toBe(true);
  });

  it('round-trips PCM through each encoding', () => {
    const pcm = tone(8000, 20);
    expect(toPcm16(fromPcm16(pcm, PCM16_8K), PCM16_8K)).toEqual(pcm);
    expect(toPcm16(fromPcm16(pcm, MULAW_8K), MULAW_8K)).toEqual(decodeMulaw(encodeMulaw(pcm)));
  });

  it.each<[AudioFormat, AudioFormat]>([
    [{ encoding: 'pcm16', sampleRate: 24000 }, MULAW_8K],
    [{ encoding: 'pcm16', sampleRate: 24000 }, PCM16_16K],
    [MULAW_8K, PCM16_16K],
    [PCM16_16K, PCM16_8K],
  ])('converts %o to %o streaming, keeping length and level', (from, to) => {
    const source = tone(from.sampleRate, 200);
    const bytes = fromPcm16(source, from);
    const converter = new FormatConverter(from, to);
    // Odd chunk sizes: a 16-bit sample may be split across chunks.
    const parts: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 333) parts.push(converter.convert(bytes.subarray(i, i + 333)));
    parts.push(converter.flush());
    const out = Buffer.concat(parts);
    expect(out.length).toBe(bytesForMs(to, 200));
    const pcm = to.encoding === 'mulaw' ? decodeMulaw(out) : pcmFromBytes(out);
    // A 440 Hz tone survives every conversion at about its level (mu-law adds a little noise).
    const level = rms(pcm, 40, pcm.length - 40);
    expect(level).toBeGreaterThan(0.9 * rms(source));
    expect(level).toBeLessThan(1.1 * rms(source));
  });

  it('passes identical formats through untouched', () => {
    const bytes = fromPcm16(tone(8000, 20), MULAW_8K);
    expect(new FormatConverter(MULAW_8K, MULAW_8K).convert(bytes)).toBe(bytes);
  });
});
