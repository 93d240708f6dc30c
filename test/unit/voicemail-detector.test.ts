/**
 * @jest-environment ./test/support/shared-typed-arrays-environment.js
 *
 * The gateway's answering-machine detector on real audio: eSpeak NG speech (a machine's greeting,
 * a person's "Hello?"), generated beeps and noise, through the real Silero VAD as in a call.
 */
import path from 'node:path';
import { readWavFile } from '../../src/audio/wav';
import { sharedSileroModel, type SileroVadModel } from '../../src/gateway/vad/silero';
import { VadAnalyzer } from '../../src/gateway/vad/vad-analyzer';
import { BeepDetector, dominantTone, type BeepEvent } from '../../src/voicemail/beep-detector';
import { MachineDetector, type MachineVerdict } from '../../src/voicemail/machine-detector';

const FIXTURES = path.join(__dirname, '../fixtures/audio');
const RATE = 8000;

let model: SileroVadModel;
beforeAll(async () => {
  model = await sharedSileroModel();
});

const load = (name: string) => readWavFile(path.join(FIXTURES, name)).samples;
const silence = (ms: number) => new Int16Array((ms * RATE) / 1000);

function tone(ms: number, hz: number, amplitude = 8000): Int16Array {
  const out = new Int16Array(Math.round((ms * RATE) / 1000));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / RATE));
  return out;
}

/** Deterministic white noise (a linear congruential generator), RMS ≈ amplitude / √3. */
function noise(ms: number, amplitude: number, seed = 1): Int16Array {
  const out = new Int16Array(Math.round((ms * RATE) / 1000));
  let s = seed;
  for (let i = 0; i < out.length; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    out[i] = Math.round(((s / 0x7fffffff) * 2 - 1) * amplitude);
  }
  return out;
}

function mix(a: Int16Array, b: Int16Array): Int16Array {
  const out = new Int16Array(Math.max(a.length, b.length));
  for (let i = 0; i < out.length; i++) out[i] = Math.max(-32768, Math.min(32767, (a[i] ?? 0) + (b[i] ?? 0)));
  return out;
}

