/**
 * bench:voice's cost tables: where the machine's CPU goes per call-second and per turn, process by
 * process, and what the calls cost Temporal (their workflow histories, temporal-cost.ts).
 */
import type { CallCheck } from './bench-checks';
import type { CallResult } from './bench-caller';
import type { ProcMonitor } from './proc-stats';
import { addCost, costRows, noCost } from './temporal-cost';

export interface CostFigures {
  /** CPU-ms per turn of the Temporal dev server and the call worker together. */
  orchestrationMsPerTurn: number;
  /** Temporal dev server + call worker, % of one core over the calls. */
  orchestrationPercent: number;
}

const PROCESSES = ['gateway', 'worker', 'temporal', 'api', 'bench', 'fakes'] as const;
const LABEL: Record<string, string> = { gateway: 'media gateway', worker: 'call worker', temporal: 'Temporal dev server', api: 'API', bench: 'simulated callers (bench)', fakes: 'vendor fakes', postgres: 'PostgreSQL' };

export function printCostReport(monitor: ProcMonitor, results: CallResult[], checks: CallCheck[], fromMs: number, toMs: number): CostFigures {
  const spanMs = toMs - fromMs;
  const callSecs = results.reduce((s, r) => s + (r.connectedAtMs !== undefined && r.hungUpAtMs !== undefined ? Math.max(0, r.hungUpAtMs - r.connectedAtMs) / 1000 : 0), 0);
  const turns = results.reduce((n, r) => n + r.turns.length, 0);
  const percentOf = (name: string) => (name === 'postgres' ? monitor.groupCpuPercent('postgres', fromMs, toMs) : monitor.cpuPercent(name, fromMs, toMs));
  const cpuMs = (name: string) => ((percentOf(name) || 0) / 100) * spanMs;
  const f = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : 'NA');
  console.log(`\n### What a call costs (${results.length} calls, ${f(callSecs)} call-seconds, ${turns} turns, over ${(spanMs / 1000).toFixed(0)} s)\n`);
  console.log('| process | CPU, % of one core | CPU-ms per call-second | CPU-ms per turn |');
  console.log('|---|---|---|---|');
  for (const name of [...PROCESSES, 'postgres']) {
    console.log(`| ${LABEL[name]} | ${f(percentOf(name))} | ${f(cpuMs(name) / callSecs)} | ${f(cpuMs(name) / turns)} |`);
  }
  const orchestrationMs = cpuMs('temporal') + cpuMs('worker');
  console.log(`| Temporal + call worker | ${f((orchestrationMs / spanMs) * 100)} | ${f(orchestrationMs / callSecs)} | ${f(orchestrationMs / turns)} |`);
  const total = checks.reduce((sum, c) => addCost(sum, c.cost), noCost());
  console.log(`\nTemporal, from the ${checks.filter((c) => c.cost.events).length} calls' workflow histories:\n`);
  for (const row of costRows(total, results.length, turns)) console.log(row);
  return { orchestrationMsPerTurn: orchestrationMs / turns, orchestrationPercent: (orchestrationMs / spanMs) * 100 };
}
