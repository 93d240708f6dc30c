/**
 * The gateway's admission rule (src/gateway/admission/admission-rule.ts) as a table: what the
 * gateway measured and remembers → whether it admits a new call, why not, and the room it offers.
 */
import { decideAdmission, INITIAL_ADMISSION_MEMORY, LOAD_SMOOTHING, type AdmissionInputs, type AdmissionLimits, type AdmissionMemory, type AdmissionRefusal } from '../../src/gateway/admission/admission-rule';
import { SETUP_WEIGHT } from '../../src/gateway/admission/room-estimate';

const limits: AdmissionLimits = { maxCalls: 100, maxLoad: 0.8, maxHostCpu: 0.8, maxHandoffMs: 2500 };

/** A steady gateway: the smoothed figures equal this reading's, so a row reads as "the load is L". */
function steady(load: number, perCall: number | null = null, idle: number | null = 0): AdmissionMemory {
  return { smoothedLoad: load, smoothedOwnLoad: load, cost: { perCall, idle } };
}

function inputs(over: Partial<AdmissionInputs> & { load?: number; hostCpu?: number } = {}): AdmissionInputs {
  const { load = 0.2, hostCpu = 0.1, ...rest } = over;
  return { state: 'active', calls: 10, settingUp: 0, handoffLagMs: 0, reading: { load, utilisation: load, loopLagP99Ms: 0, cpu: 0.2, hostCpu }, ...rest };
}

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
    memory: { smoothedLoad: 0.9, smoothedOwnLoad: 0.3, cost: { perCall: 0.03, idle: 0 } }, inputs: inputs({ calls: 10, load: 0.3, hostCpu: 0.9 }),
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
