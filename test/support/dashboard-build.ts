import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/** Builds web/dist if it is missing or stale (a no-op after `npm test`'s pretest). */
export function ensureDashboardBuilt(): void {
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build-web.js')], { cwd: ROOT, stdio: 'inherit' });
}
