/**
 * The built-in hold audio of a warm transfer (`hold_audio: "tone"`): a soft two-note chime over a
 * quiet hum, 8 kHz 16-bit PCM, never silent (a caller hearing nothing thinks the line dropped).
 * Four seconds long; the vendor plays it on a loop. Generated, so no audio file ships.
 */
import { encodeWav } from './wav';

const RATE = 8000;
const SECONDS = 4;
// About -20 dBFS for the notes, -32 dBFS for the hum: audible, never loud.
const NOTE_PEAK = 3300;
const HUM_PEAK = 800;
const NOTES_HZ = [523.25, 659.25]; // C5, E5

export function holdToneSamples(): Int16Array {
  const out = new Int16Array(RATE * SECONDS);
  for (let i = 0; i < out.length; i++) {
    const t = i / RATE;
    const inNote = t % 2; // one note every two seconds
    const note = NOTES_HZ[Math.floor(t / 2) % NOTES_HZ.length]!;
    // Each note fades in over 50 ms and out over 1.5 s.
    const envelope = inNote < 0.05 ? inNote / 0.05 : Math.max(0, 1 - (inNote - 0.05) / 1.5);
    const hum = Math.sin(2 * Math.PI * 220 * t) * HUM_PEAK;
    out[i] = Math.round(Math.sin(2 * Math.PI * note * t) * NOTE_PEAK * envelope + hum);
  }
  return out;
}

let cached: Buffer | null = null;

/** The tone as a WAV file (built once). */
export function holdToneWav(): Buffer {
  cached ??= encodeWav(holdToneSamples(), RATE);
  return cached;
}
