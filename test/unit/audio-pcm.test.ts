import {
  FrameSplitter,
  float32ToInt16,
  int16ToFloat32,
  MULAW_FRAME_BYTES,
  pcmFromBytes,
  pcmToBytes,
  Resampler,
  resample,
  rms,
  rmsDbfs,
} from '../../src/audio/pcm';

function tone(hz: number, rate: number, samples: number, amplitude = 10000, phase = 0): Int16Array {
  const out = new Int16Array(samples);
  for (let i = 0; i < samples; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate + phase));
  return out;
}

function snrDb(actual: Int16Array, expected: Int16Array, from: number, to: number): number {
  let signal = 0;
  let noise = 0;
  for (let i = from; i < to; i++) {
    signal += expected[i] ** 2;
    noise += (actual[i] - expected[i]) ** 2;
  }
  return 10 * Math.log10(signal / Math.max(noise, 1e-9));
}

describe('PCM helpers', () => {
  it('views little-endian bytes as samples, copying only when misaligned', () => {
    const bytes = Buffer.from([0x01, 0x00, 0xff, 0xff, 0x00, 0x80, 0x07]);
    const pcm = pcmFromBytes(bytes.subarray(0, 6));
    expect([...pcm]).toEqual([1, -1, -32768]);
    const misaligned = Buffer.concat([Buffer.from([0]), bytes]).subarray(1);
    expect([...pcmFromBytes(misaligned)]).toEqual([1, -1, -32768]);
    expect([...pcmToBytes(Int16Array.from([1, -1]))]).toEqual([0x01, 0x00, 0xff, 0xff]);
  });

  it('converts int16 to float in [-1, 1) and back without loss', () => {
    const pcm = Int16Array.from([-32768, -1, 0, 1, 16384, 32767]);
    const f = int16ToFloat32(pcm);
    expect(f[0]).toBe(-1);
    expect(f[4]).toBe(0.5);
    expect([...float32ToInt16(f)]).toEqual([...pcm]);
    expect([...float32ToInt16(Float32Array.from([1.5, -2]))]).toEqual([32767, -32768]);
  });

  it('measures RMS in sample units and dBFS', () => {
    expect(rms(tone(440, 8000, 8000, 10000))).toBeCloseTo(10000 / Math.SQRT2, -1);
    expect(rms(new Int16Array(0))).toBe(0);
    expect(rmsDbfs(new Int16Array(10))).toBe(-Infinity);
    expect(rmsDbfs(new Int16Array(10).fill(16384))).toBeCloseTo(-6.02, 1);
  });
});

describe('FrameSplitter', () => {
  it('turns arbitrary chunk sizes into exact 160-byte frames in order', () => {
    const stream = Buffer.alloc(1000);
    for (let i = 0; i < stream.length; i++) stream[i] = i % 251;
    const splitter = new FrameSplitter(MULAW_FRAME_BYTES, 0xff);
    const frames: Buffer[] = [];
    let pos = 0;
    for (const size of [1, 50, 159, 161, 400, 7, 222]) {
      frames.push(...splitter.push(stream.subarray(pos, pos + size)));
      pos += size;
    }
    expect(frames).toHaveLength(6);
    expect(frames.every((f) => f.length === 160)).toBe(true);
    expect(Buffer.concat(frames).equals(stream.subarray(0, 960))).toBe(true);
    expect(splitter.pendingBytes).toBe(40);

    const last = splitter.flush();
    expect(last).not.toBeNull();
    expect(last!.subarray(0, 40).equals(stream.subarray(960))).toBe(true);
    expect(last!.subarray(40).every((b) => b === 0xff)).toBe(true);
    expect(splitter.flush()).toBeNull();
  });

  it('drops the held-back remainder on reset (barge-in)', () => {
    const splitter = new FrameSplitter(320, 0);
    expect(splitter.push(Buffer.alloc(500, 1))).toHaveLength(1);
    splitter.reset();
    const frames = splitter.push(Buffer.alloc(320, 2));
    expect(frames).toHaveLength(1);
    expect(frames[0].every((b) => b === 2)).toBe(true);
    expect(splitter.flush()).toBeNull();
  });
});

describe('Resampler', () => {
  it('upsamples 8 kHz to 16 kHz with the output aligned to the input and high fidelity', () => {
    const input = tone(1000, 8000, 1600);
    const out = resample(input, 8000, 16000);
    expect(out.length).toBe(3200);
    const ideal = tone(1000, 16000, 3200);
    // Away from the zero-padded edges the result is the ideal tone (±a few units).
    expect(snrDb(out, ideal, 100, 3100)).toBeGreaterThan(45);
  });

  it('downsamples 16 kHz to 8 kHz, keeping the voice band and rejecting what would alias', () => {
    const voice = resample(tone(1000, 16000, 3200), 16000, 8000);
    expect(voice.length).toBe(1600);
    expect(snrDb(voice, tone(1000, 8000, 1600), 50, 1550)).toBeGreaterThan(45);

    // 6 kHz cannot exist at 8 kHz; naive decimation would turn it into a loud 2 kHz tone.
    const high = resample(tone(6000, 16000, 3200, 10000), 16000, 8000);
    expect(rms(high, 50, 1550)).toBeLessThan(10000 / Math.SQRT2 / 1000); // > 60 dB down
  });

  it('converts 24 kHz TTS audio to 8 kHz', () => {
    const out = resample(tone(500, 24000, 4800), 24000, 8000);
    expect(out.length).toBe(1600);
    expect(snrDb(out, tone(500, 8000, 1600), 50, 1550)).toBeGreaterThan(45);
  });

  it('gives the same samples whether fed in 20 ms chunks or all at once', () => {
    const input = tone(700, 8000, 1234, 8000);
    const whole = resample(input, 8000, 16000);
    const r = new Resampler(8000, 16000);
    const parts: Int16Array[] = [];
    for (let i = 0; i < input.length; i += 160) parts.push(r.process(input.subarray(i, i + 160)));
    parts.push(r.flush());
    const streamed = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of parts) {
      streamed.set(p, o);
      o += p.length;
    }
    expect([...streamed]).toEqual([...whole]);
  });

  it('keeps an impulse at the same time position', () => {
    const input = new Int16Array(400);
    input[200] = 20000;
    const out = resample(input, 8000, 16000);
    let peak = 0;
    for (let i = 1; i < out.length; i++) if (Math.abs(out[i]) > Math.abs(out[peak])) peak = i;
    expect(peak).toBe(400);
  });

  it('passes audio through unchanged at equal rates', () => {
    const pcm = tone(300, 8000, 100);
    expect([...resample(pcm, 8000, 8000)]).toEqual([...pcm]);
    expect(() => new Resampler(0, 8000)).toThrow(RangeError);
  });
});
