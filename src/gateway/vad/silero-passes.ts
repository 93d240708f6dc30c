/**
 * One batched Silero job: every stream that has audio waiting brings ALL its complete windows,
 * and they run as consecutive passes — pass p holds the p-th window of every stream that has one
 * (Silero is recurrent: a stream's window p+1 needs the state window p left). The passes run back
 * to back, without returning to an event loop between them, so a stream that fell behind (100 ms
 * Exotel chunks, a stall) catches up in one job instead of one event-loop turn per window.
 *
 * Used in-process (silero-batch.ts) and on the VAD thread (silero-thread-worker.ts); the job is
 * plain typed arrays so it crosses a worker boundary as transferable buffers.
 *
 * Layout, per stream r in job order: `input` holds its context (the last CONTEXT samples it
 * analysed) followed by its n_r windows; the row of pass p is then the contiguous slice
 * [p·W, p·W + C + W) of that region. `state` holds each stream's [2, 128] recurrent state.
 */
import type * as Ort from 'onnxruntime-node';

export type SileroSampleRate = 8000 | 16000;

export const WINDOW: Record<SileroSampleRate, number> = { 8000: 256, 16000: 512 };
export const CONTEXT: Record<SileroSampleRate, number> = { 8000: 32, 16000: 64 };
export const STATE = 128;

export interface SileroJob {
  rate: SileroSampleRate;
  /** Windows per stream. */
  counts: Int32Array;
  /** Per stream: context + its windows (floats in [-1, 1)). */
  input: Float32Array;
  /** Per stream: [2, 128] state; updated in place by runPasses. */
  state: Float32Array;
}

export interface SileroJobResult {
  /** Per stream, per window, in job order. */
  probs: Float32Array;
  /** Per stream: the state after its last window. */
  state: Float32Array;
  /** Inference passes run (diagnostics). */
  passes: number;
}

/** Start of stream r's region in `input`. */
export function regionOffsets(counts: Int32Array, rate: SileroSampleRate): Int32Array {
  const offsets = new Int32Array(counts.length + 1);
  for (let r = 0; r < counts.length; r++) offsets[r + 1] = offsets[r]! + CONTEXT[rate] + counts[r]! * WINDOW[rate];
  return offsets;
}

/** Runs the job's passes on `session`; `ort` is onnxruntime-node as loaded where this runs. */
export async function runPasses(ort: typeof Ort, session: Ort.InferenceSession, job: SileroJob): Promise<SileroJobResult> {
  const { rate, counts, input, state } = job;
  const W = WINDOW[rate];
  const ROW = CONTEXT[rate] + W;
  const R = counts.length;
  const offsets = regionOffsets(counts, rate);
  const probStart = new Int32Array(R + 1);
  let maxCount = 0;
  for (let r = 0; r < R; r++) {
    probStart[r + 1] = probStart[r]! + counts[r]!;
    maxCount = Math.max(maxCount, counts[r]!);
  }
  const probs = new Float32Array(probStart[R]!);
  const sr = new ort.Tensor('int64', BigInt64Array.from([BigInt(rate)]), []);
  const rows = new Float32Array(R * ROW);
  const batchState = new Float32Array(2 * R * STATE);
  const members = new Int32Array(R);
  for (let p = 0; p < maxCount; p++) {
    let n = 0;
    for (let r = 0; r < R; r++) if (counts[r]! > p) members[n++] = r;
    for (let b = 0; b < n; b++) {
      const r = members[b]!;
      const from = offsets[r]! + p * W;
      rows.set(input.subarray(from, from + ROW), b * ROW);
      // state is [2, B, 128]: layer l of row b at (l·B + b)·128
      batchState.set(state.subarray(r * 2 * STATE, r * 2 * STATE + STATE), b * STATE);
      batchState.set(state.subarray(r * 2 * STATE + STATE, (r + 1) * 2 * STATE), (n + b) * STATE);
    }
    const out = await session.run({
      input: new ort.Tensor('float32', rows.subarray(0, n * ROW), [n, ROW]),
      state: new ort.Tensor('float32', batchState.subarray(0, 2 * n * STATE), [2, n, STATE]),
      sr,
    });
    const pr = out.output!.data as Float32Array;
    const stateN = out.stateN!.data as Float32Array;
    for (let b = 0; b < n; b++) {
      const r = members[b]!;
      probs[probStart[r]! + p] = pr[b]!;
      state.set(stateN.subarray(b * STATE, (b + 1) * STATE), r * 2 * STATE);
      state.set(stateN.subarray((n + b) * STATE, (n + b + 1) * STATE), r * 2 * STATE + STATE);
    }
  }
  return { probs, state, passes: maxCount };
}
