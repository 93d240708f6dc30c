#!/usr/bin/env node
/**
 * Builds the web dashboard (web/ → web/dist) when it is missing or stale; `npm start` and
 * `npm test` run this first (prestart/pretest), so the README's two commands stay the only set-up.
 *
 * The dashboard depends on its own sources and on the API's OpenAPI document (its typed client is
 * generated from it). Checking goes in two steps so that the usual case costs milliseconds:
 *  1. a hash of the files that could matter (web sources, src/, the lockfile) equal to the last
 *     build's → up to date;
 *  2. otherwise the OpenAPI document is regenerated from code; if it and the web sources are
 *     unchanged (a change elsewhere in src/), only the stamp is updated; else the build runs.
 *
 *   node scripts/build-web.js [--force]
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');
const WEB = path.join(ROOT, 'web');
const STAMP = path.join(WEB, 'dist', '.build-stamp.json');
const GENERATED = new Set([path.join(WEB, 'src', 'api', 'openapi.json'), path.join(WEB, 'src', 'api', 'schema.ts')]);

function filesUnder(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    // By name: in a git worktree node_modules may be a symlink, which isDirectory() does not see.
    if (entry.name === 'node_modules' || entry.name === 'dist') return [];
    if (entry.isDirectory()) return filesUnder(full);
    return GENERATED.has(full) ? [] : [full];
  });
}

function hashFiles(files) {
  const hash = crypto.createHash('sha256');
  for (const file of files.sort()) hash.update(path.relative(ROOT, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  return hash.digest('hex');
}

const webFiles = () => filesUnder(WEB);
const inputFiles = () => [...webFiles(), ...filesUnder(path.join(ROOT, 'src')), path.join(ROOT, 'scripts', 'write-openapi.ts'), path.join(ROOT, 'scripts', 'lib', 'openapi-document.ts'), path.join(ROOT, 'package-lock.json')];

function run(args) {
  const result = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function writeOpenApi() {
  const out = path.join(WEB, 'src', 'api', 'openapi.json');
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'write-openapi.ts'), out], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
  return fs.readFileSync(out);
}

function main() {
  const force = process.argv.includes('--force');
  const stamp = fs.existsSync(STAMP) ? JSON.parse(fs.readFileSync(STAMP, 'utf8')) : {};
  const inputs = hashFiles(inputFiles());
  if (!force && stamp.inputs === inputs && fs.existsSync(path.join(WEB, 'dist', 'index.html'))) return;

  const outputs = crypto.createHash('sha256').update(writeOpenApi()).update(hashFiles(webFiles())).digest('hex');
  if (!force && stamp.outputs === outputs && fs.existsSync(path.join(WEB, 'dist', 'index.html'))) {
    fs.writeFileSync(STAMP, JSON.stringify({ inputs, outputs }));
    return;
  }
  console.log('Building the web dashboard (web/ → web/dist)…');
  run(['run', 'build', '--workspace', 'web']);
  fs.writeFileSync(STAMP, JSON.stringify({ inputs, outputs }));
}

main();
