import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Harness } from './harness';

const ROOT = path.join(__dirname, '..', '..');

/** Starts test/support/worker-process.ts for the harness's database and task queue. */
export async function spawnWorkerProcess(h: Harness, env: Record<string, string> = {}): Promise<ChildProcess> {
  // `node --import tsx` runs the script in this very process (the tsx CLI would fork a grandchild
  // that a SIGKILL to the child would leave running).
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'worker-process.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: h.dbUrl,
      TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: h.taskQueue,
      ENCRYPTION_KEY: h.config.ENCRYPTION_KEY,
      JWT_SECRET: h.config.JWT_SECRET,
      DATA_DIR: h.config.dataDir,
      LOG_LEVEL: 'error',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker process did not start: ${stderr}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('worker ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker process exited (${code}): ${stderr}`));
    });
  });
  child.removeAllListeners('exit');
  return child;
}

export function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
