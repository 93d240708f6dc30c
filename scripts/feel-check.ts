/**
 * `npm run feel:check [-- --runs 5 --provider twilio,exotel,plivo,web]`: the turn-taking checks of
 * docs/media-gateway.md (Barge-in, Backchannels) run several times per telephony vendor, as
 * `npm run demo -- --scenario backchannel` plays them (scripts/lib/demo-backchannel.ts): a Hindi
 * caller's "Haan ji, theek hai" over a long reply (the agent pauses and resumes, nothing is
 * answered) and "Ruko, ek minute" (the agent stops and answers). Printed per run and per vendor:
 * how long after the caller's speech began the agent went quiet at the caller's ear, whether it
 * resumed, and when the interruption's clear came. Exits non-zero if any run missed.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { setLogLevel } from '../src/shared/logger';
import { startHarness } from '../test/support/harness';
import { runBackchannelDemo } from './lib/demo-backchannel';
import { startLocalServices } from './lib/local-services';
import { runScript } from './lib/run-script';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}

/** The bound of docs/media-gateway.md: the caller hears silence within the VAD's start plus this. */
const VAD_START_MS = 200;
const SILENCE_SLACK_MS = 40;

async function main(): Promise<void> {
  setLogLevel('error');
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const runs = Number(arg('runs', '5'));
  const providers = arg('provider', 'twilio,exotel,plivo,web').split(',');
  const services = await startLocalServices((l) => console.log(l));
  const rows: string[] = [];
  let misses = 0;
  try {
    for (const provider of providers) {
      for (let run = 1; run <= runs; run++) {
        const r = await runBackchannelDemo({ startPlatform: (env) => startHarness({ env, worker: true }), print: () => undefined, provider });
        const answeredAssent = (r.call.transcript as Array<{ role: string; text: string }>).findIndex((t) => t.text === 'Haan ji, theek hai.');
        const ok =
          r.assent.resumed &&
          // Only "ruko" interrupted (a pause's clear on Exotel is not an interruption).
          r.events.filter((e) => e.event_type === 'interruption').length === 1 &&
          r.assentSilenceMs <= VAD_START_MS + SILENCE_SLACK_MS &&
          r.waitSilenceMs <= VAD_START_MS + SILENCE_SLACK_MS &&
          r.waitClearMs !== null &&
          r.call.status === 'completed' &&
          answeredAssent >= 0;
        if (!ok) misses++;
        rows.push(
          `| ${provider} | ${run} | ${Math.round(r.assentSilenceMs)} ms | ${r.assent.resumed ? 'yes' : '**no**'} | ${Math.round(r.waitSilenceMs)} ms | ${r.waitClearMs === null ? '**none**' : `${Math.round(r.waitClearMs)} ms`} | ${ok ? 'ok' : '**miss**'} |`,
        );
        console.log(rows.at(-1));
      }
    }
  } finally {
    await services.stop();
  }
  console.log(`\n| vendor | run | "haan ji" → quiet at the ear | resumed | "ruko" → quiet at the ear | "ruko" → clear | |`);
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  console.log(`\n${rows.length - misses} of ${rows.length} runs within ${VAD_START_MS} + ${SILENCE_SLACK_MS} ms; command: npm run feel:check -- --runs ${runs} --provider ${providers.join(',')}`);
  if (misses) throw new Error(`${misses} run(s) missed`);
}

runScript(main);
