/**
 * The voice benchmark's callers, driven from its main thread: they run on a worker thread
 * (scripts/lib/callers-thread.ts) with the telephony fake, so nothing the main thread does —
 * its API, database reads, /proc sampling, garbage collections — delays a caller's frames.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { CallResult, CallSpec } from './bench-caller';
import { type GcPause, type PauseLog, pauseLog } from './gc-pauses';
import { stallLog } from './loop-stalls';

export interface CallersInit {
  provider: string;
  clipPath: string;
  /** Our number, and how many calls its account allows at once (the fake's settings). */
  phoneNumber: string;
  lines: number;
}

export type ToCallers = { type: 'run'; specs: CallSpec[]; staggerMs: number; measure: boolean } | { type: 'stop' };

export type FromCallers =
  | { type: 'ready'; env: Record<string, string>; settings: Record<string, unknown> }
  | { type: 'progress'; done: number; turns: number }
  | { type: 'results'; results: CallResult[]; gcPauses: GcPause[]; gcSummary: string; loopStalls: GcPause[]; loopP99Ms: number; loopMaxMs: number }
  | { type: 'stopped' }
  | { type: 'failed'; error: string };

export interface CallsRun {
  results: CallResult[];
  /** The callers' thread's garbage collections during the calls. */
  gc: PauseLog;
  /** Stalls of the callers' thread that are not collections (loop-stalls.ts). */
  stalls: PauseLog;
  /** Event-loop delay of the callers' thread (their clock), ms. */
  loopP99Ms: number;
  loopMaxMs: number;
}

export interface Callers {
  /** Environment the platform needs to reach the telephony fake (its REST API). */
  env: Record<string, string>;
  /** The telephony settings for PUT /api/settings/telephony. */
  settings: Record<string, unknown>;
  /** Places the calls, one every staggerMs; `progress` hears how far they got each second. */
  run(specs: CallSpec[], staggerMs: number, opts?: { measure?: boolean; progress?: (done: number, turns: number) => void }): Promise<CallsRun>;
  stop(): Promise<void>;
}

export async function startCallers(init: CallersInit): Promise<Callers> {
  // tsx's loader, registered by `--import tsx` on the main thread, does not reach a worker: the
  // thread registers it before loading its TypeScript.
  const entry = path.join(__dirname, 'callers-thread.ts');
  const worker = new Worker(`require('tsx/cjs'); require(${JSON.stringify(entry)});`, { eval: true, workerData: init });
  let onMessage: (m: FromCallers) => void = () => undefined;
  let failure: ((err: Error) => void) | null = null;
  worker.on('message', (m: FromCallers) => (m.type === 'failed' ? failure?.(new Error(`callers' thread: ${m.error}`)) : onMessage(m)));
  worker.on('error', (err) => failure?.(err));
  const next = <T extends FromCallers['type']>(type: T, each?: (m: FromCallers) => void) =>
    new Promise<Extract<FromCallers, { type: T }>>((resolve, reject) => {
      failure = reject;
      onMessage = (m) => (m.type === type ? resolve(m as Extract<FromCallers, { type: T }>) : each?.(m));
    });
  const ready = await next('ready');
  const send = (m: ToCallers) => worker.postMessage(m);
  return {
    env: ready.env,
    settings: ready.settings,
    async run(specs, staggerMs, opts = {}) {
      const reply = next('results', (m) => m.type === 'progress' && opts.progress?.(m.done, m.turns));
      send({ type: 'run', specs, staggerMs, measure: opts.measure ?? false });
      const r = await reply;
      return { results: r.results, gc: pauseLog(r.gcPauses, r.gcSummary), stalls: stallLog(r.loopStalls), loopP99Ms: r.loopP99Ms, loopMaxMs: r.loopMaxMs };
    },
    async stop() {
      const stopped = next('stopped');
      send({ type: 'stop' });
      await Promise.race([stopped, new Promise((r) => setTimeout(r, 5000))]).catch(() => undefined);
      await worker.terminate();
    },
  };
}
