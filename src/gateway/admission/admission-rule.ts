/**
 * Whether this gateway admits new calls, and how many it can hold (docs/call-lifecycle.md, "Load,
 * admission and refusal"): a pure function of what the gateway measured this second and what it
 * remembers from the seconds before (the smoothed load, what a call costs). presence.ts measures,
 * calls it once a tick and writes what it returns; the rule itself is one table of cases
 * (test/unit/gateway-admission-rule.test.ts).
 *
 * It admits while the gateway is active, holds fewer than GATEWAY_MAX_CALLS, its settled load (the
 * smoothed load once the set-ups under way are over, room-estimate.ts) is under GATEWAY_MAX_LOAD,
 * and its calls' hand-off lag is under GATEWAY_MAX_HANDOFF_MS. The load is judged in three layers:
 * the process's own figures (`load`), its container's cgroup against its CPU quota (`cgroup_cpu`:
 * withCgroupCpu) and the machine's CPU (`host_cpu`: withHostCpu); a refusal names the first layer
 * that puts the load over the limit.
 *
 * The machine's CPU is a secondary signal: other programs use it too (the benchmark of another
 * stack on the same cores once had an idle gateway refuse every call), so it never counts inside a
 * cgroup with a quota (the quota is the gateway's share, not the node's cores), and below
 * GATEWAY_MIN_CALLS it never refuses: a gateway the machine's CPU alone would refuse admits and
 * offers up to GATEWAY_MIN_CALLS, as far as its own load leaves room.
 */
import { withCgroupCpu, withHostCpu, type LoadReading } from './load-meter';
import { learnCost, roomOf, settledLoadOf, UNLEARNT_COST, type CallCost } from './room-estimate';

/** Weight of the newest reading in the smoothed load: one busy second alone does not close the door. */
export const LOAD_SMOOTHING = 0.5;

export type GatewayState = 'active' | 'draining' | 'stopped';

/** Why a gateway admits no new call, the first that applies in this order. */
export type AdmissionRefusal = 'draining' | 'stopped' | 'max_calls' | 'load' | 'cgroup_cpu' | 'host_cpu' | 'handoff_lag';

export interface AdmissionLimits {
  /** GATEWAY_MAX_CALLS */
  maxCalls: number;
  /** GATEWAY_MAX_LOAD */
  maxLoad: number;
  /** GATEWAY_MAX_HOST_CPU: the machine's CPU that counts as a full gateway (above 1: never counts). */
  maxHostCpu?: number;
  /** GATEWAY_MAX_HANDOFF_MS: no new call while the hand-off lag is at least this (0: never). */
  maxHandoffMs?: number;
  /** GATEWAY_MIN_CALLS: below this many calls the machine's CPU never refuses (default 0). */
  minCalls?: number;
}

/** What the gateway measured over the last interval. */
export interface AdmissionInputs {
  state: GatewayState;
  /** The load meter's reading: the gateway's own load, its cgroup's and the machine's CPU share. */
  reading: LoadReading;
  /** Calls held now. */
  calls: number;
  /** Of those, the calls still being set up (connected within SETUP_SECS, room-estimate.ts). */
  settingUp: number;
  /** The longest a call waited for its workflow's first request over the interval (handoff-lag.ts). */
  handoffLagMs: number;
}

/** What the rule carries from one reading to the next. */
export interface AdmissionMemory {
  /** The smoothed load, its cgroup and the machine's CPU counted: what admission judges. */
  smoothedLoad: number;
  /** The same without the machine's CPU (the process and its cgroup): tells a `host_cpu` refusal from the others. */
  smoothedOwnLoad: number;
  /** The same of the process's own figures alone: tells a `load` refusal from a `cgroup_cpu` one. */
  smoothedProcessLoad: number;
  /** What one settled call costs, as learnt (room-estimate.ts). */
  cost: CallCost;
}

export const INITIAL_ADMISSION_MEMORY: AdmissionMemory = { smoothedLoad: 0, smoothedOwnLoad: 0, smoothedProcessLoad: 0, cost: UNLEARNT_COST };

