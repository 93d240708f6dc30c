/**
 * Everything a voice-call integration test runs against, started in one call: the speech and LLM
 * fakes an agent uses by default (Deepgram STT, Cartesia TTS, an OpenAI-compatible LLM), the
 * harness (API, PostgreSQL, Temporal) with the environment pointing at them and at the telephony
 * vendors' fakes, the call worker and the media gateway, and each vendor's settings stored through
 * the API. The test starts its telephony fakes itself so it keeps their typed handles (outcomes,
 * dials, calls); the stack stops them with everything else.
 */
import type { ChildProcess } from 'node:child_process';
import { startGateway, type RunningGateway } from '../../src/gateway/server';
import { getFreePort } from '../../src/temporal/dev-server';
import { startFakeCartesia, type FakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startHarness, type Harness } from './harness';
import { killHard, spawnGatewayProcess, spawnWorkerProcess } from './worker-process-control';

/** A telephony vendor's fake as the stack needs it. */
export interface StackTelephony {
  fake: { stop(): Promise<void> };
  /** Environment pointing the platform at the fake, e.g. `{ TWILIO_API_BASE_URL }`. */
  env: Record<string, string>;
  /** Stores the vendor's settings through the API (e.g. configureTwilio) once the harness runs. */
  configure(h: Harness): Promise<unknown>;
}

export interface VoiceStackOptions {
  telephony: StackTelephony[];
  /**
   * Worker and gateway as child processes, as deployed (transfers, where the gateway and the
   * workflow talk only over Temporal and HTTP); otherwise the harness's worker and a gateway in
   * the test's process.
   */
  processes?: boolean;
  /** More environment, e.g. other speech vendors' fakes or gateway tuning. */
  env?: Record<string, string>;
  /** More fakes the test started, stopped with the stack. */
  alsoStop?: Array<{ stop(): Promise<void> } | undefined>;
}

export interface VoiceStack {
  h: Harness;
  deepgram: FakeDeepgram;
  cartesia: FakeCartesia;
  openai: FakeOpenAI;
  gatewayPort: number;
  /** The in-process gateway (without `processes`). */
  gateway?: RunningGateway;
  /** The gateway's child process (with `processes`): a test may kill it. */
  gatewayProcess?: ChildProcess;
  /** With `processes`: kills the call worker hard (SIGKILL) and starts a new one. */
  restartWorker(): Promise<void>;
  stop(): Promise<void>;
}

/** Environment pointing the platform at the default speech and LLM fakes. */
export function speechFakesEnv(deepgram: FakeDeepgram, cartesia: FakeCartesia, openai: FakeOpenAI): Record<string, string> {
  return {
    DEEPGRAM_API_KEY: 'dg-key',
    DEEPGRAM_BASE_URL: deepgram.url,
    CARTESIA_API_KEY: 'ca-key',
    CARTESIA_BASE_URL: cartesia.url,
    OPENAI_BASE_URL: openai.url,
    OPENAI_API_KEY: 'sk-test',
  };
}

export async function startVoiceStack(opts: VoiceStackOptions): Promise<VoiceStack> {
  const [deepgram, cartesia, openai] = await Promise.all([
    startFakeDeepgram({ apiKey: 'dg-key' }),
    startFakeCartesia({ apiKey: 'ca-key' }),
    startFakeOpenAI(),
  ]);
  const fakes = [...opts.telephony.map((t) => t.fake), ...(opts.alsoStop ?? []), deepgram, cartesia, openai];
  const gatewayPort = await getFreePort();
  const env: Record<string, string> = {
    ...Object.assign({}, ...opts.telephony.map((t) => t.env)),
    GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}`,
    ...speechFakesEnv(deepgram, cartesia, openai),
    ...opts.env,
  };
  let h: Harness | undefined;
  let worker: ChildProcess | undefined;
  let gatewayChild: ChildProcess | undefined;
  let gateway: RunningGateway | undefined;
  const stop = async () => {
    if (worker) await killHard(worker);
    if (gatewayChild) await killHard(gatewayChild);
    await gateway?.stop();
    await h?.stop();
    await Promise.all(fakes.map((f) => f?.stop()));
  };
  try {
    if (opts.processes) {
      const processEnv = { ...env, GATEWAY_PORT: String(gatewayPort) };
      h = await startHarness({ env: processEnv });
      worker = await spawnWorkerProcess(h, processEnv);
      gatewayChild = (await spawnGatewayProcess(h, processEnv)).child;
    } else {
      h = await startHarness({ worker: true, env });
      gateway = await startGateway(h.gatewayDeps(), gatewayPort, '127.0.0.1');
    }
    for (const t of opts.telephony) await t.configure(h);
  } catch (err) {
    await stop();
    throw err;
  }
  const restartWorker = async () => {
    if (!worker || !opts.processes) throw new Error('restartWorker needs a stack started with processes');
    await killHard(worker);
    worker = await spawnWorkerProcess(h!, { ...env, GATEWAY_PORT: String(gatewayPort) });
  };
  return { h, deepgram, cartesia, openai, gatewayPort, gateway, ...(gatewayChild ? { gatewayProcess: gatewayChild } : {}), restartWorker, stop };
}
