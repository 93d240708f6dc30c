/**
 * @jest-environment ./test/support/shared-typed-arrays-environment.js
 *
 * The call's RNNoise suppressor (src/gateway/noise/) on the sox/eSpeak fixtures, at each stream
 * rate: street noise is taken out, speech is kept where it was (same VAD turns, same level, no
 * shift on the stream's timeline), and each call's state is freed.
 */
import path from 'node:path';
import { resample } from '../../src/audio/resampler';
import { readWavFile } from '../../src/audio/wav';
import { NoiseSuppressor } from '../../src/gateway/noise/noise-suppressor';
import { liveDenoiseStates } from '../../src/gateway/noise/rnnoise-wasm';
import { sharedSileroModel, type SileroSampleRate } from '../../src/gateway/vad/silero';
import { VadAnalyzer, type VadEvent } from '../../src/gateway/vad/vad-analyzer';

const FIXTURES = path.join(__dirname, '../fixtures/audio');

function load(name: string, rate: number): Int16Array {
  const pcm = readWavFile(path.join(FIXTURES, name)).samples;
  return rate === 8000 ? pcm : resample(pcm, 8000, rate);
}

function dbfs(pcm: Int16Array): number {
  let sum = 0;
  for (const v of pcm) sum += v * v;
  return 10 * Math.log10(sum / pcm.length / 32768 ** 2);
}

/** The suppressor fed 20 ms frames as the gateway does, its output joined. */
function denoise(pcm: Int16Array, rate: number): Int16Array {
  const ns = new NoiseSuppressor(rate);
  const parts: Int16Array[] = [];
  for (let i = 0; i < pcm.length; i += rate / 50) parts.push(ns.process(pcm.subarray(i, i + rate / 50)).slice());
  ns.close();
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), (at += p.length));
  return out;
}

function mix(speech: Int16Array, noise: Int16Array): Int16Array {
  return speech.map((v, i) => Math.max(-32768, Math.min(32767, v + noise[i % noise.length]!)));
}

async function vadEvents(pcm: Int16Array, rate: SileroSampleRate): Promise<VadEvent[]> {
  const vad = new VadAnalyzer((await sharedSileroModel()).createStream(rate));
  const events: VadEvent[] = [];
  for (let i = 0; i < pcm.length; i += rate / 50) events.push(...(await vad.analyze(pcm.subarray(i, i + rate / 50))));
  return events;
}

describe.each([8000, 16000] as const)('RNNoise at a %i Hz stream', (rate) => {
  it('takes street noise out: more than 20 dB quieter', () => {
    const noise = load('noise-street.wav', rate);
    const out = denoise(noise, rate);
    // All of it comes back but what is still inside: RNNoise's frame and the two lookaheads
    // (14 ms at 8 kHz, 12 ms at 16 kHz), no partial frame waiting (frames line up with chunks).
    expect(noise.length - out.length).toBeLessThanOrEqual(rate * 0.014);
    expect(dbfs(noise)).toBeCloseTo(-32, 0);
    expect(dbfs(out.subarray(rate))).toBeLessThan(dbfs(noise) - 20); // after RNNoise's first second
  });

  it('keeps speech: its level within 1.5 dB, the same VAD turns at the same places, on the same timeline', async () => {
    const speech = load('hello-appointment.wav', rate);
    const out = denoise(speech, rate);
    expect(Math.abs(dbfs(out) - dbfs(speech.subarray(0, out.length)))).toBeLessThan(1.5);
    // Aligned: the correlation peaks at lag 0 (the 10 ms RNNoise delay is taken out).
    const lagOf = (maxLag: number) => {
      let best = 0;
      let bestLag = 0;
      for (let lag = -maxLag; lag <= maxLag; lag++) {
        let c = 0;
        for (let i = maxLag; i < out.length - maxLag; i++) c += out[i]! * speech[i + lag]!;
        if (c > best) (best = c), (bestLag = lag);
      }
      return bestLag;
    };
    expect(Math.abs(lagOf(rate / 50))).toBeLessThanOrEqual(1);
    const raw = await vadEvents(speech, rate);
    const heard = await vadEvents(out, rate);
    expect(heard.map((e) => e.type)).toEqual(raw.map((e) => e.type));
    heard.forEach((e, i) => expect(Math.abs(e.at_ms - raw[i]!.at_ms)).toBeLessThanOrEqual(64));
  });

  it('keeps speech in street noise: the turn is found, the noise under it gone', async () => {
    const speech = load('hello-appointment.wav', rate);
    const noisy = mix(speech, load('noise-street.wav', rate));
    const out = denoise(noisy, rate);
    const events = await vadEvents(out, rate);
    expect(events.map((e) => e.type)).toEqual(['speech_started', 'speech_stopped']);
    // The lead-in (0.5 s, noise alone in `noisy`) is near silence after suppression.
    expect(dbfs(out.subarray(rate / 10, rate / 2))).toBeLessThan(-50);
  });
});

it('frees each call state when the call closes, and a closed suppressor passes nothing on', () => {
  const before = liveDenoiseStates();
  const calls = Array.from({ length: 5 }, () => new NoiseSuppressor(8000));
  expect(liveDenoiseStates()).toBe(before + 5);
  for (const c of calls) c.close();
  calls[0]!.close();
  expect(liveDenoiseStates()).toBe(before);
  expect(calls[0]!.process(new Int16Array(160)).length).toBe(0);
});
