#!/usr/bin/env node
/**
 * Adds lockfile entries for platform-specific optional packages that the npm registry mirror of
 * our build machines does not serve (e.g. @swc/core-darwin-arm64). Without them `npm ci` stops
 * with "Missing: … from lock file"; with them, npm skips each one on other platforms (os/cpu) and
 * fetches it by version where it is needed. Run after `npm install` changes package-lock.json:
 *
 *   node scripts/lock-platform-stubs.js
 */
const fs = require('node:fs');
const path = require('node:path');

const lockPath = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const packages = lock.packages;

const OS = ['darwin', 'win32', 'linux', 'android', 'freebsd', 'openharmony', 'sunos', 'aix', 'netbsd', 'openbsd'];
const CPU = [
  ['arm64', 'arm64'], ['aarch64', 'arm64'], ['x64', 'x64'], ['ia32', 'ia32'], ['arm', 'arm'],
  ['ppc64', 'ppc64'], ['s390x', 's390x'], ['riscv64', 'riscv64'], ['loong64', 'loong64'], ['wasm32', 'wasm32'],
];

function platformOf(name) {
  const base = name.split('/').pop();
  const parts = base.split('-');
  const os = OS.find((o) => parts.includes(o));
  const cpu = CPU.find(([token]) => parts.includes(token))?.[1];
  const libc = parts.some((p) => p.startsWith('musl')) ? 'musl' : parts.some((p) => p.startsWith('gnu')) ? 'glibc' : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [location, entry] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const hoisted = `node_modules/${dep}`;
    const nested = `${location ? `${location}/` : ''}node_modules/${dep}`;
    if (packages[hoisted] || packages[nested]) continue;
    const { os, cpu, libc } = platformOf(dep);
    if (!os || !cpu) continue; // not a platform package: leave it to npm
    packages[hoisted] = { version, optional: true, os: [os], cpu: [cpu], ...(libc ? { libc: [libc] } : {}) };
    added++;
  }
}
fs.writeFileSync(lockPath, JSON.stringify(lock, null, 2) + '\n');
console.log(`added ${added} platform stub entries`);
