/**
 * Finds the Temporal CLI (which contains the dev server and Web UI), building it with Go when it
 * is missing. Order: TEMPORAL_CLI_PATH, `temporal` on PATH, ~/go/bin/temporal, then `go install`.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../shared/logger';

// v1.5.1 is the newest tag whose go.mod has no replace directive, so `go install` can build it.
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

function onPath(binary: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, binary);
    if (dir && fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

function goBinary(): string | undefined {
  return onPath('go') ?? (fs.existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
}

function goBinDir(go: string): string {
  const gobin = execFileSync(go, ['env', 'GOBIN'], { encoding: 'utf8' }).trim();
  if (gobin) return gobin;
  return path.join(execFileSync(go, ['env', 'GOPATH'], { encoding: 'utf8' }).trim().split(path.delimiter)[0]!, 'bin');
}

export function findTemporalCli(explicitPath?: string): string | undefined {
  if (explicitPath) {
    if (!fs.existsSync(explicitPath)) throw new Error(`TEMPORAL_CLI_PATH=${explicitPath} does not exist`);
    return explicitPath;
  }
  const fromPath = onPath('temporal');
  if (fromPath) return fromPath;
  const home = path.join(os.homedir(), 'go', 'bin', 'temporal');
  if (fs.existsSync(home)) return home;
  const go = goBinary();
  if (go) {
    const built = path.join(goBinDir(go), 'temporal');
    if (fs.existsSync(built)) return built;
  }
  return undefined;
}

/** Builds the CLI with `go install`, streaming Go's progress so a first start does not look hung. */
export async function installTemporalCli(log: Logger): Promise<string> {
  const go = goBinary();
  if (!go) {
    throw new Error(
      'The Temporal CLI was not found and Go is not installed to build it. Install it from https://temporal.io/setup/install-temporal-cli or set TEMPORAL_CLI_PATH, or point TEMPORAL_ADDRESS at a running server.',
    );
  }
  log.info(`building the Temporal CLI with "go install ${TEMPORAL_CLI_MODULE}" (first start only, takes a few minutes)`);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(go, ['install', TEMPORAL_CLI_MODULE], { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`go install exited with ${code}`))));
  });
  const built = path.join(goBinDir(go), 'temporal');
  if (!fs.existsSync(built)) throw new Error(`go install finished but ${built} is missing`);
  return built;
}

export async function ensureTemporalCli(explicitPath: string | undefined, log: Logger): Promise<string> {
  return findTemporalCli(explicitPath) ?? (await installTemporalCli(log));
}
