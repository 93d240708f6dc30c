/**
 * `npm run bench:campaign [-- --provider twilio|plivo --contacts N --max-concurrent C --talk-ms T
 * --inbound K --limit-minutes M]` (defaults twilio, 1000, 20, 1500, 3, 20): one campaign of N
 * contacts through the telephony vendor's fake, on the platform's own processes — the API
 * (`src/api/main.ts`, which the fake's webhooks reach), the worker running the campaign and call
 * workflows (`test/support/worker-process.ts`, as `npm run worker`), a Temporal dev server and
 * PostgreSQL found or started as the tests do (scripts/lib/local-services.ts).
 *
 * The list (scripts/lib/campaign-bench-list.ts): ~2 % invalid rows, ~3 % on the do-not-call list,
 * ~8 % never answer (ring 2 s), ~5 % busy once then answer, ~1 % fail, the rest answer and hang up
 * after T ms; retries: 3 attempts on no_answer and busy, 5 s apart; a calling window open now;
 * calls_per_minute 600 (the API's maximum). The provider's lines are C + 4, `reserved_inbound` 4:
 * K inbound calls arrive through the fake a third of the way in and stay up 20 s.
 *
 * Checked (exit 1 when any fails), with the fake's dial log as the judge: every attempt dialled
 * once; each contact dialled exactly as the retry rules say and in its expected final state; no
 * do-not-call or invalid row dialled; the fake's outbound legs (sampled every 250 ms) never more
 * than C; while the inbound calls are up (after 4 s for calls already up to end), outbound plus
 * inbound never more than the lines less reserved_inbound; every inbound call carried (its stream up
 * for the whole 20 s). The last
 * line is `SUMMARY …`, for comparing runs.
 */
import os from 'node:os';
import { parse } from 'csv-parse/sync';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { Op } from 'sequelize';
import { setLogLevel } from '../src/shared/logger';
import { getFreePort } from '../src/temporal/dev-server';
import { startHarness, type Harness } from '../test/support/harness';
import { harnessEnv } from '../test/support/worker-process-control';
import { spawnUntil, stopProcess } from './lib/bench-processes';
import { startLocalServices } from './lib/local-services';
import { childPids, cores, ProcMonitor } from './lib/proc-stats';
import { startBenchPhone } from './lib/campaign-bench-phone';
import { benchContacts, judge, outcomeFor, expectedDials, type ExportedRow, type RetryRules } from './lib/campaign-bench-list';
import { ConcurrencySampler } from './lib/campaign-bench-sampler';

const OUR_NUMBER = '+15005550006';
const KEY = 'bench-key';
const AGENT = 'bench-campaign-bot';
const RESERVED = 4;
const INBOUND_HOLD_MS = 20_000;
const NO_ANSWER_RING_MS = 2000;
const RULES: RetryRules = { maxAttempts: 3, retryOn: ['no_answer', 'busy'] };
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function args(argv: string[]) {
  const value = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? (argv[i + 1] ?? '') : null;
  };
  const int = (name: string, def: number, min = 1) => {
    const v = value(name) === null ? def : Number(value(name));
    if (!Number.isInteger(v) || v < min) throw new Error(`--${name} must be an integer from ${min} up`);
    return v;
  };
  return {
    provider: value('provider') ?? 'twilio',
    contacts: int('contacts', 1000),
    maxConcurrent: int('max-concurrent', 20),
    talkMs: int('talk-ms', 1500),
    inbound: int('inbound', 3, 0),
    limitMinutes: int('limit-minutes', 20),
  };
}

/** A window around now (UTC, end excluded) long enough for the run: the list is called "inside calling hours", not at any time. */
function openWindow(limitMinutes: number) {
  const hhmm = (d: Date) => d.toISOString().slice(11, 16);
  const now = Date.now();
  const start = new Date(Math.max(now - 5 * 60_000, new Date().setUTCHours(0, 0, 0, 0)));
  const endMs = Math.min(now + (limitMinutes + 5) * 60_000, new Date().setUTCHours(23, 59, 0, 0));
  return { windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: hhmm(start), end: hhmm(new Date(endMs)) }] };
}

