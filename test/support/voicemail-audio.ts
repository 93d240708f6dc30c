/**
 * What an answering machine plays, for the voicemail suites: its recorded greeting (eSpeak NG,
 * test/fixtures/audio/machine-greeting.wav: 0.4 s + 7.0 s of speech), a pause and a generated beep
 * (a 1 kHz sine, 500 ms — the tone real machines use), then it records. A person says "Hello?".
 */
import path from 'node:path';
import { loadSpeechWav, tonePcm } from '../fakes/phone-wire';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'audio');
export const MACHINE_GREETING_WAV = path.join(FIXTURES, 'machine-greeting.wav');
export const HELLO_QUESTION_WAV = path.join(FIXTURES, 'hello-question.wav');
export const BEEP_HZ = 1000;
export const BEEP_MS = 500;
export const PAUSE_BEFORE_BEEP_MS = 400;

/** The pause after the greeting and the beep, at `sampleRate`. */
export function pauseAndBeep(sampleRate = 8000): Int16Array {
  const pause = new Int16Array((PAUSE_BEFORE_BEEP_MS * sampleRate) / 1000);
  const beep = tonePcm(BEEP_MS, BEEP_HZ, 9000, sampleRate);
  const out = new Int16Array(pause.length + beep.length);
  out.set(pause);
  out.set(beep, pause.length);
  return out;
}

export function machineGreeting(sampleRate = 8000): Int16Array {
  return loadSpeechWav(MACHINE_GREETING_WAV, sampleRate);
}
