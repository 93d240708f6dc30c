#!/usr/bin/env node
/**
 * Runs the test tiers of jest.config.js one after the other (docs/development.md, "How the tests
 * run"): `node scripts/run-tests.js [tier ...] [jest arguments]`, every tier by default.
 * A tier is one jest run, or several side by side (the timed tier: its timed files two at a time,
 * and beside them its durability files one at a time). A failing tier does not stop the next ones,
 * and the run ends with every run's figures, their sum in jest's own words, and a non-zero exit
 * when any failed.
 * `--typecheck` (npm test) runs `tsc --noEmit` beside the first tier rather than before it: one
 * core of type-checking next to the unit tier's two workers costs the tier less than the ~45 s
 * tsc takes alone. Its result is one more line of the summary, and a failure fails the run.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const JEST = path.join(__dirname, '..', 'node_modules', 'jest', 'bin', 'jest.js');
const TSC = path.join(__dirname, '..', 'node_modules', 'typescript', 'bin', 'tsc');

/** Each tier's jest runs: a run's name (its report's) and its arguments. */
const TIERS = {
  // No PostgreSQL or Temporal: both cores.
  unit: [['unit', ['--selectProjects', 'unit', '--maxWorkers=2']]],
  // Mostly waiting on timers, sockets and other processes: three files at a time on two cores.
  integration: [['integration', ['--selectProjects', 'integration', '--maxWorkers=3']]],
  // Files that time real-time audio, and the browser tests: two at a time (one after the other
  // they took 1,095 s in CI). Beside them, one at a time, the files that kill and restart
  // processes and mostly wait (an outage, heartbeat timeouts): each run has its own Temporal
  // server and template database.
  timed: [
    ['timed', ['--selectProjects', 'timed', 'browser', '--maxWorkers=2']],
    ['durability', ['--selectProjects', 'durability', '--maxWorkers=1']],
  ],
};

// Leading tier names, then jest's arguments (npm drops the `--` of `npm run test:unit -- …`).
const args = process.argv.slice(2);
const typecheck = args.includes('--typecheck');
const argv = args.filter((a) => a !== '--typecheck');
let first = 0;
while (first < argv.length && Object.hasOwn(TIERS, argv[first])) first++;
const names = argv.slice(0, first);
const extra = argv.slice(argv[first] === '--' ? first + 1 : first);
const chosen = names.length ? names : Object.keys(TIERS);
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-tiers-'));
const startedAt = Date.now();

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

async function main() {
  const tsc = typecheck ? startTypecheck(path.join(out, 'tsc.log')) : Promise.resolve(null);
  const results = [];
  for (const tier of chosen) results.push(...(await Promise.all(TIERS[tier].map(([name, own]) => runJest(name, own)))));
  finish(results, await tsc);
}

/** One jest run; resolves with its name, time, exit status and --json report. */
function runJest(name, tierArgs) {
  const json = path.join(out, `${name}.json`);
  const started = Date.now();
  // A --maxWorkers given on the command line replaces the run's (jest would keep the first).
  const own = extra.some((a) => a.startsWith('--maxWorkers')) ? tierArgs.filter((a) => !a.startsWith('--maxWorkers')) : tierArgs;
  console.log(`\n=== ${name}: jest ${own.join(' ')} ${extra.join(' ')}\n`);
  // An 8 GB heap: a run of many files grows (jest workers inherit the flag).
  const child = spawn(process.execPath, ['--max-old-space-size=8192', JEST, ...own, '--forceExit', '--json', `--outputFile=${json}`, ...extra], { stdio: 'inherit' });
  return new Promise((resolve) => {
    child.on('close', (code) => {
      let report;
      try {
        report = JSON.parse(fs.readFileSync(json, 'utf8'));
      } catch {
        report = undefined;
      }
      resolve({ name, seconds: (Date.now() - started) / 1000, status: code ?? 1, report });
    });
  });
}

/** Starts `tsc --noEmit` in the background; resolves with its exit code, time and output. */
function startTypecheck(logFile) {
  const started = Date.now();
  const fd = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, [TSC, '-p', 'tsconfig.json', '--noEmit'], { stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  return new Promise((resolve) => {
    child.on('close', (code) => resolve({ code: code ?? 1, seconds: (Date.now() - started) / 1000, output: fs.readFileSync(logFile, 'utf8') }));
  });
}

function finish(results, typed) {
  // VAP_TEST_REPORTS=<dir> keeps each run's jest --json report (per-file times) there.
  if (process.env.VAP_TEST_REPORTS) fs.cpSync(out, process.env.VAP_TEST_REPORTS, { recursive: true });
  fs.rmSync(out, { recursive: true, force: true });

  if (typed) {
    if (typed.code !== 0) process.stdout.write(`\n=== typecheck (tsc --noEmit) failed:\n${typed.output}\n`);
    console.log(`\nTypecheck: tsc --noEmit ${typed.code === 0 ? 'passed' : 'FAILED'} in ${typed.seconds.toFixed(1)} s (beside the first tier)`);
  }
  const sum = (key) => results.reduce((n, r) => n + (r.report?.[key] ?? 0), 0);
  console.log('\nTiers:');
  for (const r of results) {
    const rep = r.report;
    const what = rep ? `${rep.numPassedTestSuites}/${rep.numTotalTestSuites} suites, ${rep.numPassedTests}/${rep.numTotalTests} tests passed` : 'no report';
    console.log(`  ${r.name.padEnd(12)} ${r.status === 0 ? 'passed' : 'FAILED'}  ${r.seconds.toFixed(1)} s  ${what}`);
    const slowest = (rep?.testResults ?? [])
      .map((t) => ({ file: path.relative(process.cwd(), t.name), s: (t.endTime - t.startTime) / 1000 }))
      .sort((a, b) => b.s - a.s)
      .slice(0, 5);
    if (slowest.length) console.log(`    slowest: ${slowest.map((t) => `${t.file} ${t.s.toFixed(0)} s`).join(', ')}`);
  }
  const failedSuites = sum('numFailedTestSuites');
  const failedTests = sum('numFailedTests');
  const part = (failed, passed, total) => [failed ? `${failed} failed` : '', `${passed} passed`, `${total} total`].filter(Boolean).join(', ');
  console.log(`Test Suites: ${part(failedSuites, sum('numPassedTestSuites'), sum('numTotalTestSuites'))}`);
  console.log(`Tests:       ${part(failedTests, sum('numPassedTests'), sum('numTotalTests'))}`);
  // Wall time: runs side by side count once.
  console.log(`Time:        ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  // The plain closing line any CI reads, whatever the runner: every tier's tests together.
  console.log(`Summary: ${sum('numPassedTests')} passed, ${failedTests} failed`);
  process.exit(results.every((r) => r.status === 0) && (!typed || typed.code === 0) ? 0 : 1);
}
