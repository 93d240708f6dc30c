/**
 * `npm run bench:voice [-- --calls N --turns K --barge-ins B --provider twilio|exotel|plivo
 * --nice P --gateway-nice G --warmup 0|1 --cpu-prof worker|gateway|api --redial R --temporal disk|memory
 * --knowledge]` (defaults 50, 3, 1, twilio, 10, -6, 1; no profile; 0; disk; no knowledge base;
 * `--knowledge`: scripts/lib/bench-knowledge-base.ts): after one warm-up call (reported
 * apart), N simultaneous simulated phone calls through the real API, call workflow and media
 * gateway, with zero-latency vendor fakes, measured from the callers' side,
 * from the gateway's /metrics and from /proc. Ends with one machine-readable `SUMMARY` line.
 *
 * The worker, the API and Temporal run at nice P (README: CPU priority), the gateway at nice G:
 * −6 weighs about 4× a nice-0 process, as `cpu_shares: 4096` does for the gateway in Compose. Without
 * it the callers and vendor fakes — on a real deployment the outside world, here at nice 0 on the
 * same two cores — take turns with the gateway, and their bursts read as its loop running late.
 *
 * Processes: the media gateway runs on its own (`src/gateway/main.ts`, i.e. `npm run gateway`) so
 * its CPU and memory can be read from /proc/<pid>; the call worker runs on its own too, as in a
 * scaled deployment, and so does the API that the phone company's webhooks reach (`npm run api`).
 * The zero-latency vendor fakes (Deepgram, Cartesia, OpenAI) have a process of their own, so
 * answering the gateway never waits behind the callers. This process holds the telephony fake
 * with its callers on the media streams (the measuring instrument) on a worker thread of their own
 * (scripts/lib/callers-thread.ts), and configures and reads back through an API of its own on the
 * same database. Temporal and PostgreSQL are found or started like the tests do; all on 127.0.0.1.
 *
 * Each call: the greeting, then K caller turns (test/fixtures/audio/hello-appointment.wav), each
 * answered by a short one-sentence reply, then B barge-ins: a turn drawing a long reply and the
 * caller talking over it (scripts/lib/bench-caller.ts); call starts are staggered and every caller
 * pauses a random 0.2–1 s before speaking, so turns do not line up. The agent runs with
 * vad_start_secs 0.2, vad_stop_secs 0.4, min_words 1. Reported:
 * - turn latency, caller side: first non-silent agent frame received − (the caller's end of
 *   speech + vad_stop_secs), where the end of speech is when the caller's phone sent the last
 *   frame of the clip that carries speech;
 * - greeting latency, caller side: stream opened → first non-silent greeting frame received;
 * - barge-in latency, caller side: the caller's speech start over the agent → `clear` received;
 *   and the gateway's own (its /metrics): VAD speech-start decision → `clear` sent;
 * - gateway CPU (% of one core) and RSS: idle, with N calls (the window in which all N are
 *   connected), per call;
 * - dropped frames: frames the caller should have heard (the TTS fake makes 60 ms of audio per
 *   character, 3 frames) minus frames received, per utterance; late frames: gaps > 40 ms inside
 *   an utterance for a player that plays frames as they arrive;
 * - calls completed correctly (completed, every turn answered with the expected texts, no error);
 * - where the time goes: the gateway's /metrics (turn stages), its ttfb_metric events, the
 *   workflow histories (the Temporal hand-off) and the VAD's decision point;
 * - the VAD's decision lag (gateway /metrics): arrival of the audio that let the VAD decide → the
 *   decision, for speech starts and stops; barge-in from the arrival of the speech onset;
 * - late frames during the ramp-up (`late_rampup=`): from the first call placed to 1 s after the
 *   last one connected, when call set-ups crowd the gateway.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { setLogLevel } from '../src/shared/logger';
import { getFreePort } from '../src/temporal/dev-server';
import { startHarness, type Harness } from '../test/support/harness';
import { analyseCall, callScript, type CallResult, type CallSpec } from './lib/bench-caller';
import { startCallers } from './lib/callers';
import { checkCall } from './lib/bench-checks';
import { printCostReport } from './lib/bench-cost-report';
import { printGatewayMetrics, type GatewayFigures } from './lib/bench-metrics-report';
import { fmtMs, loadClip, percentile } from './lib/caller-audio';
import { benchArgs } from './lib/bench-args';
import { createBenchKnowledge, knowledgeTally } from './lib/bench-knowledge-base';
import { spawnUntil, stopProcess } from './lib/bench-processes';
import { vadDecisionOffsets } from './lib/vad-offsets';
import { AdmissionTrace } from './lib/admission-trace';
import { RETRY_AFTER_SECS } from '../src/shared/retry-after';
import { histogramQuantileMs, scrapeMetrics, type Scrape } from './lib/prom-scrape';
import { gatewayGcSummary } from './lib/gc-pauses';
import { printStalls } from './lib/bench-stalls';
import { printMachineUse } from './lib/bench-machine-report';
import { startLocalServices } from './lib/local-services';
import { printHandoffSteps } from './lib/turn-handoff';
import { printSetupSteps } from './lib/setup-steps';
import { childPids, cores, hostTicks, hostUse, mb, pct, ProcMonitor } from './lib/proc-stats';

const ROOT = path.join(__dirname, '..');
const CLIP_PATH = path.join(ROOT, 'test', 'fixtures', 'audio', 'hello-appointment.wav');
const CALLER_TEXT = 'Hello, I would like to book an appointment for tomorrow.';
const GREETING = 'Sunrise Clinic, how can I help?';
// One sentence each, so every reply is one TTS request of a known length.
const REPLIES = ['Sure, I can book that for you.', 'Of course, nine works fine.', 'Great, see you tomorrow then.'];
// Long enough (~9 s of audio) that the caller is sure to talk over it.
const LONG_REPLY =
  'We have two free slots tomorrow, one at nine in the morning and one at eleven, and Thursday afternoon is still open if that suits you better.';
const AFTER_BARGE_IN = 'Sorry, go ahead.';
const VAD_START_SECS = 0.2;
const VAD_STOP_SECS = 0.4;
const MIN_WORDS = 1;
const LATE_GAP_MS = 40;
// The ramp-up lasts until this long after the last call connected (its greeting is being made).
const RAMPUP_TAIL_MS = 1000;
const OUR_NUMBER = '+15005550006';
const KEY = 'bench-key';
const AGENT = 'bench-clinic';
const DEFAULT_LIMIT_MINUTES = 6;
// Default nice value of the worker, the API and Temporal (`--nice`; README: CPU priority).
const PLATFORM_NICE = 10;
// Default nice value of the gateway (`--gateway-nice`): its weight against nice 0 as Compose's cpu_shares 4096 against 1024.
const GATEWAY_NICE = -6;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---- main -----------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const { calls: N, turns: K, bargeIns, staggerMs, limitMinutes, provider, nice, gatewayNice, warmup, cpuProf, redial, temporal, knowledge } = benchArgs(process.argv.slice(2), { limitMinutes: DEFAULT_LIMIT_MINUTES, nice: PLATFORM_NICE, gatewayNice: GATEWAY_NICE });
  // A CPU profile of one platform process, written when it stops (open it in Chrome DevTools).
  const profDir = cpuProf ? fs.mkdtempSync(path.join(os.tmpdir(), `bench-prof-${cpuProf}-`)) : null;
  const profArgs = (who: string) => (who === cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
  const script = callScript(REPLIES, K, bargeIns, LONG_REPLY, AFTER_BARGE_IN);
  setLogLevel('warn');
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  console.log(`Voice benchmark: ${N} simultaneous ${provider} calls × ${K} turns + ${bargeIns} barge-in(s), on ${cores()} cores (${cpu}), Node ${process.version}\n\nStarting:`);

  const clip = loadClip(CLIP_PATH);
  // Temporal on disk by default, as `npm start` runs it: in memory it answers a burst of set-ups sooner.
  const services = await startLocalServices((l) => console.log(l), { temporalOnDisk: temporal === 'disk' });
  const stops: Array<() => Promise<void>> = [];
  let summary = '';
  // Past the limit the run gives up, but still stops what it started (no orphaned processes).
  const watchdog = setTimeout(() => {
    console.error(`bench:voice: still running after ${limitMinutes} minutes; giving up`);
    const stopAll = (async () => {
      for (const stop of stops) await stop().catch(() => undefined);
      await services.stop();
    })();
    void Promise.race([stopAll, sleep(30_000)]).finally(() => process.exit(2));
  }, limitMinutes * 60_000);
  watchdog.unref();
  try {
    const phone = await startCallers({ provider, clipPath: CLIP_PATH, phoneNumber: OUR_NUMBER, lines: N + 10 });
    stops.push(() => phone.stop());
    const fakes = await spawnUntil('vendor fakes', 'scripts/lib/vendor-fakes-process.ts', { BENCH_VENDOR_KEY: KEY, BENCH_CALLER_TEXT: CALLER_TEXT, BENCH_REPLIES: JSON.stringify(script.map((s) => s.reply)) }, /fakes ready (\{.*\})/);
    stops.push(() => stopProcess(fakes.child));
    const urls = JSON.parse(fakes.match[1]!) as { deepgram: string; cartesia: string; openai: string };
    const vendorEnv = {
      DEEPGRAM_API_KEY: KEY,
      DEEPGRAM_BASE_URL: urls.deepgram,
      CARTESIA_API_KEY: KEY,
      CARTESIA_BASE_URL: urls.cartesia,
      OPENAI_API_KEY: KEY,
      OPENAI_BASE_URL: urls.openai,
    };
    const gatewayPort = await getFreePort();
    // The harness: this run's database (cloned from the migrated template) and an API in this
    // process for configuration and reading results back.
    const h: Harness = await startHarness({ env: vendorEnv });
    stops.unshift(() => h.stop());
    // N recordings nobody listens to (~1 MB per call): removed at the end.
    stops.push(async () => fs.rmSync(h.config.dataDir, { recursive: true, force: true }));
    const platformEnv = {
      DATABASE_URL: h.dbUrl,
      TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: h.taskQueue,
      ENCRYPTION_KEY: h.config.ENCRYPTION_KEY,
      JWT_SECRET: h.config.JWT_SECRET,
      DATA_DIR: h.config.dataDir,
      LOG_LEVEL: process.env.BENCH_LOG_DIR ? 'info' : 'warn',
      // The fakes listen on loopback: the outbound guard lets webhooks reach them and nothing else private.
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
      ...vendorEnv,
    };
    // The worker hangs up provider calls through the vendor's REST API: it must reach the fake too.
    const { child: worker } = await spawnUntil('worker', 'test/support/worker-process.ts', { ...platformEnv, ...phone.env, NICE: String(nice) }, /worker ready/, profArgs('worker'));
    stops.unshift(() => stopProcess(worker));
    // The profiler's own work reads as load (0.6 idle): a profiled gateway admits by call count only.
    const gatewayEnv = { ...platformEnv, GATEWAY_PORT: String(gatewayPort), HOST: '127.0.0.1', NICE: String(gatewayNice), ...(cpuProf === 'gateway' ? { GATEWAY_MAX_LOAD: '100' } : {}) };
    const { child: gateway } = await spawnUntil('gateway', 'src/gateway/main.ts', gatewayEnv, /Media gateway/, profArgs('gateway'));
    stops.unshift(() => stopProcess(gateway));
    // The API that the phone company calls runs on its own too (`npm run api`), so handling the inbound
    // webhooks never stalls the callers' clock; this process's API only configures and reads back.
    const apiPort = await getFreePort();
    const { child: apiProcess } = await spawnUntil(
      'API',
      'src/api/main.ts',
      { ...platformEnv, PORT: String(apiPort), HOST: '127.0.0.1', ...phone.env, GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}`, NICE: String(nice) },
      /API\s+http/,
      profArgs('api'),
    );
    stops.unshift(() => stopProcess(apiProcess));
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    console.log(`  Fakes        ${provider} ${Object.values(phone.env).join(' ')} and its callers (this process); Deepgram, Cartesia, OpenAI (pid ${fakes.child.pid})`);
    console.log(`  Platform     API ${apiUrl} (pid ${apiProcess.pid}), call worker pid ${worker.pid}, media gateway pid ${gateway.pid} on ws://127.0.0.1:${gatewayPort}`);
    // A negative nice needs CAP_SYS_NICE: without it the gateway logs a warning and stays at 0.
    const gatewayNiceNow = os.getPriority(gateway.pid!);
    console.log(`  Priorities   worker, API and Temporal at nice ${nice}; the media gateway at ${gatewayNiceNow}${gatewayNiceNow !== gatewayNice ? ` (${gatewayNice} refused: no CAP_SYS_NICE)` : ''}; fakes and callers at 0`);

    const api = async (method: string, p: string, body?: unknown) => {
      const res = await h.request(method, p, { body });
      if (res.status >= 300) throw new Error(`${method} ${p} → ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    await api('PUT', '/api/settings/telephony', { provider, public_base_url: apiUrl, ...phone.settings });
    const kb = knowledge ? await createBenchKnowledge(api) : null;
    if (kb) console.log(`  Knowledge    base ${kb.id}: ${kb.documents} documents, ${kb.chunks} chunks, mode auto (every turn searches it)`);
    await api('POST', '/api/agents', {
      name: AGENT, prompt: 'You book appointments. Be brief.', greeting: GREETING, pipeline_settings: { vad_start_secs: VAD_START_SECS, vad_stop_secs: VAD_STOP_SECS, min_words: MIN_WORDS },
      ...(kb ? { knowledge_base_ids: [kb.id], knowledge_mode: 'auto' } : {}),
    });
    const endpoint = await api('POST', '/api/settings/endpoints', { phone_number: OUR_NUMBER, provider, inbound_agent_name: AGENT });

    const callSpec = (index: number, calls = script): CallSpec => ({
      index, webhookUrl: endpoint.inbound_webhook_url, greeting: GREETING, script: calls, from: `+1415555${String(1000 + index)}`, to: OUR_NUMBER,
      redial, redialAfterMs: RETRY_AFTER_SECS.gatewayFull * 1000,
    });
    // The first call after start pays for JIT compilation and first connections in every process:
    // it is run and reported on its own, and the N calls measure a platform that is running.
    let warm: CallResult | null = null;
    if (warmup) {
      console.log('  Warm-up: one call (1 turn), not counted…');
      warm = (await phone.run([callSpec(N, script.slice(0, 1))], 0)).results[0]!;
      analyseCall(warm, GREETING, script.slice(0, 1), VAD_STOP_SECS, LATE_GAP_MS);
    }

    const temporalPid = childPids(process.pid, 'temporal')[0];
    // As `npm start` does for its dev server (src/runtime/priority.ts).
    if (temporalPid) os.setPriority(temporalPid, nice);
    const monitor = new ProcMonitor({ gateway: gateway.pid!, worker: worker.pid!, api: apiProcess.pid!, bench: process.pid, fakes: fakes.child.pid!, ...(temporalPid ? { temporal: temporalPid } : {}) }, ['postgres']);
    monitor.start(250);
    console.log('  Idle baseline: 4 s…');
    await sleep(1000);
    const idleFrom = Date.now();
    await sleep(3000);
    const idleTo = Date.now();
    const vadOffsets = vadDecisionOffsets(clip, VAD_STOP_SECS);
    // The gateway's own measurements: what its histograms gain during the calls.
    const metricsUrl = `http://127.0.0.1:${gatewayPort}/metrics`;
    const scrape = () => scrapeMetrics(metricsUrl, process.env.METRICS_TOKEN).catch((err: Error) => (console.log(`  (gateway /metrics: ${err.message})`), null));
    const metricsBefore: Scrape | null = await scrape();

    console.log(`  Calls: ${N}, one every ${staggerMs} ms…`);
    const admission = new AdmissionTrace(h.db);
    admission.start();
    const hostFrom = hostTicks();
    const started = Date.now();
    // A long run says how far it got (a stall shows here rather than only at the time limit).
    let said = started;
    const progress = (done: number, turns: number) => {
      if (Date.now() - said < 15_000) return;
      said = Date.now();
      console.log(`  … ${Math.round((Date.now() - started) / 1000)} s: ${done}/${N} calls done, ${turns}/${N * script.length} turns spoken`);
    };
    const { results, gc, stalls, loopP99Ms, loopMaxMs } = await phone.run(Array.from({ length: N }, (_, i) => callSpec(i)), staggerMs, { measure: true, progress });
    const host = hostUse(hostFrom, hostTicks());
    admission.stop();
    const callsSecs = (Date.now() - started) / 1000;
    await sleep(500);
    monitor.stop();
    const metricsAfter: Scrape | null = await scrape();

    // ---- analysis ---------------------------------------------------------------------------------
    const refused = results.filter((r) => r.refused).length;
    const admitted = results.filter((r) => !r.refused);
    const connected = results.filter((r) => r.connectedAtMs !== undefined);
    // The window in which all calls were connected; when calls ended before the last one connected
    // there is none, and the whole calls period stands in (the table says so).
    const lastConnected = Math.max(...connected.map((r) => r.connectedAtMs!));
    const firstHungUp = Math.min(...results.map((r) => r.hungUpAtMs ?? Infinity));
    const allAtOnce = firstHungUp > lastConnected;
    const windowFrom = allAtOnce ? lastConnected : started;
    const windowTo = allAtOnce ? firstHungUp : Date.now() - 500;
    // A refused call heard nothing and was meant to: none of its frames count as dropped.
    const frames = results.map((r) => (r.refused ? { expected: 0, received: 0, dropped: 0, late: 0, maxGapMs: 0, lateAt: [] } : analyseCall(r, GREETING, script, VAD_STOP_SECS, LATE_GAP_MS)));
    const latencies = results.flatMap((r) => r.turns.map((t) => t.latencyMs)).filter((v): v is number => v !== null);
    const missingReplies = admitted.reduce((n, r) => n + r.turns.filter((t) => t.latencyMs === null).length + (script.length - r.turns.length), 0);
    const greetings = results.flatMap((r) => (typeof r.greetingMs === 'number' ? [r.greetingMs] : []));
    const bargeInTurns = results.flatMap((r) => r.turns.filter((t) => t.kind === 'barge-in'));
    const bargeInLatencies = bargeInTurns.flatMap((t) => (typeof t.bargeInMs === 'number' ? [t.bargeInMs] : []));
    const bargeInSilences = bargeInTurns.flatMap((t) => (typeof t.silenceMs === 'number' ? [t.silenceMs] : []));

    // The platform's own view of each call, once the workflows have written everything.
    const expected = { greeting: GREETING, callerText: CALLER_TEXT, script };
    const checks = await Promise.all(results.map((r, i) => (r.refused ? null : checkCall(h, r, frames[i]!, expected))));
    const admittedChecks = checks.filter((c): c is NonNullable<typeof c> => c !== null);
    const okCalls = admittedChecks.filter((c) => c.ok).length;
    const metrics = admittedChecks.flatMap((c) => c.metrics);
    const metric = (p: string, field = 'ms') => metrics.filter((m) => m.processor === p).map((m) => Number(m[field]));

    const gwIdleCpu = monitor.cpuPercent('gateway', idleFrom, idleTo);
    const gwIdleRss = monitor.rss('gateway', idleFrom, idleTo).meanBytes;
    const gwCpu = monitor.cpuPercent('gateway', windowFrom, windowTo);
    const gwRss = monitor.rss('gateway', windowFrom, windowTo);
    const totals = frames.reduce((a, f) => ({ expected: a.expected + f.expected, received: a.received + f.received, dropped: a.dropped + f.dropped, late: a.late + f.late, maxGapMs: Math.max(a.maxGapMs, f.maxGapMs) }), { expected: 0, received: 0, dropped: 0, late: 0, maxGapMs: 0 });
    const offsets = await vadOffsets;
    // Call set-ups (webhooks, workflow starts, stream look-ups, greetings) crowd the ramp-up: its late frames apart.
    const rampupEnd = (connected.length ? lastConnected : started) + RAMPUP_TAIL_MS;
    const lateRampup = frames.reduce((n, f) => n + f.lateAt.filter((l) => l.atMs <= rampupEnd).length, 0);
    const p = (xs: number[], q: number) => fmtMs(percentile(xs, q));
    const windowSecs = (windowTo - windowFrom) / 1000;

    console.log(`\n## Results: ${N} simultaneous calls × ${K} turns + ${bargeIns} barge-in(s)\n`);
    console.log('| | measured | target |');
    console.log('|---|---|---|');
    console.log(
      `| calls connected at the same time | ${allAtOnce ? `${connected.length} (all of them for ${windowSecs.toFixed(1)} s)` : `not all at once (${connected.length} connected; some ended before the last connected: CPU and RSS over the whole ${windowSecs.toFixed(0)} s)`} | 50 |`,
    );
    console.log(
      `| turn latency, caller side, p50 / p95 / p99 / max (${latencies.length} turns) | ${p(latencies, 50)} / ${p(latencies, 95)} / ${p(latencies, 99)} / ${fmtMs(Math.max(...latencies))} | p50 ≤ 45 ms, p95 ≤ 120 ms |`,
    );
    console.log(`| greeting latency, caller side (stream opened → first greeting audio), p50 / p95 / max | ${p(greetings, 50)} / ${p(greetings, 95)} / ${fmtMs(Math.max(...greetings))} | |`);
    console.log(
      `| barge-in latency, caller side (speech start over the agent → \`clear\` received), p50 / p95 / max (${bargeInLatencies.length} of ${bargeInTurns.length}) | ${p(bargeInLatencies, 50)} / ${p(bargeInLatencies, 95)} / ${fmtMs(Math.max(...bargeInLatencies))} | |`,
      `| barge-in silence, caller side (speech start over the agent → the end of the last agent frame heard), p50 / p95 / max | ${p(bargeInSilences, 50)} / ${p(bargeInSilences, 95)} / ${fmtMs(Math.max(...bargeInSilences))} | |`,
    );
    console.log(`| gateway CPU, idle → ${N} calls | ${pct(gwIdleCpu)} → ${pct(gwCpu)} of one core (${pct((gwCpu - gwIdleCpu) / N)} per call) | |`);
    console.log(`| gateway RSS, idle → peak with ${N} calls | ${mb(gwIdleRss)} → ${mb(gwRss.peakBytes)} (${mb((gwRss.peakBytes - gwIdleRss) / N)} per call) | ≤ 15 MB per call |`);
    console.log(`| dropped frames | ${totals.dropped} of ${totals.expected} (${totals.received} received) | 0 |`);
    console.log(`| late frames (gaps > ${LATE_GAP_MS} ms inside an utterance) | ${totals.late} (largest gap ${fmtMs(totals.maxGapMs)}) | |`);
    console.log(`| late frames during ramp-up (first call placed → ${RAMPUP_TAIL_MS / 1000} s after the last connected) | ${lateRampup} | 0 |`);
    console.log(`| calls completed correctly | ${okCalls} / ${admitted.length} admitted${refused ? ` (${refused} of ${N} refused at admission: no gateway had room)` : ''} | ${admitted.length} |`);
    const busyAnswers = results.reduce((n, r) => n + (r.busyAnswers ?? 0), 0);
    if (redial) console.log(`| busy answers (a caller answered busy dials again after ${RETRY_AFTER_SECS.gatewayFull} s, up to ${redial} times) | ${busyAnswers}; ${admitted.filter((r) => r.busyAnswers).length} calls got through on a redial | |`);
    console.log(`| the gateway's presence each second from the first call (s:calls/room@load(loop lag ms,CPU cores,hand-off lag), ! = not admitting) | ${admission.summary()} | |`);
    if (missingReplies) console.log(`| turns without an audible reply | ${missingReplies} | 0 |`);
    if (warm) {
      const warmTurn = warm.turns[0]?.latencyMs;
      console.log(`| the warm-up call before them (the first after start; not counted above): greeting, turn latency | ${warm.error ? `failed: ${warm.error}` : `${fmtMs(warm.greetingMs)}, ${fmtMs(warmTurn)}`} | |`);
    }

    console.log('\n### Where the time of a turn goes (p50 / p95 over all turns)\n');
    console.log('| step | p50 | p95 |');
    console.log('|---|---|---|');
    console.log(`| VAD: decides the caller stopped, after end of speech + ${VAD_STOP_SECS} s (offline, same model, 8 window phases) | ${p(offsets, 50)} | ${fmtMs(Math.max(...offsets))} (max) |`);
    console.log(`| STT: VAD stop → final transcript (\`ttfb_metric\` stt) | ${p(metric('stt'), 50)} | ${p(metric('stt'), 95)} |`);
    console.log(`| LLM: request → first token (\`ttfb_metric\` llm) | ${p(metric('llm'), 50)} | ${p(metric('llm'), 95)} |`);
    console.log(`| TTS: first sentence → first audio (\`ttfb_metric\` tts, replies and greetings) | ${p(metric('tts'), 50)} | ${p(metric('tts'), 95)} |`);
    console.log(`| gateway: VAD stop → first audio on the socket (\`ttfb_metric\` e2e after_vad_stop_ms) | ${p(metric('e2e', 'after_vad_stop_ms'), 50)} | ${p(metric('e2e', 'after_vad_stop_ms'), 95)} |`);
    console.log(`| caller side, as above | ${p(latencies, 50)} | ${p(latencies, 95)} |`);
    // By position in the call: the first turn follows the greeting, a barge-in follows a cut-off reply.
    for (const [label, pick] of [
      ['first turn after the greeting', (r: CallResult) => r.turns.slice(0, 1)],
      ['later turns', (r: CallResult) => r.turns.slice(1).filter((t) => t.kind !== 'barge-in')],
      ['turns that barged in', (r: CallResult) => r.turns.filter((t) => t.kind === 'barge-in')],
      // The ramp-up's set-ups crowd the machine: a turn taken then is slower wherever it falls in its call.
      ['first turn, spoken during the ramp-up', (r: CallResult) => r.turns.slice(0, 1).filter((t) => t.speechEndMs <= rampupEnd)],
      ['first turn, spoken after the ramp-up', (r: CallResult) => r.turns.slice(0, 1).filter((t) => t.speechEndMs > rampupEnd)],
      ['later turns, spoken during the ramp-up', (r: CallResult) => r.turns.slice(1).filter((t) => t.kind !== 'barge-in' && t.speechEndMs <= rampupEnd)],
    ] as const) {
      const xs = results.flatMap((r) => pick(r).flatMap((t) => (t.latencyMs === null ? [] : [t.latencyMs])));
      if (xs.length) console.log(`| caller side, ${label} (${xs.length}) | ${p(xs, 50)} | ${p(xs, 95)} |`);
    }
    // Per turn: what the callers measured beyond the gateway's own figure.
    const unseen = results.flatMap((r, i) => {
      const e2e = (checks[i]?.metrics ?? []).filter((m) => m.processor === 'e2e').map((m) => Number(m.after_vad_stop_ms));
      return r.turns.flatMap((t, k) => (t.latencyMs !== null && e2e[k] !== undefined ? [t.latencyMs - e2e[k]!] : []));
    });
    console.log(`| caller side − gateway figure, per turn (the VAD's decision point, audio queued in the gateway before the VAD, sockets) | ${p(unseen, 50)} | ${p(unseen, 95)} |`);
    const steps = admittedChecks.flatMap((c) => c.steps);
    printHandoffSteps(steps, p);

    printSetupSteps(admittedChecks.flatMap((c) => (c.setup ? [c.setup] : [])), p);

    let gw: GatewayFigures | null = null;
    if (metricsBefore && metricsAfter) gw = printGatewayMetrics(metricsBefore, metricsAfter);
    else console.log('\n(The gateway\'s /metrics could not be read: no breakdown from it.)');
    const q = (h: Parameters<typeof histogramQuantileMs>[0]) => `p50 ${fmtMs(histogramQuantileMs(h, 0.5))} / p95 ${fmtMs(histogramQuantileMs(h, 0.95))}`;
    if (gw) console.log(`\nBarge-in, gateway side (VAD start decision → \`clear\` sent): ${q(gw.bargeIn)} over ${gw.bargeIn.count}; VAD decision lag: start ${q(gw.vadLagStart)}, stop ${q(gw.vadLagStop)}`);

    printMachineUse({ monitor, calls: N, windowFrom, windowTo, rampupFrom: started, rampupTo: rampupEnd, host });
    console.log(`- event-loop delay of the callers' thread (their clock): p99 ${loopP99Ms.toFixed(0)} ms, max ${loopMaxMs.toFixed(0)} ms`);
    console.log(`- run: ${callsSecs.toFixed(0)} s of calls; command: npm run bench:voice -- --calls ${N} --turns ${K} --barge-ins ${bargeIns} --provider ${provider} --nice ${nice} --gateway-nice ${gatewayNiceNow} --warmup ${warmup} --temporal ${temporal}${knowledge ? ' --knowledge' : ''}`);
    if (kb) console.log(`- knowledge: ${await knowledgeTally((sql) => h.db.sequelize.query(sql))}`);
    const gatewayGc = metricsBefore && metricsAfter ? gatewayGcSummary(metricsBefore, metricsAfter) : null;
    const lateOwn = printStalls({ gc, stalls, gatewayGc, bargeInTurns, frames, results, startedMs: started, presenceAround: (secs) => admission.around(secs) });
    const cost = printCostReport(monitor, admitted, admittedChecks, started, started + callsSecs * 1000);
    const failed = checks.flatMap((c, i) => (c && !c.ok ? [{ i, ...c }] : []));
    if (failed.length) {
      console.log('\nCalls not completed correctly:');
      for (const f of failed.slice(0, 10)) console.log(`  call ${f.i}: ${f.why}\n    last events: ${f.tail}\n    workflow history ends: ${f.workflowTail}`);
    }
    const int = (v: number) => (Number.isFinite(v) ? String(Math.round(v)) : 'NA');
    summary =
      `SUMMARY calls=${N} turns=${latencies.length} completed=${okCalls} dropped=${totals.dropped} late=${totals.late} ` +
      `p50_ms=${int(percentile(latencies, 50))} p95_ms=${int(percentile(latencies, 95))} p99_ms=${int(percentile(latencies, 99))} ` +
      `greeting_p50_ms=${int(percentile(greetings, 50))} bargein_p50_ms=${int(percentile(bargeInLatencies, 50))} bargein_max_ms=${int(Math.max(...bargeInLatencies))} silence_max_ms=${int(Math.max(...bargeInSilences))} ` +
      `refused=${refused} busy=${busyAnswers} redial=${redial} orchestration_pct=${int(cost.orchestrationPercent)} late_rampup=${lateRampup} late_callers_gc=${lateOwn.gc} late_callers_stall=${lateOwn.stall} steal_pct=${int(host.stealPercent)} ` +
      `vad_start_lag_p95_ms=${gw ? int(histogramQuantileMs(gw.vadLagStart, 0.95)) : 'NA'} temporal=${temporal} knowledge=${kb ? kb.chunks : 0}`;
  } finally {
    for (const stop of stops) await stop().catch((err: Error) => console.error(`(stopping: ${err.message})`));
    await services.stop();
  }
  // Before the SUMMARY line, which stays last.
  if (profDir) console.log(`\nCPU profile of the ${cpuProf}, one file per thread (open in Chrome DevTools): ${profDir}`);
  // Last, alone on its line: for scripts comparing runs.
  if (summary) console.log(`\n${summary}`);
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    console.error(`\nbench:voice failed: ${err.stack ?? err.message}`);
    process.exit(1);
  },
);
