/**
 * The benchmark's "rest of the machine" lines: each process's CPU while all calls were up and
 * during the ramp-up (set-ups crowd the machine), the host's busy and stolen time, the worker's RSS.
 */
import { cores, mb, pct, type ProcMonitor } from './proc-stats';

export interface MachineReportInputs {
  monitor: ProcMonitor;
  calls: number;
  /** All calls connected: the window the per-process CPU is averaged over. */
  windowFrom: number;
  windowTo: number;
  /** First call placed → 1 s after the last connected. */
  rampupFrom: number;
  rampupTo: number;
  host: { busyPercent: number; stealPercent: number };
}

export function printMachineUse({ monitor, calls, windowFrom, windowTo, rampupFrom, rampupTo, host }: MachineReportInputs): void {
  const cpuOf = (name: string) => monitor.cpuPercent(name, windowFrom, windowTo);
  const postgres = monitor.groupCpuPercent('postgres', windowFrom, windowTo);
  const all = ['gateway', 'worker', 'api', 'bench', 'fakes', 'temporal'].reduce((n, name) => n + (cpuOf(name) || 0), 0) + (postgres || 0);
  console.log('\n### The rest of the machine during the calls\n');
  console.log(
    `- CPU in % of one core (the machine has ${cores()}): gateway ${pct(cpuOf('gateway'))}, call worker ${pct(cpuOf('worker'))}, Temporal dev server ${pct(cpuOf('temporal'))}, ` +
      `PostgreSQL ${pct(postgres)}, API ${pct(cpuOf('api'))}, this process (${calls} callers on their thread, an API) ${pct(cpuOf('bench'))}, vendor fakes ${pct(cpuOf('fakes'))}: ${pct(all)} in all`,
  );
  const rampCpu = (name: string) => pct(monitor.cpuPercent(name, rampupFrom, rampupTo) || 0);
  console.log(
    `- CPU during the ramp-up (${((rampupTo - rampupFrom) / 1000).toFixed(0)} s): gateway ${rampCpu('gateway')}, call worker ${rampCpu('worker')}, Temporal ${rampCpu('temporal')}, ` +
      `PostgreSQL ${pct(monitor.groupCpuPercent('postgres', rampupFrom, rampupTo) || 0)}, API ${rampCpu('api')}, this process ${rampCpu('bench')}, vendor fakes ${rampCpu('fakes')}`,
  );
  console.log(`- the host over the whole run of calls: busy ${pct(host.busyPercent)}, stolen by the hypervisor ${pct(host.stealPercent)} (of ${cores() * 100} %)`);
  console.log(`- call worker RSS ${mb(monitor.rss('worker', windowFrom, windowTo).peakBytes)}`);
}
