/**
 * Keypresses as audio and as input: the Q.23 tone generator in every stream format, the Goertzel
 * decoder that fake callers use to hear what send_dtmf pressed, and the gatherer that turns a
 * caller's keys into one input.
 */
import { fromPcm16, MULAW_8K, PCM16_16K, PCM16_8K, toPcm16 } from '../../src/audio/format';
import { detectDtmf, dtmfAudio, dtmfFrequencies, dtmfPcm, DTMF_GAP_MS, DTMF_TONE_MS } from '../../src/audio/dtmf';
import { DtmfGatherer, dtmfInputText } from '../../src/gateway/turns/dtmf-gatherer';

const digitsOf = (pcm: Int16Array, rate: number) => detectDtmf(pcm, rate).map((d) => d.digit).join('');

describe('DTMF tones', () => {
  it('uses the ITU-T Q.23 frequency pairs', () => {
    expect(dtmfFrequencies('1')).toEqual([697, 1209]);
    expect(dtmfFrequencies('5')).toEqual([770, 1336]);
    expect(dtmfFrequencies('9')).toEqual([852, 1477]);
    expect(dtmfFrequencies('0')).toEqual([941, 1336]);
    expect(dtmfFrequencies('*')).toEqual([941, 1209]);
    expect(dtmfFrequencies('#')).toEqual([941, 1477]);
    expect(dtmfFrequencies('D')).toEqual([941, 1633]);
    expect(() => dtmfFrequencies('x')).toThrow(/not a DTMF digit/);
  });

  it('decodes every key it generates, in μ-law 8 kHz and PCM 8 and 16 kHz', () => {
    const keys = '0123456789*#ABCD';
    for (const format of [MULAW_8K, PCM16_8K, PCM16_16K]) {
      const audio = dtmfAudio(keys, format);
      // Each key is a tone and a gap, in the format's own bytes.
      const bytesPerMs = (format.sampleRate / 1000) * (format.encoding === 'mulaw' ? 1 : 2);
      expect(audio.length).toBe(keys.length * (DTMF_TONE_MS + DTMF_GAP_MS) * bytesPerMs);
      expect(digitsOf(toPcm16(audio, format), format.sampleRate)).toBe(keys);
    }
  });

  it('reports a long key once, a repeated key twice, and places them in time', () => {
    const pcm = dtmfPcm('55', 8000, { toneMs: 300 });
    const found = detectDtmf(pcm, 8000);
    expect(found.map((d) => d.digit)).toEqual(['5', '5']);
    expect(found[1]!.atMs).toBeGreaterThan(300 + DTMF_GAP_MS - 30);
    expect(found[1]!.atMs).toBeLessThan(300 + DTMF_GAP_MS + 30);
  });

  it('pauses half a second for w', () => {
    expect(dtmfPcm('1w2', 8000).length).toBe(8000 * (2 * (DTMF_TONE_MS + DTMF_GAP_MS) + 500) / 1000);
  });

  it('hears no key in speech-like sound, a single tone, silence or noise', () => {
    const rate = 8000;
    const vowel = new Int16Array(rate);
    for (let i = 0; i < vowel.length; i++) {
      const t = i / rate;
      // A voice: a 140 Hz fundamental with its harmonics, several in the DTMF bands.
      let v = 0;
      for (let h = 1; h <= 20; h++) v += Math.sin(2 * Math.PI * 140 * h * t) / h;
      vowel[i] = Math.round(v * 6000);
    }
    const single = new Int16Array(rate).map((_, i) => Math.round(Math.sin((2 * Math.PI * 697 * i) / rate) * 12000));
    let seed = 7;
    const noise = new Int16Array(rate).map(() => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 20000) - 10000);
    expect(digitsOf(vowel, rate)).toBe('');
    expect(digitsOf(single, rate)).toBe('');
    expect(digitsOf(new Int16Array(rate), rate)).toBe('');
    expect(digitsOf(noise, rate)).toBe('');
  });

  it('still hears a key through μ-law with noise on the line', () => {
    const pcm = dtmfPcm('7', 8000);
    let seed = 3;
    const noisy = pcm.map((s) => s + (((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 1000) - 500));
    expect(digitsOf(toPcm16(fromPcm16(noisy, MULAW_8K), MULAW_8K), 8000)).toBe('7');
  });
});

describe('the keypress gatherer', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function gatherer(timeoutSecs = 2, maxDigits = 32) {
    const inputs: string[] = [];
    return { g: new DtmfGatherer({ timeoutSecs, maxDigits }, (d) => inputs.push(d)), inputs };
  }

  it('ends an input at a pause of dtmf_timeout_secs after the last key', () => {
    const { g, inputs } = gatherer(2);
    for (const d of '1234') {
      g.push(d);
      jest.advanceTimersByTime(1500); // under the timeout: still gathering
    }
    expect(inputs).toEqual([]);
    expect(g.pending).toBe(true);
    jest.advanceTimersByTime(500);
    expect(inputs).toEqual(['1234']);
    expect(g.pending).toBe(false);
  });

  it('ends an input at # (not part of it) and at dtmf_max_digits', () => {
    const { g, inputs } = gatherer(2, 3);
    for (const d of '12#') g.push(d);
    for (const d of '4567') g.push(d);
    expect(inputs).toEqual(['12', '456']);
    jest.advanceTimersByTime(2000);
    expect(inputs).toEqual(['12', '456', '7']);
  });

  it('takes # alone as an input, and nothing after close', () => {
    const { g, inputs } = gatherer();
    g.push('#');
    g.push('9');
    g.close();
    jest.advanceTimersByTime(5000);
    expect(inputs).toEqual(['#']);
  });

  it('gives the LLM the keys spaced out', () => {
    expect(dtmfInputText('1234')).toBe('The caller pressed: 1 2 3 4');
    expect(dtmfInputText('#')).toBe('The caller pressed: #');
  });
});
