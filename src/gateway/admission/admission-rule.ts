/**
 * Whether this gateway admits new calls, and how many it can hold (docs/call-lifecycle.md, "Load,
 * admission and refusal"): a pure function of what the gateway measured this second and what it
 * remembers from the seconds before (the smoothed load, what a call costs). presence.ts measures,
 * calls it once a tick and writes what it returns; the rule itself is one table of cases
 * (test/unit/gateway-admission-rule.test.ts).
 *
 * It admits while the gateway is active, holds fewer than GATEWAY_MAX_CALLS, its settled load (the
 * smoothed load once the set-ups under way are over, room-estimate.ts) is under GATEWAY_MAX_LOAD,
 * and its calls' hand-off lag is under GATEWAY_MAX_HANDOFF_MS. The machine's CPU counts in the load
 * (withHostCpu); when it alone is what puts the load over the limit the refusal says `host_cpu`.
 */
import { withHostCpu, type LoadReading } from './load-meter';
import { learnCost, roomOf, settledLoadOf, UNLEARNT_COST, type CallCost } from './room-estimate';

/** Weight of the newest reading in the smoothed load: one busy second alone does not close the door. */
export const LOAD_SMOOTHING = 0.5;

export type GatewayState = 'active' | 'draining' | 'stopped';

/** Why a gateway admits no new call, the first that applies in this order. */
export type AdmissionRefusal = 'draining' | 'stopped' | 'max_calls' | 'load' | 'host_cpu' | 'handoff_lag';

export interface AdmissionLimits {
  /** GATEWAY_MAX_CALLS */
  maxCalls: number;
  /** GATEWAY_MAX_LOAD */
  maxLoad: number;
  /** GATEWAY_MAX_HOST_CPU: the machine's CPU that counts as a full gateway (above 1: never counts). */
  maxHostCpu?: number;
  /** GATEWAY_MAX_HANDOFF_MS: no new call while the hand-off lag is at least this (0: never). */
  maxHandoffMs?: number;
}

/** What the gateway measured over the last interval. */
export interface AdmissionInputs {
  state: GatewayState;
  /** The load meter's reading: the gateway's own load and the machine's CPU share. */
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
  /** The smoothed load, the machine's CPU counted: what admission judges. */
  smoothedLoad: number;
  /** The same of the gateway's own figures alone: tells a `host_cpu` refusal from a `load` one. */
  smoothedOwnLoad: number;
  /** What one settled call costs, as learnt (room-estimate.ts). */
  cost: CallCost;
}

export const INITIAL_ADMISSION_MEMORY: AdmissionMemory = { smoothedLoad: 0, smoothedOwnLoad: 0, cost: UNLEARNT_COST };

export interface AdmissionDecision {
  admitting: boolean;
  /** Why not, when not admitting. */
  refusal: AdmissionRefusal | null;
  /** Calls it can hold now, counting those it holds; its calls when not admitting. */
  room: number;
  /** This interval's load with the machine's CPU counted. */
  load: number;
  smoothedLoad: number;
  /** The smoothed load once the set-ups under way are over. */
  settledLoad: number;
  /** For the next reading. */
  memory: AdmissionMemory;
}

const smooth = (old: number, sample: number) => old * (1 - LOAD_SMOOTHING) + sample * LOAD_SMOOTHING;

export function decideAdmission(memory: AdmissionMemory, inputs: AdmissionInputs, limits: AdmissionLimits): AdmissionDecision {
  const { state, calls, settingUp, handoffLagMs } = inputs;
  const load = withHostCpu(inputs.reading, limits.maxLoad, limits.maxHostCpu).load;
  const smoothedLoad = smooth(memory.smoothedLoad, load);
  const smoothedOwnLoad = smooth(memory.smoothedOwnLoad, inputs.reading.load);
  const cost = learnCost(memory.cost, load, calls, settingUp);
  // Judged on the load once the set-ups under way are over: a burst's set-ups pass, its calls stay.
  const settledLoad = settledLoadOf(cost, smoothedLoad, settingUp);
  const maxHandoffMs = limits.maxHandoffMs ?? 0;
  const refusal: AdmissionRefusal | null =
    state !== 'active' ? state
    : calls >= limits.maxCalls ? 'max_calls'
    : settledLoad >= limits.maxLoad ? (settledLoadOf(cost, smoothedOwnLoad, settingUp) < limits.maxLoad ? 'host_cpu' : 'load')
    // The workflows falling behind is a full machine too, though this process's own figures say room.
    : maxHandoffMs > 0 && handoffLagMs >= maxHandoffMs ? 'handoff_lag'
    : null;
  const admitting = refusal === null;
  // The room is projected from the newer of the two figures: in a burst the raw reading leads.
  const room = admitting ? roomOf(cost, limits, calls, Math.max(load, smoothedLoad), settingUp) : calls;
  return { admitting, refusal, room, load, smoothedLoad, settledLoad, memory: { smoothedLoad, smoothedOwnLoad, cost } };
}
