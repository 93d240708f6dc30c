/**
 * The media gateway: an HTTP server (`/healthz`, `/livez`, `/metrics`) whose WebSocket endpoints `/media/<provider>`
 * hold each call's media stream (any vendor of media-registry.ts), and a Temporal worker on a
 * task queue of this instance alone
 * (`gateway-<host>-<pid>-<random>`), running the GatewayActivities for the calls whose sockets
 * are here. Several instances can run side by side: each call workflow learns its gateway's
 * queue from the `mediaConnected` signal.
 */
import { activityTracingInterceptors } from '../observability/tracing/temporal-tracing';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import type { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { WebSocketServer } from 'ws';
import type { Config } from '../config';
import { maxMediaMessageBytes, mediaProtocol } from '../providers/telephony/media-registry';
import { serveMetrics } from '../observability/metrics-endpoint';
import { initProcessMetrics, trackGatewayCalls, trackGatewayPresence } from '../observability/metrics';
import { createLogger, type Logger } from '../shared/logger';
import { RETRY_AFTER_SECS } from '../shared/retry-after';
import { llmClients } from '../providers/llm/llm-activity-support';
import { createGatewayActivities } from './workflow-link/activities';
import { TemporalReachability } from './workflow-link/workflow-outbox';
import { GatewayPresence } from './admission/presence';
import { AnsweredCalls } from './stream/answered-calls';
import { RunJournal } from './workflow-link/run-journal';
import { SETUP_SECS } from './admission/room-estimate';
import { openGatewayDatabase, openKnowledgeSearch } from './gateway-database';
import { embedderFromConfig } from '../providers/embeddings';
import { CallRegistry } from './call/call-registry';
import type { CallMedia } from './call/call-media';
import { GatewayDrain, waitForFinalRecord } from './admission/drain';
import { acceptMediaStream } from './stream/media-stream';
import { StreamStats } from './stream/stream-stats';
import { TtsSpares } from './speech/tts-spares';
import { defaultSileroModelPath, sharedSileroModel } from './vad/silero';
import { SileroBatcher } from './vad/silero-batch';
import { SileroThread } from './vad/silero-thread';

const MEDIA_PATH = /^\/media\/([a-z0-9_-]{1,32})$/;

export interface GatewayDeps {
  config: Config;
  /** Client for the call workflows (queries and signals). */
  temporal: Client;
  /** Temporal frontend `host:port` for this gateway's worker. */
  address: string;
  namespace: string;
  /** Verifies media stream tokens: the platform's JWT secret (see stream-token.ts). */
  streamSecret: string;
  log?: Logger;
  /** Default `gateway-<hostname>-<pid>-<random>`. */
  taskQueue?: string;
  /**
   * PostgreSQL for the gateway's presence row (load, admission, liveness; docs/call-lifecycle.md).
   * Default: config.DATABASE_URL. Without one the gateway publishes no presence: the API can then
   * admit calls only with GATEWAY_ADMISSION=off, and the watchdog cannot see it die.
   */
  databaseUrl?: string;
}

export interface RunningGateway {
  port: number;
  /** ws://host:port of the HTTP server (stream URLs are this + /media/<provider>). */
  url: string;
  taskQueue: string;
  calls: CallRegistry;
  /** The presence row's writer (null without a database). */
  presence: GatewayPresence | null;
  /** Accepting streams: listening, with its worker running the calls' activities (not draining). */
  isReady(): boolean;
  /** `ok`: taking calls; `draining`: serving only the calls it holds; `down`: its worker is not running. */
  state(): GatewayRunState;
  /**
   * Takes no new calls and lets the live ones end, up to GATEWAY_DRAIN_SECS; then the calls left
   * hear GATEWAY_DRAIN_GOODBYE and end (see drain.ts). Resolves when every call held here has
   * recorded its end; `stop()` afterwards finds nothing to cut.
   */
  drain(): Promise<void>;
  /** Closes every call's stream (their workflows see the gateway go), then the worker and server. */
  stop(): Promise<void>;
}

export type GatewayRunState = 'ok' | 'draining' | 'down';

const round2 = (x: number) => Math.round(x * 100) / 100;
/** A stopping gateway waits this long for the calls it cut to report it to their workflows. */
const STOP_REPORTS_WAIT_MS = 3000;

/** Whether every call's reports reached its workflow within `waitMs`. */
async function reportsDelivered(held: CallMedia[], waitMs: number): Promise<boolean> {
  if (held.length === 0) return true;
  // The media sessions' results are queued once the closes have resolved: let that happen first.
  await new Promise((resolve) => setImmediate(resolve));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
  const delivered = Promise.all(held.map((call) => call.reports.settled)).then(() => true);
  return Promise.race([delivered, late]).finally(() => clearTimeout(timer));
}
/** How often calls are checked against the Temporal outage bound (seconds are its unit). */
const OUTAGE_CHECK_MS = 1000;

/** The gateway's Silero, on its own thread (GATEWAY_VAD_THREAD=on) or in this one. */
async function vadBatcher(config: Config): Promise<SileroBatcher> {
  if (config.GATEWAY_VAD_THREAD === 'off') return SileroBatcher.of(await sharedSileroModel());
  const thread = new SileroThread(defaultSileroModelPath());
  await thread.start();
  return new SileroBatcher(thread);
}

export function gatewayTaskQueue(): string {
  return `gateway-${os.hostname()}-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
}

export async function startGateway(deps: GatewayDeps, port: number, host = '0.0.0.0'): Promise<RunningGateway> {
  const log = deps.log ?? createLogger('gateway');
  initProcessMetrics();
  const taskQueue = deps.taskQueue ?? gatewayTaskQueue();
  const calls = new CallRegistry();
  const stats = new StreamStats();
  // Loaded once for every call; a broken model install fails the start, not the first call.
  const vad = await vadBatcher(deps.config);
  const ttsSpares = new TtsSpares(deps.config.GATEWAY_TTS_SPARE_SECS * 1000);
  // One LLM client per provider for the whole gateway (connections stay warm between turns).
  const llm = llmClients(deps.config);
  // Without presence (no database) there is no load reading: runs only if they are always on.
  const runsTurns = () => (presence?.snapshot.smoothedLoad ?? 0) >= deps.config.GATEWAY_TURN_RUN_LOAD;
  const reachability = new TemporalReachability();

  const connection = await NativeConnection.connect({ address: deps.address });
  let worker: Worker;
  try {
    worker = await Worker.create({
      connection,
      namespace: deps.namespace,
      taskQueue,
      activities: createGatewayActivities(calls, llm),
      // A call's gateway activities join its trace (docs/tracing.md); nothing while tracing is off.
      interceptors: { activity: activityTracingInterceptors() },
      // Every call holds a mediaSession for its whole length, plus a speech activity at a time.
      maxConcurrentActivityTaskExecutions: 2000,
      // On stop, activities of closed calls report their outcome before the worker goes.
      shutdownGraceTime: '3s',
    });
  } catch (err) {
    await connection.close();
    throw err;
  }
  const running = worker.run().catch((err: Error) => {
    log.error('gateway worker stopped', { error: err.message });
  });

  let presence: GatewayPresence | null = null;
  let answered: AnsweredCalls | null = null;
  let runJournal: RunJournal | null = null;
  let drain: GatewayDrain | null = null;
  let knowledge: ReturnType<typeof openKnowledgeSearch> | null = null;
  const state = (): GatewayRunState => (worker.getState() !== 'RUNNING' ? 'down' : drain?.draining ? 'draining' : 'ok');
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxMediaMessageBytes(), perMessageDeflate: false });
  const server = http.createServer((req, res) => {
    const pathname = (req.url ?? '').split('?')[0];
    if (pathname === '/healthz') {
      // Without its worker the gateway could take a stream but never speak on it; draining, it
      // takes none (readiness: a load balancer sends new streams elsewhere).
      const status = state();
      const p = presence?.snapshot;
      const load = p ? { load: round2(p.smoothedLoad), loop_lag_ms: round2(p.loopLagP99Ms), cpu: round2(p.cpu), own_cpu: round2(p.ownCpu ?? 0), cgroup: p.cgroup ? { quota_cores: p.cgroup.quotaCores, usage: p.cgroup.usage === null ? null : round2(p.cgroup.usage), throttled: round2(p.cgroup.throttled) } : null, host_cpu: round2(p.hostCpu), handoff_lag_ms: Math.round(p.handoffLagMs), admitting: p.admitting, refusal: p.refusal, state: p.state } : null;
      const detail = status === 'down' ? 'Unavailable: gateway worker' : status === 'draining' ? `Draining: taking no new calls; ${calls.size} live` : undefined;
      const body = { status, calls: calls.size, task_queue: taskQueue, presence: load, vad: vad.stats, streams: stats, ...(detail ? { detail } : {}) };
      res.writeHead(status === 'ok' ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      return;
    }
    if (pathname === '/livez') {
      // Liveness only says the process answers: /healthz turns 503 while a gateway drains, and a
      // liveness probe that followed it would restart the gateway and cut the calls it holds.
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok' }));
      return;
    }
    if (pathname === '/metrics' && req.method === 'GET') return void serveMetrics(req, res, deps.config.METRICS_TOKEN);
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'Not found' }));
  });
  const untrackCalls = trackGatewayCalls(() => calls.counts());
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => undefined);
    const url = URL.parse(req.url ?? '/', 'http://gateway');
    const protocol = url && mediaProtocol(MEDIA_PATH.exec(url.pathname)?.[1] ?? '');
    if (!url || !protocol) {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"detail":"Not found"}');
      return;
    }
    // Before it is a call: a load balancer that has not yet seen the drain tries the next gateway
    // (nginx `proxy_next_upstream http_503`). Streams name their call only in their first message,
    // so a new stream for a call held here would be refused too; none exists today (see
    // docs/call-lifecycle.md, "Streams that end without the call ending").
    if (drain?.draining) {
      const body = JSON.stringify({ detail: 'This media gateway is draining and takes no new calls' });
      socket.end(`HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nretry-after: ${RETRY_AFTER_SECS.drainingGateway}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    const upgrade = { url, headers: req.headers, remoteAddress: req.socket.remoteAddress ?? '' };
    wss.handleUpgrade(req, socket, head, (ws) => {
      acceptMediaStream(ws, protocol, upgrade, { calls, streamSecret: deps.streamSecret, temporal: deps.temporal, config: deps.config, taskQueue, vad, ttsSpares, reachability, llm, runsTurns, stats, log, answered: answered ?? undefined, runJournal: runJournal ?? undefined, knowledge: knowledge?.retriever });
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  } catch (err) {
    untrackCalls();
    worker.shutdown();
    await running;
    await connection.close();
    throw err;
  }
  const actualPort = (server.address() as AddressInfo).port;
  const url = `ws://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${actualPort}`;
  log.info('media gateway listening', { port: actualPort, taskQueue });
  const databaseUrl = deps.databaseUrl ?? deps.config.DATABASE_URL;
  const database = databaseUrl ? openGatewayDatabase(databaseUrl, log) : null;
  if (database) answered = new AnsweredCalls(database, taskQueue, log);
  if (database) runJournal = new RunJournal(database, log);
  if (databaseUrl) knowledge = openKnowledgeSearch(databaseUrl, embedderFromConfig(deps.config), log);
  presence = database
    ? new GatewayPresence({ pool: database, id: taskQueue, url, maxCalls: deps.config.GATEWAY_MAX_CALLS, maxLoad: deps.config.GATEWAY_MAX_LOAD, maxHostCpu: deps.config.GATEWAY_MAX_HOST_CPU, minCalls: deps.config.GATEWAY_MIN_CALLS, cgroupDir: deps.config.GATEWAY_CGROUP_DIR || undefined, calls: () => calls.size, settingUp: () => calls.connectedWithin(SETUP_SECS * 1000), handoffLagMs: () => calls.readHandoffLagMs(), maxHandoffMs: deps.config.GATEWAY_MAX_HANDOFF_MS, log })
    : null;
  if (presence) await presence.start();
  else log.warn('no DATABASE_URL: this gateway publishes no presence (the API admits calls to it only with GATEWAY_ADMISSION=off)');
  const published = presence;
  const untrackPresence = published ? trackGatewayPresence(() => ({ load: published.snapshot.smoothedLoad, ownCpu: published.snapshot.ownCpu ?? 0, cgroupCpu: published.snapshot.cgroup?.usage ?? null, hostCpu: published.snapshot.hostCpu, handoffLagMs: published.snapshot.handoffLagMs, admitting: published.snapshot.admitting, room: published.snapshot.room })) : () => undefined;
  drain = new GatewayDrain({
    calls,
    presence,
    deadlineSecs: deps.config.GATEWAY_DRAIN_SECS,
    goodbye: deps.config.GATEWAY_DRAIN_GOODBYE,
    finalRecorded: (callId, cancel) => waitForFinalRecord(deps.temporal, callId, cancel),
    log,
  });
  // Calls whose reports Temporal has not taken for longer than the outage bound end politely.
  const outageGuard = setInterval(() => {
    for (const call of calls.all()) call.giveUpOnTemporal(deps.config.GATEWAY_OUTAGE_SECS, deps.config.GATEWAY_OUTAGE_MESSAGE);
  }, OUTAGE_CHECK_MS);
  outageGuard.unref();

  let stopping: Promise<void> | null = null;
  return {
    port: actualPort,
    url,
    taskQueue,
    calls,
    presence,
    isReady: () => server.listening && state() === 'ok',
    state,
    drain: () => drain!.run(),
    stop: () =>
      (stopping ??= (async () => {
        drain?.cutShort();
        untrackCalls();
        untrackPresence();
        clearInterval(outageGuard);
        server.close();
        const held = calls.all();
        await Promise.allSettled(held.map((call) => call.close('shutdown', 1001, 'gateway shutting down')));
        // Their workflows learn it now (the media session fails), not when the watchdog misses
        // this gateway; a row marked stopped is never judged lost, so only then may it say so.
        await presence?.stop(await reportsDelivered(held, STOP_REPORTS_WAIT_MS));
        await ttsSpares.close();
        await database?.end().catch(() => undefined);
        await knowledge?.close().catch(() => undefined);
        await vad.close();
        for (const ws of wss.clients) ws.terminate();
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
        await connection.close();
        server.closeAllConnections();
      })()),
  };
}
