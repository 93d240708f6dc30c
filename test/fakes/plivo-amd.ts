/**
 * Plivo's machine detection, as the fake does it (Make Call API): `machine_detection` is `true`
 * (detect and report) or `hangup` (Plivo hangs up on a machine); `machine_detection_time`, 2000–10000
 * ms (default 5000), bounds how long Plivo listens; with `machine_detection_url` the detection is
 * asynchronous and its result is POSTed there (signed like every callback) with the call's usual
 * parameters and `Machine` = `true` / `false`. Without a URL it is synchronous: no XML is processed
 * during the analysis, then the answer URL is requested with `Machine`. The test scripts who picks
 * up and when Plivo knows.
 */
import type { FakePlivoCall, PlivoAmdScript } from './plivo-fake-types';

const DEFAULT_DETECTION_MS = 5000;

export function plivoAmdProblem(body: Record<string, unknown>): string | null {
  const mode = body.machine_detection;
  if (mode === undefined) return null;
  if (mode !== 'true' && mode !== 'hangup' && mode !== true) return `machine_detection must be true or hangup, got ${String(mode)}`;
  const time = body.machine_detection_time;
  if (time !== undefined && (!Number.isInteger(Number(time)) || Number(time) < 2000 || Number(time) > 10000)) {
    return 'machine_detection_time must be an integer between 2000 and 10000';
  }
  const url = body.machine_detection_url;
  if (url !== undefined && (typeof url !== 'string' || !/^https?:\/\/\S+$/.test(url))) return 'machine_detection_url is not a valid URL';
  return null;
}

export async function simulatePlivoAmd(
  call: FakePlivoCall,
  script: PlivoAmdScript | undefined,
  post: (url: string, params: Record<string, string>) => Promise<unknown>,
): Promise<void> {
  const url = call.params.machine_detection_url;
  if (call.params.machine_detection === undefined || typeof url !== 'string') return;
  const limit = Number(call.params.machine_detection_time ?? DEFAULT_DETECTION_MS);
  const amd = script ?? { machine: false, decidedMs: 1500 };
  const atMs = Math.min(amd.decidedMs, limit);
  const answeredAt = call.answeredAtMs ?? Date.now();
  await new Promise((r) => setTimeout(r, Math.max(0, answeredAt + atMs - Date.now())));
  if (call.endedAtMs) return;
  await post(url, { Machine: amd.machine ? 'true' : 'false' });
}

/**
 * Synchronous detection (`machine_detection` without `machine_detection_url`): waits out the
 * analysis and returns the `Machine` parameter the answer URL request carries; null when the call
 * asked for no synchronous detection.
 */
export async function syncPlivoAmd(call: FakePlivoCall, script: PlivoAmdScript | undefined): Promise<{ Machine: string } | null> {
  if (call.params.machine_detection === undefined || call.params.machine_detection_url !== undefined) return null;
  if (call.params.machine_detection === 'hangup') call.errors.push('machine_detection=hangup without machine_detection_url is not simulated by the fake');
  const limit = Number(call.params.machine_detection_time ?? DEFAULT_DETECTION_MS);
  const amd = script ?? { machine: false, decidedMs: 1500 };
  await new Promise((r) => setTimeout(r, Math.min(amd.decidedMs, limit)));
  return { Machine: amd.machine ? 'true' : 'false' };
}
