import { decodeMulaw, encodeMulaw, linearToMulaw, mulawSilence, mulawToLinear, MULAW_SILENCE } from '../../src/audio/g711';

// Vectors from CPython's test_audioop (lin2ulaw / ulaw2lin with 16-bit samples), which follows the
// Sun reference implementation that telephony vendors use.
const AUDIOOP_LINEAR = [0, 0x1234, 0x4567, -0x4567, 0x7fff, -0x8000, -1];
const AUDIOOP_LIN2ULAW = [0xff, 0xad, 0x8e, 0x0e, 0x80, 0x00, 0x7e];
const AUDIOOP_ULAW = [
  0x00, 0x0e, 0x28, 0x3f, 0x57, 0x6a, 0x76, 0x7c, 0x7e, 0x7f, 0x80, 0x8e, 0xa8, 0xbf, 0xd7, 0xea, 0xf6, 0xfc, 0xfe, 0xff,
];
const AUDIOOP_ULAW2LIN_14BIT = [
  -8031, -4447, -1471, -495, -163, -53, -18, -6, -2, 0, 8031, 4447, 1471, 495, 163, 53, 18, 6, 2, 0,
];

describe('G.711 mu-law', () => {
  it('encodes 16-bit samples exactly like audioop.lin2ulaw', () => {
    const encoded = encodeMulaw(Int16Array.from(AUDIOOP_LINEAR));
    expect([...encoded]).toEqual(AUDIOOP_LIN2ULAW);
    expect(AUDIOOP_LINEAR.map(linearToMulaw)).toEqual(AUDIOOP_LIN2ULAW);
  });

  it('decodes mu-law exactly like audioop.ulaw2lin', () => {
    const decoded = decodeMulaw(Buffer.from(AUDIOOP_ULAW));
    expect([...decoded]).toEqual(AUDIOOP_ULAW2LIN_14BIT.map((x) => x * 4));
    expect(mulawToLinear(0x00)).toBe(-32124);
    expect(mulawToLinear(0x80)).toBe(32124);
  });

  it('round-trips every code except the second zero (0x7F decodes to 0, which encodes as 0xFF)', () => {
    const codes = Buffer.from([...Array(256).keys()]);
    const again = encodeMulaw(decodeMulaw(codes));
    for (let c = 0; c < 256; c++) expect(again[c]).toBe(c === 0x7f ? 0xff : c);
  });

  it('uses 0xFF for silence', () => {
    expect(MULAW_SILENCE).toBe(0xff);
    expect([...encodeMulaw(new Int16Array(4))]).toEqual([0xff, 0xff, 0xff, 0xff]);
    expect([...decodeMulaw(mulawSilence(160))].every((s) => s === 0)).toBe(true);
  });

  it('keeps the quantisation error within the mu-law step for every 16-bit value', () => {
    const all = new Int16Array(65536);
    for (let i = 0; i < 65536; i++) all[i] = i - 32768;
    const back = decodeMulaw(encodeMulaw(all));
    const violations: number[] = [];
    for (let i = 0; i < 65536; i++) {
      const err = Math.abs(back[i] - all[i]);
      // Logarithmic steps: about 5% of the magnitude at worst, a few units near zero; the
      // extremes are clipped at ±32124.
      if (err > Math.max(12, 0.051 * Math.abs(all[i]))) violations.push(all[i]);
    }
    expect(violations).toEqual([]);
  });

  it('gives telephone quality on a speech-level tone (SNR > 35 dB)', () => {
    const tone = new Int16Array(8000);
    for (let i = 0; i < tone.length; i++) tone[i] = Math.round(10000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
    const back = decodeMulaw(encodeMulaw(tone));
    let signal = 0;
    let noise = 0;
    for (let i = 0; i < tone.length; i++) {
      signal += tone[i] ** 2;
      noise += (back[i] - tone[i]) ** 2;
    }
    expect(10 * Math.log10(signal / noise)).toBeGreaterThan(35);
  });

  it('writes into caller-provided buffers without allocating', () => {
    const pcmOut = new Int16Array(200);
    const frame = Buffer.alloc(160, 0x80);
    const pcm = decodeMulaw(frame, pcmOut);
    expect(pcm.buffer).toBe(pcmOut.buffer);
    expect(pcm.length).toBe(160);
    const mulawOut = Buffer.alloc(200);
    const encoded = encodeMulaw(pcm, mulawOut);
    expect(encoded.buffer).toBe(mulawOut.buffer);
    expect([...encoded]).toEqual([...frame]);
    expect(() => decodeMulaw(frame, new Int16Array(10))).toThrow(RangeError);
  });
});
