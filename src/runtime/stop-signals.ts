/**
 * How a platform process stops (docs/deployment.md, "Draining"). The first SIGTERM or SIGINT stops
 * it gracefully: a gateway part drains (no new calls; live calls go on until they end or
 * GATEWAY_DRAIN_SECS passes), then every part stops in turn — a worker lets its activities in
 * flight finish, the API its requests — and the process exits 0. A second signal stops it at once:
 * the calls still held are cut, and the process exits with 128 + the signal's number.
 */
import os from 'node:os';
import type { Logger } from '../shared/logger';

/** After a second signal, the process exits within this even if a part has not stopped. */
export const FORCED_STOP_MS = 5000;

export interface Stoppable {
  liveCalls(): number;
  drain(): Promise<void>;
  stop(): Promise<void>;
}

export interface StopOptions {
  log: Logger;
  drainSecs: number;
  /** Default process.exit (tests pass their own). */
  exit?: (code: number) => void;
}

export function stopOnSignals(platform: Stoppable, opts: StopOptions): void {
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) {
      stopping = true;
      const calls = platform.liveCalls();
      console.log(calls > 0 ? `\nStopping: draining ${calls} live call(s) for up to ${opts.drainSecs} s. Press Ctrl-C again to stop now.` : '\nStopping…');
      opts.log.info('stopping', { signal, live_calls: calls });
      platform
        .drain()
        .then(() => platform.stop())
        .then(
          () => exit(0),
          (err: Error) => {
            opts.log.error('stop failed', { error: err.message });
            exit(1);
          },
        );
      return;
    }
    const code = 128 + (os.constants.signals[signal] ?? 0);
    console.log('\nStopping now.');
    opts.log.warn('stopping at once: the calls still held are cut', { signal, live_calls: platform.liveCalls() });
    setTimeout(() => exit(code), FORCED_STOP_MS).unref();
    void platform.stop().finally(() => exit(code));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