const concat = (...parts: Int16Array[]) => {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

function beepsIn(pcm: Int16Array): BeepEvent[] {
  const found: BeepEvent[] = [];
  const d = new BeepDetector(RATE, { beepEnded: (e) => found.push(e) });
  for (let i = 0; i < pcm.length; i += 160) d.push(pcm.subarray(i, i + 160));
  d.push(silence(40));
  return found;
}

/** Feeds audio as a call's gateway does: 20 ms frames to the VAD and to the detector. */
async function judge(pcm: Int16Array): Promise<{ verdicts: MachineVerdict[]; beeps: BeepEvent[] }> {
  const verdicts: MachineVerdict[] = [];
  const beeps: BeepEvent[] = [];
  const detector = new MachineDetector(RATE, { verdict: (v) => verdicts.push(v), beep: (e, ended) => ended && beeps.push(e) });
  const vad = new VadAnalyzer(model.createStream(), {});
  for (let i = 0; i < pcm.length; i += 160) {
    const frame = pcm.subarray(i, i + 160);
    for (const e of await vad.analyze(frame)) detector.onVad(e);
    detector.push(frame);
  }
  return { verdicts, beeps };
}

describe('beep detector', () => {
  it.each([400, 440, 1000, 1400, 1975])('finds a %i Hz beep of 250 ms, its frequency and when it ended', (hz) => {
    const [beep, ...more] = beepsIn(concat(silence(500), tone(250, hz), silence(300)));
    expect(more).toEqual([]);
    expect(Math.abs(beep!.frequencyHz - hz)).toBeLessThanOrEqual(10);
    expect(Math.abs(beep!.startMs - 500)).toBeLessThanOrEqual(20);
    expect(Math.abs(beep!.atMs - 750)).toBeLessThanOrEqual(40);
    expect(beep!.concentration).toBeGreaterThan(0.9);
  });

  it('finds a beep in noise 15 dB below it, and in μ-law-like quantisation', () => {
    const pcm = mix(concat(silence(300), tone(400, 1000, 6000), silence(300)), noise(1000, 1300, 7));
    const [beep] = beepsIn(pcm);
    expect(beep).toBeDefined();
    expect(Math.abs(beep!.frequencyHz - 1000)).toBeLessThanOrEqual(10);
  });

  it('ignores tones that are too short, out of band or too quiet, and two-tone keypad sounds', () => {
    expect(beepsIn(concat(silence(200), tone(120, 1000), silence(300)))).toEqual([]);
    expect(beepsIn(concat(silence(200), tone(400, 300), silence(300)))).toEqual([]);
    expect(beepsIn(concat(silence(200), tone(400, 2600), silence(300)))).toEqual([]);
    expect(beepsIn(concat(silence(200), tone(400, 1000, 150), silence(300)))).toEqual([]);
    const dtmf5 = mix(tone(400, 770, 5000), tone(400, 1336, 5000)); // Q.23 "5"
    expect(beepsIn(concat(silence(200), dtmf5, silence(300)))).toEqual([]);
  });

  it('never fires on speech or noise', () => {
    expect(beepsIn(load('machine-greeting.wav'))).toEqual([]);
    expect(beepsIn(load('hello-appointment.wav'))).toEqual([]);
    expect(beepsIn(load('stop-wait.wav'))).toEqual([]);
    expect(beepsIn(noise(3000, 8000, 3))).toEqual([]);
  });

  it('measures a pure tone between scan steps within ~6 Hz', () => {
    const block = Float64Array.from(tone(20, 1037));
    const t = dominantTone(block, RATE, 400, 2000);
    expect(Math.abs(t.hz - 1037)).toBeLessThanOrEqual(7);
    expect(t.concentration).toBeGreaterThan(0.9);
  });
});

describe('machine detector (Silero VAD + beep)', () => {
  it('a recorded greeting is a machine once its speech passes 4 s; its beep is heard after', async () => {
    const pcm = concat(load('machine-greeting.wav'), silence(400), tone(500, 1000), silence(800));
    const { verdicts, beeps } = await judge(pcm);
    expect(verdicts[0]).toMatchObject({ answered_by: 'machine', reason: 'long_greeting' });
    // Decided about 4 s after the speech began at 0.4 s — long before the greeting ends (7.4 s).
    expect(verdicts[0]!.at_ms).toBeGreaterThanOrEqual(4300);
    expect(verdicts[0]!.at_ms).toBeLessThanOrEqual(5000);
    expect(verdicts).toHaveLength(1);
    expect(beeps).toHaveLength(1);
    expect(Math.abs(beeps[0]!.startMs - 7800)).toBeLessThanOrEqual(40);
  });

  it('a person saying "Hello?" is a human, decided about a second after their word (0.3–0.8 s)', async () => {
    const pcm = concat(load('hello-question.wav'), silence(2000));
    const { verdicts } = await judge(pcm);
    expect(verdicts).toEqual([expect.objectContaining({ answered_by: 'human', reason: 'short_greeting' })]);
    expect(verdicts[0]!.at_ms).toBeLessThanOrEqual(2000);
  });

  it('a person asking a 3.4 s question is still a human', async () => {
    const { verdicts } = await judge(concat(load('hello-appointment.wav'), silence(1000)));
    expect(verdicts.map((v) => v.answered_by)).toEqual(['human']);
  });

  it('a short greeting followed by a beep is a machine (the beep overrides)', async () => {
    const pcm = concat(load('stop-wait.wav'), silence(600), tone(300, 850), silence(500));
    const { verdicts } = await judge(pcm);
    expect(verdicts.map((v) => `${v.answered_by}:${v.reason}`)).toEqual(['human:short_greeting', 'machine:beep']);
    expect(verdicts[1]!.beep_hz).toBeGreaterThan(840);
  });

  it('noise alone gives no verdict', async () => {
    const { verdicts } = await judge(noise(4000, 300, 9));
    expect(verdicts).toEqual([]);
  });
});
