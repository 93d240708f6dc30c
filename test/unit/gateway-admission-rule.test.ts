/**
 * The gateway's admission rule (src/gateway/admission/admission-rule.ts) as a table: what the
 * gateway measured and remembers → whether it admits a new call, why not, and the room it offers.
 */
import { decideAdmission, INITIAL_ADMISSION_MEMORY, LOAD_SMOOTHING, type AdmissionInputs, type AdmissionLimits, type AdmissionMemory, type AdmissionRefusal } from '../../src/gateway/admission/admission-rule';
import type { CgroupCpuReading } from '../../src/gateway/admission/cgroup-cpu';
import { SETUP_WEIGHT } from '../../src/gateway/admission/room-estimate';

const limits: AdmissionLimits = { maxCalls: 100, maxLoad: 0.8, maxHostCpu: 0.8, maxHandoffMs: 2500, minCalls: 4 };

/** A steady gateway: the smoothed figures equal this reading's, so a row reads as "the load is L". */
function steady(load: number, perCall: number | null = null, idle: number | null = 0): AdmissionMemory {
  return { smoothedLoad: load, smoothedOwnLoad: load, smoothedProcessLoad: load, cost: { perCall, idle } };
}

/** Smoothed figures by layer: the process alone, with its cgroup, with the machine's CPU too. */
function layered(processLoad: number, ownLoad: number, load: number, perCall: number | null = null, idle: number | null = 0): AdmissionMemory {
  return { smoothedLoad: load, smoothedOwnLoad: ownLoad, smoothedProcessLoad: processLoad, cost: { perCall, idle } };
}

function inputs(over: Partial<AdmissionInputs> & { load?: number; hostCpu?: number; cgroup?: CgroupCpuReading | null } = {}): AdmissionInputs {
  const { load = 0.2, hostCpu = 0.1, cgroup = null, ...rest } = over;
  return { state: 'active', calls: 10, settingUp: 0, handoffLagMs: 0, reading: { load, utilisation: load, loopLagP99Ms: 0, cpu: 0.2, hostCpu, cgroup }, ...rest };
}

/** A container with a CPU limit of two cores, this share of it used over the last second. */
const quota = (usage: number, throttled = 0): CgroupCpuReading => ({ quotaCores: 2, usage, throttled });

interface Row {
  name: string;
  memory: AdmissionMemory;
  inputs: AdmissionInputs;
  limits?: AdmissionLimits;
  refusal: AdmissionRefusal | null;
  room: number;
}

