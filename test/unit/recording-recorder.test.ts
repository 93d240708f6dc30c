import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FLUSH_INTERVAL_MS, LATE_WRITE_SLACK_MS, WavRecorder } from '../../src/gateway/recording/wav-recorder';
import { channelOf, parseWav, readWavFile } from '../../src/audio/wav';

const RATE = 8000;
const FRAME = 160; // 20 ms

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recording-test-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A recognisable signal: sample i of the whole stream has value base + (i mod 1000). */
function ramp(base: number, fromSample: number, count: number): Int16Array {
  const out = new Int16Array(count);
  for (let i = 0; i < count; i++) out[i] = base + ((fromSample + i) % 1000);
  return out;
}

describe('WavRecorder', () => {
  it('records a 16 kHz stream at 16 kHz: both channels on one timeline, the call\'s length', async () => {
    const file = path.join(dir, 'wideband.wav');
    const rate = 16000;
    const frame = 320; // 20 ms
    const rec = await WavRecorder.open({ path: file, sampleRate: rate });
    for (let t = 0; t < 2000; t += 20) {
      const at = (t * rate) / 1000;
      rec.writeCaller(ramp(1000, at, frame), t);
      if (t >= 500 && t < 1500) rec.writeAgent(ramp(-5000, at, frame), t);
    }
    const result = await rec.close(2500);
    expect(result).toEqual({ path: file, durationMs: 2500, bytes: 44 + 2500 * 16 * 4 });
    const wav = readWavFile(file);
    expect(wav).toMatchObject({ sampleRate: 16000, channels: 2, encoding: 'pcm16', frames: 40000 });
    expect([...channelOf(wav, 0).subarray(0, 32000)]).toEqual([...ramp(1000, 0, 32000)]);
    const agent = channelOf(wav, 1);
    expect(agent.subarray(0, 8000).every((s) => s === 0)).toBe(true);
    expect([...agent.subarray(8000, 24000)]).toEqual([...ramp(-5000, 8000, 16000)]);
    expect(agent.subarray(24000).every((s) => s === 0)).toBe(true);
  });

  it('places caller and agent audio on one timeline, left and right, with silence in the gaps', async () => {
    const file = path.join(dir, 'calls', 'nested', 'interleaved.wav');
    const rec = await WavRecorder.open({ path: file });
    // 3 s of caller audio in 20 ms frames; the agent speaks from 1.0 s to 2.0 s; both in arrival order.
    for (let t = 0; t < 3000; t += 20) {
      const at = (t * RATE) / 1000;
      rec.writeCaller(ramp(1000, at, FRAME), t);
      if (t >= 1000 && t < 2000) rec.writeAgent(ramp(-5000, at, FRAME), t);
    }
    const result = await rec.close(3500);
    expect(result).toEqual({ path: file, durationMs: 3500, bytes: 44 + 3500 * 8 * 4 });

    const wav = readWavFile(file);
    expect(wav).toMatchObject({ sampleRate: 8000, channels: 2, encoding: 'pcm16', frames: 28000 });
    const caller = channelOf(wav, 0);
    const agent = channelOf(wav, 1);
    expect([...caller.subarray(0, 24000)]).toEqual([...ramp(1000, 0, 24000)]);
    expect(caller.subarray(24000).every((s) => s === 0)).toBe(true);
    expect(agent.subarray(0, 8000).every((s) => s === 0)).toBe(true);
    expect([...agent.subarray(8000, 16000)]).toEqual([...ramp(-5000, 8000, 8000)]);
    expect(agent.subarray(16000).every((s) => s === 0)).toBe(true);
  });

  it('places a write that overlaps the previous one on its channel right after it', async () => {
    const file = path.join(dir, 'overlap.wav');
    const rec = await WavRecorder.open({ path: file });
    rec.writeAgent(new Int16Array(800).fill(7), 500); // 500..600 ms
    rec.writeAgent(new Int16Array(800).fill(9), 500); // same time again → 600..700 ms
    rec.writeAgent(new Int16Array(80).fill(11), 650); // inside the previous one → 700..710 ms
    rec.writeCaller(new Int16Array(80).fill(3), 500); // other channel unaffected
    await rec.close();
    const wav = readWavFile(file);
    const agent = channelOf(wav, 1);
    const caller = channelOf(wav, 0);
    expect(wav.frames).toBe(5680);
    expect(agent.subarray(0, 4000).every((s) => s === 0)).toBe(true);
    expect(agent.subarray(4000, 4800).every((s) => s === 7)).toBe(true);
    expect(agent.subarray(4800, 5600).every((s) => s === 9)).toBe(true);
    expect(agent.subarray(5600, 5680).every((s) => s === 11)).toBe(true);
    expect(caller.subarray(4000, 4080).every((s) => s === 3)).toBe(true);
  });

  it('lands a slightly late write at its own time, and one older than the file at the end of it', async () => {
    const file = path.join(dir, 'late.wav');
    const rec = await WavRecorder.open({ path: file });
    for (let t = 0; t < 4000; t += 20) rec.writeCaller(new Int16Array(FRAME).fill(1), t);
    await rec.flushed();
    const onDiskFrames = (fs.statSync(file).size - 44) / 4;
    expect(onDiskFrames).toBeGreaterThan(1000 * 8);
    // 3 s old: that part of the file is already written, so it goes right after what is there.
    rec.writeAgent(new Int16Array(FRAME).fill(4), 1000);
    // Arrives after the caller reached 4 s, but only 300 ms old (< LATE_WRITE_SLACK_MS): on time.
    expect(300).toBeLessThan(LATE_WRITE_SLACK_MS);
    rec.writeAgent(new Int16Array(FRAME).fill(2), 3700);
    await rec.close();
    const agent = channelOf(readWavFile(file), 1);
    expect(agent.subarray(1000 * 8, 1000 * 8 + FRAME).every((s) => s === 0)).toBe(true);
    expect(agent.subarray(onDiskFrames, onDiskFrames + FRAME).every((s) => s === 4)).toBe(true);
    expect(agent.subarray(3700 * 8, 3700 * 8 + FRAME).every((s) => s === 2)).toBe(true);
  });

  it('leaves a valid WAV with all but the last ~1.5 s when the process dies without close()', async () => {
    const file = path.join(dir, 'crash.wav');
    const rec = await WavRecorder.open({ path: file });
    // Nothing written yet: already a valid, empty WAV.
    expect(parseWav(fs.readFileSync(file))).toMatchObject({ channels: 2, frames: 0, declaredDataBytes: 0 });

    for (let t = 0; t < 6000; t += 20) {
      const at = (t * RATE) / 1000;
      rec.writeCaller(ramp(100, at, FRAME), t);
      rec.writeAgent(ramp(-2000, at, FRAME), t);
    }
    await rec.flushed(); // the OS has what was handed over; the process "crashes" here
    const bytes = fs.readFileSync(file);
    const wav = parseWav(bytes);
    expect(wav.declaredDataBytes).toBe(bytes.length - 44); // header matches the data on disk
    expect(wav.durationMs).toBeGreaterThanOrEqual(6000 - LATE_WRITE_SLACK_MS - FLUSH_INTERVAL_MS - 20);
    expect(wav.durationMs).toBeLessThan(6000);
    expect([...channelOf(wav, 0)]).toEqual([...ramp(100, 0, wav.frames)]);
    expect([...channelOf(wav, 1)]).toEqual([...ramp(-2000, 0, wav.frames)]);
    await rec.close();
  });

  it('keeps memory bounded over a long call', async () => {
    const rec = await WavRecorder.open({ path: path.join(dir, 'long.wav') });
    let maxBufferedMs = 0;
    const frame = new Int16Array(FRAME).fill(123);
    for (let t = 0; t < 10 * 60 * 1000; t += 20) {
      rec.writeCaller(frame, t);
      if (t % 5000 < 2000) rec.writeAgent(frame, t);
      maxBufferedMs = Math.max(maxBufferedMs, rec.bufferedMs);
    }
    expect(maxBufferedMs).toBeLessThanOrEqual(LATE_WRITE_SLACK_MS + FLUSH_INTERVAL_MS + 20);
    const result = await rec.close();
    expect(result.durationMs).toBe(10 * 60 * 1000);
    expect(fs.statSync(result.path).size).toBe(result.bytes);
  });

  it('reports a file it cannot create instead of throwing at the call', async () => {
    const blocker = path.join(dir, 'not-a-dir');
    fs.writeFileSync(blocker, 'x');
    await expect(WavRecorder.open({ path: path.join(blocker, 'call.wav') })).rejects.toThrow();

    const errors: Error[] = [];
    const rec = new WavRecorder({ path: path.join(blocker, 'call2.wav'), onError: (e) => errors.push(e) });
    rec.writeCaller(new Int16Array(FRAME), 0);
    await expect(rec.close()).rejects.toThrow();
    expect(errors).toHaveLength(1);
  });
});
