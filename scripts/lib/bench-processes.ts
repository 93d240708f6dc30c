/**
 * The voice benchmark's platform processes (scripts/bench-voice.ts): each part started on its own
 * like `npm run gateway|worker|api`, so its CPU and memory can be read from /proc/<pid>.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/**
 * Starts `script` under `node --import tsx` and resolves when its output matches `ready`;
 * `nodeArgs` go before it (e.g. `--cpu-prof`, which Node refuses in NODE_OPTIONS).
 */
export async function spawnUntil(
  name: string,
  script: string,
  env: Record<string, string | undefined>,
  ready: RegExp,
  nodeArgs: string[] = [],
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  // `node --import tsx`: the process measured is the service itself, not a tsx wrapper.
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(ROOT, script)], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  // BENCH_LOG_DIR: each process's whole output in <dir>/<name>.log, to see why a call failed.
  if (process.env.BENCH_LOG_DIR) {
    const log = fs.createWriteStream(path.join(process.env.BENCH_LOG_DIR, `${name.replace(/\W+/g, '-')}.log`));
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
  }
  let output = '';
  let watchReady = (_: Buffer): void => undefined;
  const collect = (d: Buffer) => {
    output += d.toString();
    if (output.length > 20_000) output = output.slice(-10_000);
  };
  child.stderr!.on('data', collect);
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 60 s:\n${output}`)), 60_000);
    watchReady = (d: Buffer) => {
      collect(d);
      const m = ready.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout!.on('data', watchReady);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}):\n${output}`));
    });
  });
  child.removeAllListeners('exit');
  child.stdout!.off('data', watchReady);
  child.stdout!.resume();
  return { child, match };
}

export function stopProcess(child: ChildProcess, graceMs = 8000): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

