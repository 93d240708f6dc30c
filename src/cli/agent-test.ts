/**
 * Runs an agent's test suite against a running platform, for CI pipelines (docs/agent-tests.md):
 *
 *   npm run agent-test -- --agent <name> [--url URL] [--api-key KEY] [--repeat N] [--concurrency N]
 *                         [--agent-version N] [--compare-version N] [--timeout-secs N]
 *
 * Prints one row per test and exits 0 when every test reached its pass threshold, 1 when one did
 * not (or the run did not complete), 2 on a usage, connection or API error.
 */
import { parseArgs } from 'node:util';
import type { TestRun, TestRunCreate } from '../../clients/typescript/src';
import { connect, unwrap } from './api-client';

export const EXIT_PASSED = 0;
export const EXIT_FAILED = 1;
export const EXIT_ERROR = 2;
const POLL_MS = 1000;
const DEFAULT_TIMEOUT_SECS = 1800;

interface Options {
  url: string;
  apiKey?: string;
  agent: string;
  body: TestRunCreate;
  timeoutSecs: number;
}

function options(argv: string[], env: NodeJS.ProcessEnv): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      agent: { type: 'string' },
      url: { type: 'string' },
      'api-key': { type: 'string' },
      repeat: { type: 'string' },
      concurrency: { type: 'string' },
      'agent-version': { type: 'string' },
      'compare-version': { type: 'string' },
      'timeout-secs': { type: 'string' },
    },
    strict: true,
  });
  if (!values.agent) throw new Error('--agent <name> is required');
  const int = (name: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    if (!/^\d+$/.test(value) || Number(value) < 1) throw new Error(`--${name} must be a positive integer`);
    return Number(value);
  };
  const body = Object.fromEntries(
    Object.entries({
      repeat: int('repeat', values.repeat),
      concurrency: int('concurrency', values.concurrency),
      agent_version: int('agent-version', values['agent-version']),
      compare_version: int('compare-version', values['compare-version']),
    }).filter(([, v]) => v !== undefined),
  ) as Record<string, number>;
  return {
    url: (values.url ?? env.VAP_API_URL ?? `http://localhost:${env.PORT ?? 8000}`).replace(/\/$/, ''),
    apiKey: values['api-key'] ?? env.VAP_API_KEY,
    agent: values.agent,
    body,
    timeoutSecs: int('timeout-secs', values['timeout-secs']) ?? DEFAULT_TIMEOUT_SECS,
  };
}

const percent = (rate: number | null) => (rate === null ? '-' : `${Math.round(rate * 100)}%`);

/** The results table: one row per test and version, then why failing attempts failed. */
export function resultTable(run: any): string {
  const rows = [['TEST', 'KIND', 'VERSION', 'PASS RATE', 'THRESHOLD', 'RESULT']];
  const notes: string[] = [];
  for (const test of run.tests) {
    for (const r of test.results) {
      rows.push([test.name, test.kind, `v${r.version}`, `${percent(r.pass_rate)} (${r.passed_attempts}/${r.attempts})`, percent(test.pass_threshold), r.passed ? 'PASS' : 'FAIL']);
    }
    const failed = (test.attempts ?? []).find((a: any) => a.passed === false && a.version === run.agent_version);
    if (failed) {
      const why = [
        ...(failed.result.error ? [failed.result.error] : []),
        ...(failed.result.expectations ?? []).filter((e: any) => !e.passed).map((e: any) => `${e.description}: ${e.detail}`),
        ...(failed.result.judge ?? []).filter((v: any) => !v.passed).map((v: any) => `judge: ${v.criterion}: ${v.reason}`),
      ];
      notes.push(`${test.name} (attempt ${failed.attempt}): ${why.join('; ') || 'failed'}`);
    }
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd());
  if (run.unmocked_tools.length) notes.push(`tools called without a mocked result: ${run.unmocked_tools.join(', ')}`);
  return [...lines, ...(notes.length ? ['', ...notes] : [])].join('\n');
}

export async function main(argv: string[], env: NodeJS.ProcessEnv, out: (line: string) => void): Promise<number> {
  let opts: Options;
  try {
    opts = options(argv, env);
  } catch (err) {
    out(`error: ${(err as Error).message}`);
    out('usage: npm run agent-test -- --agent <name> [--url URL] [--api-key KEY] [--repeat N] [--concurrency N] [--agent-version N] [--compare-version N] [--timeout-secs N]');
    return EXIT_ERROR;
  }
  try {
    const api = await connect(opts.url, opts.apiKey, env);
    const agents = await unwrap(api.GET('/api/agents'));
    const agent = agents.find((a) => a.name === opts.agent);
    if (!agent) throw new Error(`no agent named "${opts.agent}" at ${opts.url}`);
    let run: TestRun = await unwrap(api.POST('/api/agents/{agent_id}/test-runs', { params: { path: { agent_id: agent.id } }, body: opts.body }));
    out(`run ${run.id}: ${run.tests.length} tests × ${run.repeat} on ${agent.name} v${run.agent_version}${run.compare_version ? ` (compared with v${run.compare_version})` : ''}`);
    const deadline = Date.now() + opts.timeoutSecs * 1000;
    while (run.status === 'running') {
      if (Date.now() > deadline) throw new Error(`the run did not finish within ${opts.timeoutSecs} s`);
      await new Promise((r) => setTimeout(r, POLL_MS));
      run = await unwrap(api.GET('/api/test-runs/{run_id}', { params: { path: { run_id: run.id } } }));
    }
    out(resultTable(run));
    out(`run ${run.status}: ${run.passed ? 'every test passed' : 'some tests are below their pass threshold'}`);
    return run.status === 'completed' && run.passed ? EXIT_PASSED : EXIT_FAILED;
  } catch (err) {
    out(`error: ${(err as Error).message}`);
    return EXIT_ERROR;
  }
}

if (require.main === module) {
  main(process.argv.slice(2), process.env, (line) => console.log(line)).then((code) => process.exit(code));
}