async function main(): Promise<number> {
  const a = args(process.argv.slice(2));
  setLogLevel('warn');
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const load0 = os.loadavg();
  console.log(`Campaign benchmark: ${a.contacts} contacts through the ${a.provider} fake, max_concurrent ${a.maxConcurrent}, on ${cores()} cores (load ${load0.map((l) => l.toFixed(2)).join(' ')})\n\nStarting:`);
  const services = await startLocalServices((l) => console.log(l));
  const stops: Array<() => Promise<void>> = [];
  const watchdog = setTimeout(() => {
    console.error(`bench:campaign: still running after ${a.limitMinutes} minutes; giving up`);
    void (async () => {
      for (const stop of stops) await stop().catch(() => undefined);
      await services.stop();
    })().finally(() => process.exit(2));
  }, a.limitMinutes * 60_000);
  watchdog.unref();
  let exitCode = 1;
  let summary = '';
  try {
    const phone = await startBenchPhone(a.provider, a.talkMs);
    stops.push(() => phone.stop());
    // The speech and LLM vendors only need to exist for the outbound path's checks: no audio runs.
    const fakes = await spawnUntil('vendor fakes', 'scripts/lib/vendor-fakes-process.ts', { BENCH_VENDOR_KEY: KEY }, /fakes ready (\{.*\})/);
    stops.push(() => stopProcess(fakes.child));
    const urls = JSON.parse(fakes.match[1]!) as { deepgram: string; cartesia: string; openai: string };
    const vendorEnv = { DEEPGRAM_API_KEY: KEY, DEEPGRAM_BASE_URL: urls.deepgram, CARTESIA_API_KEY: KEY, CARTESIA_BASE_URL: urls.cartesia, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: urls.openai };
    // This process's API configures and reads back; the spawned one carries the fake's webhooks.
    const h: Harness = await startHarness({ env: vendorEnv });
    stops.unshift(() => h.stop());
    const platformEnv = {
      ...harnessEnv(h),
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
      // The stand-in publishes no gateway presence: calls are admitted on the provider's lines only.
      GATEWAY_ADMISSION: 'off',
      GATEWAY_PUBLIC_URL: phone.mediaUrl,
      ...vendorEnv,
      ...phone.env,
    };
    const { child: worker } = await spawnUntil('worker', 'test/support/worker-process.ts', platformEnv, /worker ready/);
    stops.unshift(() => stopProcess(worker));
    const apiPort = await getFreePort();
    const { child: apiProcess } = await spawnUntil('API', 'src/api/main.ts', { ...platformEnv, PORT: String(apiPort), HOST: '127.0.0.1' }, /API\s+http/);
    stops.unshift(() => stopProcess(apiProcess));
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    phone.setApiUrl(apiUrl);
    console.log(`  Platform     API ${apiUrl} (pid ${apiProcess.pid}), worker pid ${worker.pid}; ${a.provider} fake ${Object.values(phone.env).join(' ')}, media stand-in ${phone.mediaUrl}`);

    const api = async (method: string, p: string, body?: unknown) => {
      const res = await h.request(method, p, { body });
      if (res.status >= 300) throw new Error(`${method} ${p} → ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const lines = a.maxConcurrent + RESERVED;
    await api('PUT', '/api/settings/telephony', { provider: a.provider, public_base_url: apiUrl, ...phone.settings(OUR_NUMBER, lines) });
    await api('POST', '/api/agents', { name: AGENT, prompt: 'You remind people of their appointment. Be brief.', greeting: 'Hello, a quick reminder.' });
    const endpoint = await api('POST', '/api/settings/endpoints', { phone_number: OUR_NUMBER, provider: a.provider, inbound_agent_name: AGENT });

    const contacts = benchContacts(a.contacts);
    const callee = new Map(contacts.map((c) => [c.phone, c.callee]));
    for (const c of contacts) if (c.callee !== 'invalid') phone.setOutcome(c.phone, outcomeFor(c.callee, 0), c.callee === 'no-answer' ? NO_ANSWER_RING_MS : undefined);
    await api('POST', '/api/do-not-call', { phone_numbers: contacts.filter((c) => c.callee === 'dnc').map((c) => c.phone) });
    const expectedAttempts = contacts.reduce((n, c) => n + expectedDials(c.callee, RULES), 0);

    const temporalPid = childPids(process.pid, 'temporal')[0];
    const monitor = new ProcMonitor({ worker: worker.pid!, api: apiProcess.pid!, bench: process.pid, ...(temporalPid ? { temporal: temporalPid } : {}) }, ['postgres']);
    monitor.start(1000);
    const csv = ['phone,name', ...contacts.map((c, i) => `${c.phone},Person ${i}`)].join('\n');
    const started = Date.now();
    const created = await api('POST', '/api/campaigns', {
      name: `bench ${a.contacts}`,
      agent_name: AGENT,
      timezone: 'UTC',
      contacts_csv: csv,
      schedule: openWindow(a.limitMinutes),
      pacing: { max_concurrent: a.maxConcurrent, calls_per_minute: 600, reserved_inbound: RESERVED },
      retry: { max_attempts: RULES.maxAttempts, retry_on: RULES.retryOn, min_interval_secs: 5 },
    });
    const id = created.id as string;
    console.log(`  Campaign     ${id}: ${created.upload.added} added, ${created.upload.skipped_dnc} do-not-call, ${created.upload.invalid_count} invalid; ${expectedAttempts} attempts expected by the rules`);

    // A busy-once callee answers from its second dial on: switched as soon as the fake logged the first.
    const switched = new Set<string>();
    const sampler = new ConcurrencySampler({
      liveLegs: () => phone.liveLegs(),
      platformLive: () => h.db.models.Call.count({ where: { status: { [Op.in]: ['ringing', 'in_progress'] }, metadata: { campaign_id: id } } }),
      onTick: () => {
        for (const d of phone.dialLog()) {
          if (callee.get(d.to) === 'busy-then-answer' && !switched.has(d.to)) {
            switched.add(d.to);
            phone.setOutcome(d.to, 'answer');
          }
        }
      },
    });
    sampler.start();

    // The inbound calls, a third of the way in.
    const inbound = (async () => {
      while (phone.dialLog().length < expectedAttempts / 3) await sleep(250);
      const webhookUrl = endpoint.inbound_webhook_url as string;
      const statusUrl = `${apiUrl}/telephony/${a.provider}/status`;
      sampler.inboundStarted();
      const calls = await Promise.all(
        Array.from({ length: a.inbound }, (_, k) => phone.ringInbound({ webhookUrl, statusUrl, from: `+1650555${String(1000 + k)}`, to: OUR_NUMBER, holdMs: INBOUND_HOLD_MS })),
      );
      sampler.inboundEnded();
      return calls;
    })();

    let last = 0;
    let campaign: any;
    for (;;) {
      campaign = await api('GET', `/api/campaigns/${id}`);
      if (['completed', 'cancelled', 'stopped', 'paused'].includes(campaign.status)) break;
      if (Date.now() - last > 15_000) {
        last = Date.now();
        const s = campaign.progress;
        console.log(`  … ${Math.round((Date.now() - started) / 1000)} s: ${phone.dialLog().length} dials, in flight ${s.attempts_in_flight}, done ${s.by_state.done}, failed ${s.by_state.failed}, retry_wait ${s.by_state.retry_wait}, pending ${s.by_state.pending}`);
      }
      await sleep(1000);
    }
    const endedAt = Date.now();
    const inboundCalls = a.inbound ? await inbound : [];
    sampler.stop();
    monitor.stop();
    const wallSecs = campaign.started_at && campaign.ended_at ? (Date.parse(campaign.ended_at) - Date.parse(campaign.started_at)) / 1000 : (endedAt - started) / 1000;

    const exported = parse((await h.request('GET', `/api/campaigns/${id}/contacts.csv`)).body as string, { columns: true }) as ExportedRow[];
    const log = phone.dialLog();
    const verdict = judge(contacts, RULES, log, exported);
    const failures = [...verdict.failures];
    if (campaign.status !== 'completed') failures.push(`the campaign ended ${campaign.status} (${campaign.status_reason ?? ''})`);
    if (verdict.dncOrInvalidDialled) failures.push(`${verdict.dncOrInvalidDialled} dials to do-not-call or invalid rows`);
    const s = sampler.result();
    if (s.maxOutbound > a.maxConcurrent) failures.push(`${s.maxOutbound} outbound legs at once, max_concurrent ${a.maxConcurrent}`);
    if (s.maxPlatform > a.maxConcurrent) failures.push(`${s.maxPlatform} campaign calls ringing or in progress at once (platform), max_concurrent ${a.maxConcurrent}`);
    if (s.maxLinesDuringInbound > lines - RESERVED) failures.push(`${s.maxLinesDuringInbound} lines in use while inbound calls were up, ${lines} − reserved ${RESERVED} allowed`);
    const carried = inboundCalls.filter((c) => c.carried).length;
    if (carried < a.inbound) failures.push(`inbound calls carried ${carried} of ${a.inbound}: ${inboundCalls.map((c) => c.detail).join(', ')}`);

    // The campaign workflow's runs: continue-as-new starts a new run under the same workflow id.
    let runs = 0;
    let history = 0;
    for await (const run of h.temporal.workflow.list({ query: `WorkflowId = "${created.workflow_id}"` })) {
      runs++;
      history += run.historyLength;
    }
    const cpuSecs = (name: string) => (monitor.cpuPercent(name, started, endedAt) * ((endedAt - started) / 1000)) / 100;
    const peakMb = (name: string) => monitor.rss(name, started, endedAt).peakBytes / 1024 / 1024;
    const load1 = os.loadavg();
    const fmt = (o: Record<string, number>) => Object.entries(o).map(([k, v]) => `${k}:${v}`).join(',');

    console.log(`\n## Results\n`);
    console.log(`- contacts ${a.contacts}: by state ${fmt(verdict.byState)}; last outcome ${fmt(verdict.byOutcome)}`);
    console.log(`- dials ${log.length} (${verdict.uniqueAttempts} distinct attempts) to ${verdict.dialled} numbers; retries ${verdict.retries}; the rules expected ${expectedAttempts}`);
    console.log(`- do-not-call / invalid rows dialled: ${verdict.dncOrInvalidDialled}`);
    console.log(`- concurrency, sampled every 250 ms: fake's outbound legs max ${s.maxOutbound}, platform's campaign calls max ${s.maxPlatform} (limit ${a.maxConcurrent}); while ${a.inbound} inbound were up: lines max ${s.maxLinesDuringInbound} (${lines} − ${RESERVED} reserved = ${lines - RESERVED}), outbound max ${s.maxOutboundDuringInbound}`);
    console.log(`- inbound calls carried ${carried} of ${a.inbound} (${inboundCalls.map((c) => c.detail).join(', ')})`);
    console.log(`- campaign wall time ${wallSecs.toFixed(0)} s (started_at → ended_at), ${(log.length / (wallSecs / 60)).toFixed(0)} dials per minute`);
    console.log(`- CPU seconds over the run: worker ${cpuSecs('worker').toFixed(1)}, API ${cpuSecs('api').toFixed(1)}, Temporal ${temporalPid ? cpuSecs('temporal').toFixed(1) : 'NA'}, PostgreSQL ${((monitor.groupCpuPercent('postgres', started, endedAt) * (endedAt - started)) / 100_000).toFixed(1)}, this process ${cpuSecs('bench').toFixed(1)}; peak RSS worker ${peakMb('worker').toFixed(0)} MB, API ${peakMb('api').toFixed(0)} MB`);
    console.log(`- campaign workflow: ${runs} run(s) (${runs - 1} continue-as-new), ${history} history events in all`);
    console.log(`- load average before ${load0.map((l) => l.toFixed(2)).join(' ')}, after ${load1.map((l) => l.toFixed(2)).join(' ')} (${cores()} cores)`);
    if (failures.length) console.log(`\nFAILED:\n${failures.map((f) => `  - ${f}`).join('\n')}`);
    exitCode = failures.length ? 1 : 0;
    summary =
      `SUMMARY provider=${a.provider} contacts=${a.contacts} status=${campaign.status} dialled_numbers=${verdict.dialled} dials=${log.length} expected_dials=${expectedAttempts} retries=${verdict.retries} ` +
      `done=${verdict.byState.done ?? 0} failed=${verdict.byState.failed ?? 0} answered=${verdict.byOutcome.answered ?? 0} no_answer=${verdict.byOutcome.no_answer ?? 0} busy=${verdict.byOutcome.busy ?? 0} failed_outcome=${verdict.byOutcome.failed ?? 0} ` +
      `dnc=${verdict.byState.skipped_dnc ?? 0} invalid=${verdict.byState.invalid ?? 0} dnc_invalid_dialled=${verdict.dncOrInvalidDialled} max_concurrent=${s.maxOutbound}/${a.maxConcurrent} platform_max=${s.maxPlatform} ` +
      `lines_during_inbound=${s.maxLinesDuringInbound}/${lines - RESERVED} inbound_carried=${carried}/${a.inbound} wall_s=${wallSecs.toFixed(0)} dials_per_min=${(log.length / (wallSecs / 60)).toFixed(0)} ` +
      `worker_cpu_s=${cpuSecs('worker').toFixed(1)} api_cpu_s=${cpuSecs('api').toFixed(1)} worker_rss_mb=${peakMb('worker').toFixed(0)} api_rss_mb=${peakMb('api').toFixed(0)} ` +
      `wf_runs=${runs} wf_history=${history} load1=${load1[0]!.toFixed(2)} failures=${failures.length}`;
  } finally {
    for (const stop of stops) await stop().catch((err: Error) => console.error(`(stopping: ${err.message})`));
    await services.stop();
  }
  if (summary) console.log(`\n${summary}`);
  return exitCode;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`\nbench:campaign failed: ${err.stack ?? err.message}`);
    process.exit(1);
  },
);
