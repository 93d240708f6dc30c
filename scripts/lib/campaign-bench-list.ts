/**
 * The contact list of `npm run bench:campaign` and its judge: which callee does what (answers,
 * never answers, is busy once and then answers, fails), which rows are on the do-not-call list or
 * invalid, and — from the fake's dial log and the campaign's exported results — whether every
 * contact was dialled exactly as the retry rules say, and accounted for.
 */
import type { BenchOutcome, DialRecord } from './campaign-bench-phone';

export type Callee = 'answer' | 'no-answer' | 'busy-then-answer' | 'failed' | 'dnc' | 'invalid';

export interface BenchContact {
  phone: string;
  callee: Callee;
}

export interface RetryRules {
  maxAttempts: number;
  /** Of the platform's outcomes; the benchmark's callees map onto no_answer, busy, failed. */
  retryOn: string[];
}

/**
 * N rows: ~2 % invalid, ~3 % do-not-call, ~8 % never answer, ~5 % busy once then answer, ~1 %
 * fail, the rest answer. Spread by index so each kind is met throughout the run, not in one block.
 */
export function benchContacts(n: number): BenchContact[] {
  // Every 97th rather than 100th: each 100th row is already an invalid one (every 50th), which wins.
  const kinds: Array<[number, Callee]> = [[50, 'invalid'], [33, 'dnc'], [12, 'no-answer'], [20, 'busy-then-answer'], [97, 'failed']];
  return Array.from({ length: n }, (_, i) => {
    const callee = kinds.find(([every]) => i % every === every - 1)?.[1] ?? 'answer';
    // +1 415 55x xxxx: valid NANP numbers, distinct for up to 90 000 rows.
    const phone = callee === 'invalid' ? `not-a-number-${i}` : `+1415${String(5500000 + i).padStart(7, '0')}`;
    return { phone, callee };
  });
}

/** What the fake plays for a callee's next dial, given how often it was dialled already. */
export function outcomeFor(callee: Callee, dialledBefore: number): BenchOutcome {
  if (callee === 'no-answer') return 'no-answer';
  if (callee === 'failed') return 'failed';
  if (callee === 'busy-then-answer') return dialledBefore === 0 ? 'busy' : 'answer';
  return 'answer';
}

const PLATFORM_OUTCOME: Record<BenchOutcome, string> = { answer: 'answered', 'no-answer': 'no_answer', busy: 'busy', failed: 'failed' };

/** Dials the retry rules allow for a callee (the fake scripted by outcomeFor). */
export function expectedDials(callee: Callee, rules: RetryRules): number {
  if (callee === 'dnc' || callee === 'invalid') return 0;
  let n = 0;
  while (n < rules.maxAttempts) {
    const outcome = PLATFORM_OUTCOME[outcomeFor(callee, n)];
    n++;
    if (outcome === 'answered' || !rules.retryOn.includes(outcome)) break;
  }
  return n;
}

export const expectedState = (callee: Callee, rules: RetryRules): string =>
  callee === 'dnc' ? 'skipped_dnc' : callee === 'invalid' ? 'invalid' : PLATFORM_OUTCOME[outcomeFor(callee, expectedDials(callee, rules) - 1)] === 'answered' ? 'done' : 'failed';

export interface ExportedRow {
  phone_number: string;
  state: string;
  attempts: string;
  last_outcome: string;
  call_ids: string;
}

export interface Verdict {
  failures: string[];
  dialled: number;
  uniqueAttempts: number;
  retries: number;
  byOutcome: Record<string, number>;
  byState: Record<string, number>;
  dncOrInvalidDialled: number;
}

/** Judges the run: the fake's dial log against the list's rules and the campaign's export. */
export function judge(contacts: BenchContact[], rules: RetryRules, log: DialRecord[], exported: ExportedRow[]): Verdict {
  const failures: string[] = [];
  const fail = (why: string) => failures.length < 30 && failures.push(why);
  const byPhone = new Map<string, DialRecord[]>();
  for (const d of log) byPhone.set(d.to, [...(byPhone.get(d.to) ?? []), d]);
  const ids = new Map<string, number>();
  for (const d of log) ids.set(d.callId, (ids.get(d.callId) ?? 0) + 1);
  for (const [id, n] of ids) if (n > 1 || !id) fail(`attempt ${id || '(no call id in the answer URL)'} dialled ${n} times`);

  const listed = new Set(contacts.map((c) => c.phone));
  for (const phone of byPhone.keys()) if (!listed.has(phone)) fail(`${phone} dialled but not on the list`);
  const rows = new Map(exported.map((r) => [r.phone_number, r]));
  if (exported.length !== contacts.length) fail(`the export has ${exported.length} contacts, the list ${contacts.length}`);
  let dncOrInvalidDialled = 0;
  const byOutcome: Record<string, number> = {};
  const byState: Record<string, number> = {};
  for (const c of contacts) {
    const dials = byPhone.get(c.phone) ?? [];
    const row = rows.get(c.phone);
    if ((c.callee === 'dnc' || c.callee === 'invalid') && dials.length) dncOrInvalidDialled += dials.length;
    const want = expectedDials(c.callee, rules);
    if (dials.length !== want) fail(`${c.phone} (${c.callee}) dialled ${dials.length} times, the rules say ${want}`);
    if (!row) {
      fail(`${c.phone} (${c.callee}) missing from the export`);
      continue;
    }
    byState[row.state] = (byState[row.state] ?? 0) + 1;
    if (row.last_outcome) byOutcome[row.last_outcome] = (byOutcome[row.last_outcome] ?? 0) + 1;
    if (row.state !== expectedState(c.callee, rules)) fail(`${c.phone} (${c.callee}) ended ${row.state}, expected ${expectedState(c.callee, rules)}`);
    // The platform's ledger and the fake's log name the same attempts.
    const recorded = row.call_ids ? row.call_ids.split(' ').sort() : [];
    const seen = dials.map((d) => d.callId).sort();
    if (recorded.join() !== seen.join()) fail(`${c.phone}: the export's calls [${recorded.join(' ')}] ≠ the fake's dials [${seen.join(' ')}]`);
  }
  const dialled = [...byPhone.values()].filter((d) => d.length).length;
  return { failures, dialled, uniqueAttempts: ids.size, retries: log.length - dialled, byOutcome, byState, dncOrInvalidDialled };
}
