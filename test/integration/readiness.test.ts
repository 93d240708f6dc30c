/**
 * `npm start`'s /healthz says ready only when everything in that process is: the API, the call
 * worker and the media gateway. A telephony provider that connects a media stream the moment the
 * platform reports ready must be accepted. Runs the real entry point (src/main.ts) as a process
 * against the test PostgreSQL and Temporal server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { getFreePort } from '../../src/temporal/dev-server';
import { cloneTestDatabase } from '../support/postgres';

const ROOT = path.join(__dirname, '..', '..');

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => (clearTimeout(kill), resolve()));
    child.kill('SIGTERM');
  });
}

async function health(url: string): Promise<{ status: number; body: any } | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
    return { status: res.status, body: await res.json() };
  } catch {
    return null; // not listening yet
  }
}

/** Opens a media stream WebSocket the way a provider does; resolves whether the gateway accepted it. */
function openStream(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.once('open', () => (ws.close(1000), resolve(true)));
    ws.once('error', () => resolve(false));
  });
}

let child: ChildProcess | undefined;
afterAll(async () => {
  if (child) await stop(child);
});

it('answers /healthz 200 only once the API, the worker and the media gateway all accept work', async () => {
  const [port, gatewayPort] = [await getFreePort(), await getFreePort()];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-ready-'));
  let stderr = '';
  child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      GATEWAY_PORT: String(gatewayPort),
      HOST: '127.0.0.1',
      DATABASE_URL: await cloneTestDatabase(),
      TEMPORAL_ADDRESS: process.env.VAP_TEST_TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: `ready-${crypto.randomBytes(4).toString('hex')}`,
      DATA_DIR: dataDir,
      ADMIN_PASSWORD: 'correct-horse-battery',
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));

  const seen: Array<{ status: number; body: any }> = [];
  const deadline = Date.now() + 90_000;
  let ready: { status: number; body: any } | null = null;
  while (!ready) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the platform did not become ready: ${stderr}`);
    const answer = await health(`http://127.0.0.1:${port}/healthz`);
    if (answer) seen.push(answer);
    if (answer?.status === 200) ready = answer;
    else await new Promise((r) => setTimeout(r, 20));
  }
  // The first moment it says ready, a provider's stream is accepted, and the gateway's own probe agrees.
  expect(await openStream(`ws://127.0.0.1:${gatewayPort}/media/twilio`)).toBe(true);
  expect((await health(`http://127.0.0.1:${gatewayPort}/healthz`))?.status).toBe(200);
  expect(ready.body).toMatchObject({ status: 'ok', database: 'ok', temporal: 'ok', worker: 'ok', gateway: 'ok' });

  // While the worker and gateway were still starting, the API was up and said so, with 503.
  // (Under load a dependency probe may also time out then; that is reported as down.)
  const notReady = seen.filter((a) => a.status === 503);
  expect(notReady.length).toBeGreaterThan(0);
  const starting = notReady.filter((a) => a.body.worker === 'starting' || a.body.gateway === 'starting');
  expect(starting.length).toBeGreaterThan(0);
  expect(starting[0]!.body.status).toMatch(/^(starting|degraded)$/);
  expect(starting[0]!.body.detail).toMatch(/Starting: .*(worker|gateway)/);
}, 120_000);
