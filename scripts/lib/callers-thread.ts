/**
 * The voice benchmark's simulated callers, on a worker thread of their own (scripts/lib/callers.ts
 * starts it): the telephony fake and its N phones, paced by this thread's event loop and collected
 * by this thread's heap. The benchmark's main thread holds an API, a database pool and a Temporal
 * client (~140 MB): its major collections used to stop every caller at once, which read as late
 * frames and slow barge-ins that the platform never caused.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { setLogLevel } from '../../src/shared/logger';
import { startFakeTelephony } from '../../test/fakes/telephony-fakes';
import { runCall, type CallResult, type CallSpec } from './bench-caller';
import { loadClip } from './caller-audio';
import { GcPauses } from './gc-pauses';
import { LoopStalls } from './loop-stalls';
import type { CallersInit, FromCallers, ToCallers } from './callers';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const port = parentPort!;
  const init = workerData as CallersInit;
  setLogLevel('warn');
  const phone = await startFakeTelephony(init.provider, { keepMediaEvents: false });
  const clip = loadClip(init.clipPath);
  const send = (m: FromCallers) => port.postMessage(m);

  const run = async (specs: CallSpec[], staggerMs: number, measure: boolean) => {
    const loop = monitorEventLoopDelay({ resolution: 10 });
    const gc = new GcPauses();
    const stalls = new LoopStalls();
    if (measure) {
      loop.enable();
      gc.start();
      stalls.start();
    }
    const live: CallResult[] = [];
    let done = 0;
    const progress = setInterval(() => send({ type: 'progress', done, turns: live.reduce((n, r) => n + r.turns.length, 0) }), 1000);
    const results = await Promise.all(
      specs.map((spec, k) =>
        sleep(k * staggerMs)
          .then(() => runCall({ ...spec, phone, clip }, live))
          .finally(() => done++),
      ),
    );
    clearInterval(progress);
    loop.disable();
    gc.stop();
    stalls.stop();
    send({ type: 'results', results, gcPauses: gc.pauses, gcSummary: gc.summary(), loopStalls: stalls.stalls, loopP99Ms: loop.percentile(99) / 1e6, loopMaxMs: loop.max / 1e6 });
  };

  port.on('message', (m: ToCallers) => {
    if (m.type === 'run') void run(m.specs, m.staggerMs, m.measure).catch((err: Error) => send({ type: 'failed', error: err.stack ?? err.message }));
    else void phone.stop().finally(() => send({ type: 'stopped' }));
  });
  send({ type: 'ready', env: phone.env, settings: phone.settings(init.phoneNumber, init.lines) });
}

main().catch((err: Error) => parentPort!.postMessage({ type: 'failed', error: err.stack ?? err.message } satisfies FromCallers));
