/**
 * What Chromium's fake microphone says in the web call tests: a WAV file made from the eSpeak NG
 * clips of test/fixtures/audio (README there), placed on a timeline — silence while the greeting
 * plays, the caller's question, silence while the answer starts, then a barge-in — and played
 * once (`%noloop`) from the moment the page opens the microphone. Written at 48 kHz, the rate a
 * browser's audio runs at, with the platform's own resampler.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resample } from '../../../src/audio/resampler';
import { encodeWav, readWavFile } from '../../../src/audio/wav';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'audio');
const RATE = 48_000;

export type Segment = { silenceSecs: number } | { clip: 'hello-appointment.wav' | 'stop-wait.wav' };

/** Writes the timeline as a WAV file; returns the Chromium switches that make it the microphone. */
export function fakeMicrophone(name: string, timeline: Segment[]): { file: string; args: string[] } {
  const parts = timeline.map((s) => {
    if ('silenceSecs' in s) return new Int16Array(Math.round(s.silenceSecs * RATE));
    const wav = readWavFile(path.join(FIXTURES, s.clip));
    return resample(wav.samples, wav.sampleRate, RATE);
  });
  const samples = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    samples.set(p, at);
    at += p.length;
  }
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vap-mic-')), `${name}.wav`);
  fs.writeFileSync(file, encodeWav(samples, RATE));
  return {
    file,
    args: ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${file}%noloop`],
  };
}