const rows: Row[] = [
  // Cost not learnt yet (fewer than 5 calls ever): all of GATEWAY_MAX_CALLS is offered.
  { name: 'an idle fresh gateway admits and offers GATEWAY_MAX_CALLS', memory: INITIAL_ADMISSION_MEMORY, inputs: inputs({ calls: 0, load: 0.02 }), refusal: null, room: 100 },
  // 10 calls at 0.2 over an idle 0: 0.02 a call, 0.6 left pays for 30 more.
  { name: 'a learnt cost: its calls plus what the load left pays for', memory: steady(0.2, 0.02), inputs: inputs({ calls: 10, load: 0.2 }), refusal: null, room: 40 },
  { name: 'draining: refused, room is the calls it holds', memory: steady(0.2, 0.02), inputs: inputs({ state: 'draining' }), refusal: 'draining', room: 10 },
  { name: 'stopped: refused', memory: steady(0.2, 0.02), inputs: inputs({ state: 'stopped' }), refusal: 'stopped', room: 10 },
  { name: 'GATEWAY_MAX_CALLS held: refused whatever the load', memory: steady(0.1), inputs: inputs({ calls: 100, load: 0.1 }), refusal: 'max_calls', room: 100 },
  { name: 'draining comes before max_calls', memory: steady(0.1), inputs: inputs({ state: 'draining', calls: 100 }), refusal: 'draining', room: 100 },
  { name: 'settled load at GATEWAY_MAX_LOAD: refused for load', memory: steady(0.8, 0.08), inputs: inputs({ calls: 10, load: 0.8 }), refusal: 'load', room: 10 },
  { name: 'just under GATEWAY_MAX_LOAD: admits, no room beyond what the load pays for', memory: steady(0.79, 0.079), inputs: inputs({ calls: 10, load: 0.79 }), refusal: null, room: 10 },
  {
    name: 'one busy second alone does not close the door (the load is smoothed)',
    memory: steady(0.2, 0.02), inputs: inputs({ calls: 10, load: 1.0 }),
    // smoothed 0.2 + (1.0 − 0.2) × 0.5 = 0.6; the room follows the raw reading, which leads: none.
    refusal: null, room: 10,
  },
  {
    name: 'a burst of set-ups is judged on the load once they are over',
    // 20 calls, 10 of them setting up, at 0.9: 20 + 10 × (SETUP_WEIGHT − 1) = 50 settled calls' cost,
    // 0.018 each. Once the set-ups are over the load is 0.9 − 30 × 0.018 = 0.36: 0.44 left pays for 24 more.
    memory: steady(0.9, 0.018), inputs: inputs({ calls: 20, settingUp: 10, load: 0.9 }),
    refusal: null, room: 44,
  },
  {
    name: 'the machine\'s CPU alone over GATEWAY_MAX_HOST_CPU: refused for host_cpu',
    // Own load 0.3, cores 90 % busy: 0.9 / 0.8 × 0.8 = 0.9 counts as the load.
    memory: layered(0.3, 0.3, 0.9, 0.03), inputs: inputs({ calls: 10, load: 0.3, hostCpu: 0.9 }),
    refusal: 'host_cpu', room: 10,
  },
  {
    name: 'the gateway\'s own load over the limit is `load`, though the machine is busy too',
    memory: steady(0.85, 0.085), inputs: inputs({ calls: 10, load: 0.85, hostCpu: 0.9 }),
    refusal: 'load', room: 10,
  },
  {
    name: 'GATEWAY_MAX_HOST_CPU above 1: the machine\'s CPU never counts',
    memory: steady(0.3, 0.03), inputs: inputs({ calls: 10, load: 0.3, hostCpu: 1 }), limits: { ...limits, maxHostCpu: 2 },
    refusal: null, room: 26,
  },
  { name: 'hand-off lag at GATEWAY_MAX_HANDOFF_MS: refused', memory: steady(0.1), inputs: inputs({ calls: 1, load: 0.1, handoffLagMs: 2500 }), refusal: 'handoff_lag', room: 1 },
  { name: 'hand-off lag just under: admits', memory: steady(0.1), inputs: inputs({ calls: 1, load: 0.1, handoffLagMs: 2499 }), refusal: null, room: 100 },
  { name: 'GATEWAY_MAX_HANDOFF_MS 0: the hand-off lag never closes the door', memory: steady(0.1), inputs: inputs({ calls: 1, load: 0.1, handoffLagMs: 60_000 }), limits: { ...limits, maxHandoffMs: 0 }, refusal: null, room: 100 },
  { name: 'the load comes before the hand-off lag', memory: steady(0.9, 0.09), inputs: inputs({ calls: 10, load: 0.9, handoffLagMs: 5000 }), refusal: 'load', room: 10 },
  // GATEWAY_MIN_CALLS (4 here): the machine's CPU, which other programs use too, refuses nothing below it.
  {
    name: 'an idle gateway on a busy machine admits and offers GATEWAY_MIN_CALLS, not GATEWAY_MAX_CALLS',
    // Cores 95 % busy with another program: 0.95 counts as the load, over 0.8, while its own is 0.02.
    memory: layered(0.02, 0.02, 0.95, null, 0.95), inputs: inputs({ calls: 0, load: 0.02, hostCpu: 0.95 }),
    refusal: null, room: 4,
  },
  { name: 'a busy machine, 3 calls held: admits the fourth', memory: layered(0.05, 0.05, 0.95, null, 0.95), inputs: inputs({ calls: 3, load: 0.05, hostCpu: 0.95 }), refusal: null, room: 4 },
  { name: 'a busy machine, GATEWAY_MIN_CALLS held: refused for host_cpu', memory: layered(0.05, 0.05, 0.95, null, 0.95), inputs: inputs({ calls: 4, load: 0.05, hostCpu: 0.95 }), refusal: 'host_cpu', room: 4 },
  {
    name: 'spared the machine\'s CPU below GATEWAY_MIN_CALLS, it offers only what its own load pays for',
    // 2 calls, own load 0.775 at 0.025 a call: one more call fits under 0.8, not two.
    memory: layered(0.775, 0.775, 0.95, 0.025), inputs: inputs({ calls: 2, load: 0.775, hostCpu: 0.95 }),
    refusal: null, room: 3,
  },
  { name: 'below GATEWAY_MIN_CALLS its own load still refuses', memory: layered(0.85, 0.85, 0.95), inputs: inputs({ calls: 1, load: 0.85, hostCpu: 0.95 }), refusal: 'load', room: 1 },
  {
    name: 'GATEWAY_MIN_CALLS 0: an idle gateway on a busy machine is refused for host_cpu',
    memory: layered(0.02, 0.02, 0.95, null, 0.95), inputs: inputs({ calls: 0, load: 0.02, hostCpu: 0.95 }), limits: { ...limits, minCalls: 0 },
    refusal: 'host_cpu', room: 0,
  },
  // A container with a CPU quota (cgroup v2 cpu.max): its usage against the quota is what says full.
  {
    name: 'its cgroup\'s CPU quota full: refused for cgroup_cpu, though the process\'s own figures say room',
    // 96 % of the quota used: 0.9625 / 0.9 × 0.8 ≈ 0.86 counts as the load.
    memory: layered(0.2, 0.85, 0.85, 0.02), inputs: inputs({ calls: 10, load: 0.2, cgroup: quota(0.9625) }),
    refusal: 'cgroup_cpu', room: 10,
  },
  {
    name: 'its cgroup\'s quota full refuses below GATEWAY_MIN_CALLS too: that is CPU the gateway used',
    memory: layered(0.1, 0.9, 0.9), inputs: inputs({ calls: 1, load: 0.1, cgroup: quota(1) }),
    refusal: 'cgroup_cpu', room: 1,
  },
  {
    name: 'throttled in a fifth of its quota periods: refused for cgroup_cpu, though under its quota on average',
    memory: layered(0.2, 1, 1, 0.02), inputs: inputs({ calls: 10, load: 0.2, cgroup: quota(0.5, 0.2) }),
    refusal: 'cgroup_cpu', room: 10,
  },
  {
    name: 'its cgroup\'s quota free, the machine busy: admits (the node\'s cores are its neighbours\')',
    // Inside a quota the machine's CPU does not count: the room is what the load 0.3 leaves, 0.5 ÷ 0.03.
    memory: steady(0.3, 0.03), inputs: inputs({ calls: 10, load: 0.3, hostCpu: 0.95, cgroup: quota(0.3) }),
    refusal: null, room: 26,
  },
  {
    name: 'a cgroup without a quota ("max"): the machine\'s CPU counts as without one',
    memory: layered(0.3, 0.3, 0.9, 0.03), inputs: inputs({ calls: 10, load: 0.3, hostCpu: 0.9, cgroup: { quotaCores: null, usage: null, throttled: 0 } }),
    refusal: 'host_cpu', room: 10,
  },
  {
    name: 'the room never exceeds GATEWAY_MAX_CALLS',
    memory: steady(0.05, 0.005), inputs: inputs({ calls: 10, load: 0.05 }), limits: { ...limits, maxCalls: 25 },
    refusal: null, room: 25,
  },
];

