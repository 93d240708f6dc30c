/** Caller audio as the gateway hands it to STT adapters: 16-bit PCM (little-endian) at the stream's rate, 20 ms frames. */
import { pcmToBytes } from '../../src/audio/pcm';

export function pcmToneFrames(ms: number, sampleRate = 8000, hz = 300, amplitude = 6000): Buffer[] {
  const samples = Math.round((ms * sampleRate) / 1000);
  const pcm = new Int16Array(samples);
  for (let i = 0; i < samples; i++) pcm[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / sampleRate));
  return frames(pcmToBytes(pcm), sampleRate);
}

export function pcmSilenceFrames(ms: number, sampleRate = 8000): Buffer[] {
  return frames(Buffer.alloc(Math.round((ms * sampleRate) / 1000) * 2), sampleRate);
}

function frames(audio: Buffer, sampleRate: number): Buffer[] {
  const size = (sampleRate / 50) * 2;
  const out: Buffer[] = [];
  for (let i = 0; i < audio.length; i += size) out.push(audio.subarray(i, i + size));
  return out;
}
