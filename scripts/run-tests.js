#!/usr/bin/env node
/**
 * Runs the test tiers of jest.config.js one after the other (docs/development.md, "How the tests
 * run"): `node scripts/run-tests.js [tier ...] [jest arguments]`, every tier by default.
 * Each tier is its own jest run; a failing tier does not stop the next ones, and the run ends with
 * every tier's figures, their sum in jest's own words, and a non-zero exit when any tier failed.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const JEST = path.join(__dirname, '..', 'node_modules', 'jest', 'bin', 'jest.js');

const TIERS = {
  // No PostgreSQL or Temporal: both cores.
  unit: ['--selectProjects', 'unit', '--maxWorkers=2'],
  // Mostly waiting on timers, sockets and other processes: three files at a time on two cores.
  integration: ['--selectProjects', 'integration', '--maxWorkers=3'],
  // Files that time real-time audio or restart processes, and the browser tests: two at a time
  // (one after the other they took 1,095 s in CI, two at a time 778 s here, all passing).
  timed: ['--selectProjects', 'timed', 'browser', '--maxWorkers=2'],
};

// Leading tier names, then jest's arguments (npm drops the `--` of `npm run test:unit -- …`).
const argv = process.argv.slice(2);
let first = 0;
while (first < argv.length && Object.hasOwn(TIERS, argv[first])) first++;
const names = argv.slice(0, first);
const extra = argv.slice(argv[first] === '--' ? first + 1 : first);
const chosen = names.length ? names : Object.keys(TIERS);

const out = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-tiers-'));
const results = [];
for (const name of chosen) {
  const json = path.join(out, `${name}.json`);
  const started = Date.now();
  console.log(`\n=== ${name} tier: jest ${TIERS[name].join(' ')} ${extra.join(' ')}\n`);
  // An 8 GB heap: a run of many files grows (jest workers inherit the flag).
  const run = spawnSync(
    process.execPath,
    ['--max-old-space-size=8192', JEST, ...TIERS[name], '--forceExit', '--json', `--outputFile=${json}`, ...extra],
    { stdio: 'inherit' },
  );
  const seconds = (Date.now() - started) / 1000;
  let report;
  try {
    report = JSON.parse(fs.readFileSync(json, 'utf8'));
  } catch {
    report = undefined;
  }
  results.push({ name, seconds, status: run.status ?? 1, report });
}
// VAP_TEST_REPORTS=<dir> keeps each tier's jest --json report (per-file times) there.
if (process.env.VAP_TEST_REPORTS) fs.cpSync(out, process.env.VAP_TEST_REPORTS, { recursive: true });
fs.rmSync(out, { recursive: true, force: true });

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
console.log(`Time:        ${results.reduce((n, r) => n + r.seconds, 0).toFixed(1)} s`);
// The plain closing line any CI reads, whatever the runner: every tier's tests together.
console.log(`Summary: ${sum('numPassedTests')} passed, ${failedTests} failed`);
process.exit(results.every((r) => r.status === 0) ? 0 : 1);