describe('the gateway admission rule', () => {
  it.each(rows)('$name', ({ memory, inputs: measured, limits: rowLimits, refusal, room }) => {
    const decision = decideAdmission(memory, measured, rowLimits ?? limits);
    expect(decision.refusal).toBe(refusal);
    expect(decision.admitting).toBe(refusal === null);
    expect(decision.room).toBe(room);
  });

  it('carries its memory forward: the smoothed load, and the cost learnt from calls being set up', () => {
    const first = decideAdmission(INITIAL_ADMISSION_MEMORY, inputs({ calls: 0, load: 0.05, hostCpu: 0 }), limits);
    expect(first.memory.cost.idle).toBeCloseTo(0.05, 9);
    expect(first.smoothedLoad).toBeCloseTo(0.05 * LOAD_SMOOTHING, 9);
    // 20 calls, all setting up: 0.45 above idle is 20 × SETUP_WEIGHT settled calls.
    const second = decideAdmission(first.memory, inputs({ calls: 20, settingUp: 20, load: 0.5, hostCpu: 0 }), limits);
    expect(second.memory.cost.perCall).toBeCloseTo(0.45 / (20 * SETUP_WEIGHT), 9);
    expect(second.smoothedLoad).toBeCloseTo(first.smoothedLoad * (1 - LOAD_SMOOTHING) + 0.5 * LOAD_SMOOTHING, 9);
    expect(second.load).toBe(0.5);
  });

  it('is a function of its inputs alone: the same inputs give the same decision', () => {
    const memory = steady(0.4, 0.02);
    const measured = inputs({ calls: 15, settingUp: 3, load: 0.5, hostCpu: 0.6, handoffLagMs: 800 });
    expect(decideAdmission(memory, measured, limits)).toEqual(decideAdmission(memory, measured, limits));
    expect(memory).toEqual(steady(0.4, 0.02));
  });
});
