/**
 * Where batched Silero jobs run (silero-passes.ts): in this thread (`InlineSilero`), or on a worker
 * thread of their own (`SileroThread`, GATEWAY_VAD_THREAD=on) so that inference — a few ms per
 * job with many calls, more when the machine is busy — never holds up the event loop that
 * receives the callers' audio and paces the agent's frames. The main thread only copies windows
 * in and probabilities out.
 *
 * A thread that dies (it should not: onnxruntime errors come back as messages) fails the jobs it
 * held — the VAD treats a failing model as silence and logs it — and the next job starts a new one.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { createLogger } from '../../shared/logger';
import { runPasses, type SileroJob, type SileroJobResult } from './silero-passes';

const log = createLogger('vad');

export interface SileroEngine {
  readonly kind: 'inline' | 'thread';
  run(job: SileroJob): Promise<SileroJobResult>;
  close(): Promise<void>;
}

export class InlineSilero implements SileroEngine {
  readonly kind = 'inline';
  constructor(private readonly session: ort.InferenceSession) {}
  run(job: SileroJob): Promise<SileroJobResult> {
    return runPasses(ort, this.session, job);
  }
  async close(): Promise<void> {}
}

interface Waiting {
  resolve(r: SileroJobResult): void;
  reject(e: Error): void;
}

/** The worker's entry: compiled JavaScript in a build, TypeScript (through tsx) from the source tree. */
function workerEntry(): { file: string; execArgv?: string[] } {
  const ext = path.extname(__filename);
  const file = path.join(__dirname, `silero-thread-worker${ext}`);
  // tsx's CommonJS hook alone: with the parent's ESM --import hook a worker's .ts entry does not load.
  return ext === '.ts' ? { file, execArgv: ['--require', require.resolve('tsx/cjs')] } : { file };
}

export class SileroThread implements SileroEngine {
  readonly kind = 'thread';
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly modelPath: string) {}

  /** Starts the thread and loads the model there; rejects if it cannot. */
  start(): Promise<void> {
    if (this.ready) return this.ready;
    const { file, execArgv } = workerEntry();
    const worker = new Worker(file, { workerData: { modelPath: this.modelPath }, ...(execArgv ? { execArgv } : {}) });
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (m: { id?: number; ready?: boolean; loadError?: string; error?: string } & Partial<SileroJobResult>) => {
        if (m.ready) return resolve();
        if (m.loadError) return reject(new Error(`VAD thread could not load the model: ${m.loadError}`));
        const w = this.waiting.get(m.id!);
        if (!w) return;
        this.waiting.delete(m.id!);
        this.idleUnref();
        if (m.error) w.reject(new Error(m.error));
        else w.resolve({ probs: m.probs!, state: m.state!, passes: m.passes! });
      });
      worker.on('error', (err) => {
        log.error('VAD thread failed', { error: err.message });
        reject(err);
      });
      worker.on('exit', (code) => {
        if (this.worker !== worker) return;
        this.worker = null;
        this.ready = null;
        const err = new Error(`VAD thread exited (code ${code})`);
        for (const w of this.waiting.values()) w.reject(err);
        this.waiting.clear();
        reject(err);
      });
    });
    // Held while something waits on it (the model loading, a job); an idle thread must not keep a
    // stopping process alive.
    void this.ready.then(() => this.idleUnref(), () => undefined);
    return this.ready;
  }

  async run(job: SileroJob): Promise<SileroJobResult> {
    if (this.closed) throw new Error('VAD thread closed');
    await this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker!.ref();
      this.worker!.postMessage({ id, ...job }, [job.input.buffer, job.state.buffer] as ArrayBuffer[]);
    });
  }

  private idleUnref(): void {
    if (this.waiting.size === 0) this.worker?.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    this.ready = null;
    for (const w of this.waiting.values()) w.reject(new Error('VAD thread closed'));
    this.waiting.clear();
    if (worker) await worker.terminate();
  }
}
