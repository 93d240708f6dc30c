/**
 * The VAD thread (GATEWAY_VAD_THREAD=on): Silero inference for every call of the gateway, off the
 * event loop that paces the calls' audio. Loads the model once, then answers each job message
 * (silero-passes.ts) with the probabilities and states, its buffers transferred back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { runPasses, type SileroJob } from './silero-passes';

interface JobMessage extends SileroJob {
  id: number;
}

const port = parentPort!;
const session = ort.InferenceSession.create((workerData as { modelPath: string }).modelPath, {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionProviders: ['cpu'],
  graphOptimizationLevel: 'all',
});

session.then(
  () => port.postMessage({ ready: true }),
  (err: Error) => port.postMessage({ loadError: err.message }),
);

// One job at a time, in order: the main side sends the next only after this one's answer.
port.on('message', (job: JobMessage) => {
  session
    .then((s) => runPasses(ort, s, job))
    .then(
      (result) => port.postMessage({ id: job.id, ...result }, [result.probs.buffer, result.state.buffer] as ArrayBuffer[]),
      (err: Error) => port.postMessage({ id: job.id, error: err.message }),
    );
});
