/**
 * Measures the per-call cost of the media path's audio building blocks on this machine:
 * Silero VAD inference per 32 ms window (alone and with 50 calls interleaved), the full
 * analyzer per window, G.711 per 20 ms frame, the recorder per frame, and memory per call.
 * Run: npx tsx scripts/bench-audio.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeMulaw, encodeMulaw } from '../src/audio/g711';
import { readWavFile } from '../src/audio/wav';
import { WavRecorder } from '../src/gateway/recording/wav-recorder';
import { sharedSileroModel } from '../src/gateway/vad/silero';
import { VadAnalyzer } from '../src/gateway/vad/vad-analyzer';

const CALLS = 50;
const us = (ns: bigint, n: number) => (Number(ns) / n / 1000).toFixed(1);

/**
 * Wall time and CPU time of `fn` per unit. CPU time is what counts for capacity and is less
 * disturbed by other processes; onnxruntime-node runs each inference synchronously on the main
 * thread (inside setImmediate), so CPU time here is also event-loop time.
 */
async function measure(label: string, units: number, fn: () => Promise<void>): Promise<number> {
  const cpu = process.cpuUsage();
  const t = process.hrtime.bigint();
  await fn();
  const wallUs = Number(process.hrtime.bigint() - t) / units / 1000;
  const used = process.cpuUsage(cpu);
  const cpuUs = (used.user + used.system) / units;
  console.log(`${label}: ${cpuUs.toFixed(1)} µs CPU (${wallUs.toFixed(1)} µs wall)`);
  return cpuUs;
}

async function main(): Promise<void> {
  const speech = readWavFile(path.join(__dirname, '../test/fixtures/audio/hello-appointment.wav')).samples;
  const window = (i: number) => {
    const w = new Float32Array(256);
    const off = (i * 256) % (speech.length - 256);
    for (let j = 0; j < 256; j++) w[j] = speech[off + j] / 32768;
    return w;
  };
  const model = await sharedSileroModel();

  // 1. Inference alone, one stream.
  const stream = model.createStream();
  for (let i = 0; i < 300; i++) await stream.probability(window(i));
  const N = 3000;
  await measure('silero, one stream, per 32 ms window', N, async () => {
    for (let i = 0; i < N; i++) await stream.probability(window(i));
  });

  // 2. 50 calls interleaved through the one session.
  const streams = Array.from({ length: CALLS }, () => model.createStream());
  const per = 200;
  const concurrentUs = await measure(`silero, ${CALLS} streams interleaved, per window`, CALLS * per, async () => {
    await Promise.all(streams.map(async (s, c) => {
      for (let i = 0; i < per; i++) await s.probability(window(i + c));
    }));
  });
  const windowsPerSec = CALLS * (8000 / 256);
  console.log(`  → ${CALLS} calls = ${windowsPerSec.toFixed(0)} windows/s ≈ ${((windowsPerSec * concurrentUs) / 1e4).toFixed(1)}% of one core`);

  // 3. Analyzer (volume + model + state machine) fed 20 ms frames.
  const analyzer = new VadAnalyzer(model.createStream());
  const frames = Math.floor(speech.length / 160);
  await measure('analyzer.analyze(), per 20 ms frame (inference every 32 ms)', 5 * frames, async () => {
    for (let r = 0; r < 5; r++) for (let f = 0; f < frames; f++) await analyzer.analyze(speech.subarray(f * 160, f * 160 + 160));
  });
  // What the gateway does: push each frame as it arrives, events through the listener.
  const pushed = new VadAnalyzer(model.createStream(), {}, () => undefined);
  await measure('analyzer.push(), per 20 ms frame (inference every 32 ms)', 5 * frames, async () => {
    for (let r = 0; r < 5; r++) {
      for (let f = 0; f < frames; f++) {
        pushed.push(speech.subarray(f * 160, f * 160 + 160));
        if (f % 50 === 0) await pushed.idle(); // audio arrives over time, not all at once
      }
    }
    await pushed.idle();
  });

  // 4. G.711 per frame.
  const mulaw = encodeMulaw(speech.subarray(0, 160));
  const pcmOut = new Int16Array(160);
  let t = process.hrtime.bigint();
  for (let i = 0; i < 100000; i++) decodeMulaw(mulaw, pcmOut);
  const dec = process.hrtime.bigint() - t;
  const encOut = Buffer.alloc(160);
  t = process.hrtime.bigint();
  for (let i = 0; i < 100000; i++) encodeMulaw(pcmOut, encOut);
  console.log(`g711: decode ${us(dec, 100000)} µs, encode ${us(process.hrtime.bigint() - t, 100000)} µs per 160-byte frame`);

  // 5. Recorder per frame (both channels) and its memory.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-rec-'));
  const rec = await WavRecorder.open({ path: path.join(dir, 'r.wav') });
  const frame = speech.subarray(0, 160);
  t = process.hrtime.bigint();
  const recFrames = 60 * 50 * 5; // 5 minutes
  let maxBuffered = 0;
  for (let i = 0; i < recFrames; i++) {
    rec.writeCaller(frame, i * 20);
    rec.writeAgent(frame, i * 20);
    maxBuffered = Math.max(maxBuffered, rec.bufferedMs);
  }
  const recNs = process.hrtime.bigint() - t;
  await rec.close();
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(`recorder: ${us(recNs, recFrames)} µs per 20 ms of stereo; at most ${maxBuffered} ms (${((maxBuffered * 8 * 4) / 1024).toFixed(0)} KiB) held in memory`);

  // 6. Memory of a call's VAD (analyzer + Silero stream), measured over 1000 of them.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage();
  const keep: VadAnalyzer[] = [];
  for (let i = 0; i < 1000; i++) {
    const a = new VadAnalyzer(model.createStream());
    await a.analyze(speech.subarray(0, 512));
    keep.push(a);
  }
  gc?.();
  const after = process.memoryUsage();
  const perCall = (after.heapUsed + after.arrayBuffers + after.external - before.heapUsed - before.arrayBuffers - before.external) / 1000;
  console.log(`vad memory: ≈${(perCall / 1024).toFixed(1)} KiB per call (heap + array buffers, ${keep.length} analyzers${gc ? '' : ', run with --expose-gc for accuracy'})`);
  console.log(`process RSS with model loaded: ${(process.memoryUsage().rss / 1048576).toFixed(0)} MiB (shared by all calls)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