export interface AdmissionDecision {
  admitting: boolean;
  /** Why not, when not admitting. */
  refusal: AdmissionRefusal | null;
  /** Calls it can hold now, counting those it holds; its calls when not admitting. */
  room: number;
  /** This interval's load with its cgroup and the machine's CPU counted. */
  load: number;
  smoothedLoad: number;
  /** The smoothed load once the set-ups under way are over. */
  settledLoad: number;
  /** For the next reading. */
  memory: AdmissionMemory;
}

const smooth = (old: number, sample: number) => old * (1 - LOAD_SMOOTHING) + sample * LOAD_SMOOTHING;

export function decideAdmission(memory: AdmissionMemory, inputs: AdmissionInputs, limits: AdmissionLimits): AdmissionDecision {
  const { state, calls, settingUp, handoffLagMs, reading } = inputs;
  const { maxLoad } = limits;
  const minCalls = limits.minCalls ?? 0;
  const ownLoad = withCgroupCpu(reading, maxLoad).load;
  // Inside a CPU quota the quota is the gateway's share: the node's cores are its neighbours'.
  const maxHostCpu = reading.cgroup?.quotaCores != null ? Infinity : limits.maxHostCpu;
  const load = withHostCpu({ ...reading, load: ownLoad }, maxLoad, maxHostCpu).load;
  const smoothedLoad = smooth(memory.smoothedLoad, load);
  const smoothedOwnLoad = smooth(memory.smoothedOwnLoad, ownLoad);
  const smoothedProcessLoad = smooth(memory.smoothedProcessLoad, reading.load);
  const cost = learnCost(memory.cost, load, calls, settingUp);
  // Judged on the load once the set-ups under way are over: a burst's set-ups pass, its calls stay.
  const settledLoad = settledLoadOf(cost, smoothedLoad, settingUp);
  const full = (smoothed: number) => settledLoadOf(cost, smoothed, settingUp) >= maxLoad;
  const cpuRefusal: AdmissionRefusal | null =
    settledLoad < maxLoad ? null
    : full(smoothedProcessLoad) ? 'load'
    : full(smoothedOwnLoad) ? 'cgroup_cpu'
    : 'host_cpu';
  // Below GATEWAY_MIN_CALLS the machine's CPU, which other programs use too, refuses nothing.
  const spared = cpuRefusal === 'host_cpu' && calls < minCalls;
  const maxHandoffMs = limits.maxHandoffMs ?? 0;
  const refusal: AdmissionRefusal | null =
    state !== 'active' ? state
    : calls >= limits.maxCalls ? 'max_calls'
    : cpuRefusal && !spared ? cpuRefusal
    // The workflows falling behind is a full machine too, though this process's own figures say room.
    : maxHandoffMs > 0 && handoffLagMs >= maxHandoffMs ? 'handoff_lag'
    : null;
  const admitting = refusal === null;
  return { admitting, refusal, room: admitting ? roomFor(cost, limits, inputs, load, smoothedLoad, ownLoad, smoothedOwnLoad, spared) : calls, load, smoothedLoad, settledLoad, memory: { smoothedLoad, smoothedOwnLoad, smoothedProcessLoad, cost } };
}

/**
 * The room of an admitting gateway, projected from the newer of the two figures (in a burst the
 * raw reading leads). Below GATEWAY_MIN_CALLS it is at least what its own load (the machine's CPU
 * left out) pays for, up to GATEWAY_MIN_CALLS; that alone when the machine's CPU would refuse.
 */
function roomFor(cost: CallCost, limits: AdmissionLimits, inputs: AdmissionInputs, load: number, smoothedLoad: number, ownLoad: number, smoothedOwnLoad: number, spared: boolean): number {
  const { calls, settingUp } = inputs;
  const minCalls = limits.minCalls ?? 0;
  const room = roomOf(cost, limits, calls, Math.max(load, smoothedLoad), settingUp);
  if (calls >= minCalls) return room;
  // The idle load was learnt with the machine's CPU in it: its own load is judged from zero.
  const ownRoom = roomOf({ ...cost, idle: null }, limits, calls, Math.max(ownLoad, smoothedOwnLoad), settingUp);
  const floor = Math.max(calls, Math.min(ownRoom, minCalls));
  return spared ? floor : Math.max(room, floor);
}
