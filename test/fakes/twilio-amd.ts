/**
 * Twilio's asynchronous answering-machine detection, as the fake does it: a call created with
 * `MachineDetection` (`Enable` or `DetectMessageEnd`) and `AsyncAmd=true` connects at once, and the
 * result is POSTed (signed) to `AsyncAmdStatusCallback` with `CallSid`, `AccountSid`, `AnsweredBy`
 * and `MachineDetectionDuration` (ms). The test scripts who picks up and when Twilio would know:
 * `Enable` reports `machine_start` after `decidedMs`; `DetectMessageEnd` waits for the greeting's
 * end (`greetingEndMs`) and reports `machine_end_beep` (or `_silence` without a beep). A human is
 * `human` after `decidedMs` in both modes.
 */
export interface AmdScript {
  answeredBy: 'human' | 'machine' | 'fax' | 'unknown';
  /** When Twilio has decided, ms after the answer (Twilio: typically 2–4 s). */
  decidedMs: number;
  /** Machines: when the greeting ends (its beep), ms after the answer (DetectMessageEnd). */
  greetingEndMs?: number;
  /** Machines: whether the greeting ends with a beep (default true). */
  beep?: boolean;
}

const single = (v: string | string[] | undefined) => (Array.isArray(v) ? v[v.length - 1] : v);

/** Twilio's 400 for bad AMD parameters, or null. */
export function amdRequestProblem(form: Record<string, string | string[]>): string | null {
  const mode = single(form.MachineDetection);
  if (mode === undefined) return null;
  if (mode !== 'Enable' && mode !== 'DetectMessageEnd') return `MachineDetection must be Enable or DetectMessageEnd, got ${mode}`;
  const cb = single(form.AsyncAmdStatusCallback);
  if (cb !== undefined && !/^https?:\/\/\S+$/.test(cb)) return `AsyncAmdStatusCallback is not a valid URL: ${cb}`;
  return null;
}

export async function simulateAmd(
  call: { sid: string; accountSid: string; answeredAtMs?: number; endedAtMs?: number },
  form: Record<string, string | string[]>,
  script: { amd?: AmdScript },
  post: (url: string, params: Record<string, string>) => Promise<unknown>,
): Promise<void> {
  const mode = single(form.MachineDetection);
  const url = single(form.AsyncAmdStatusCallback);
  if (!mode || single(form.AsyncAmd) !== 'true' || !url) return;
  const amd = script.amd ?? { answeredBy: 'human', decidedMs: 1500 };
  const machine = amd.answeredBy === 'machine';
  const atMs = mode === 'DetectMessageEnd' && machine ? (amd.greetingEndMs ?? amd.decidedMs) : amd.decidedMs;
  const answeredAt = call.answeredAtMs ?? Date.now();
  await new Promise((r) => setTimeout(r, Math.max(0, answeredAt + atMs - Date.now())));
  if (call.endedAtMs) return;
  const answeredBy = !machine ? amd.answeredBy : mode === 'Enable' ? 'machine_start' : amd.beep === false ? 'machine_end_silence' : 'machine_end_beep';
  await post(url, { AccountSid: call.accountSid, CallSid: call.sid, AnsweredBy: answeredBy, MachineDetectionDuration: String(atMs) });
}
