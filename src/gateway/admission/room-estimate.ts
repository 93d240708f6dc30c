/**
 * How many calls this gateway can hold right now, projected from what its calls cost
 * (docs/call-lifecycle.md, "Load, admission and refusal"). The load figure trails a burst of call
 * set-ups by a second or two, so a gateway that offered all of GATEWAY_MAX_CALLS until its load
 * crossed GATEWAY_MAX_LOAD let a 10-a-second burst overshoot: the calls admitted meanwhile all
 * shared a saturated machine. Instead it learns the load one call adds and offers the calls the
 * load left under GATEWAY_MAX_LOAD pays for.
 *
 * A call's cost is the load above the idle load (learnt while no call is held), divided by the
 * calls that made it, averaged over a few readings. A call being set up costs more than one that
 * is settled (webhooks, the greeting, new sockets, and on a shared machine the workflow start):
 * measured on the all-in-one 2-core install, about six times for its first few seconds since turn
 * runs made a settled call cheap (twice before them; docs/performance.md, "Set-ups weigh four
 * settled calls"). So a call in its set-up counts SETUP_WEIGHT calls while the cost is learnt — 4,
 * below the measured six, so a burst is judged on the cautious side — and the room is judged on
 * the load the calls will make once their set-ups are over; otherwise the first burst a gateway
 * sees reads every call as several times its cost and refuses calls the machine can carry.
 *
 * The idle load drops to any lower reading at once and rises only by the average: a fresh
 * gateway's first readings are its own start-up (module loading, compilation, and on the all-in-one
 * install the other processes starting), measured at 1.0 and 0.5. Averaged in, they left the idle
 * load at 0.23 when the first burst came, against 0.02 really, so every call was costed at the load
 * above 0.23 — once settled, a quarter of its cost — and the room overstated about fourfold.
 */

/** Below this many calls the idle load swamps the per-call figure: nothing is learnt. */
export const MIN_CALLS_TO_LEARN = 5;
/** Weight of the newest reading in the cost and the idle load (one reading a second). */
export const READING_WEIGHT = 0.3;
/** A call in its set-up (SETUP_SECS after its stream connected) costs this many settled calls. */
export const SETUP_WEIGHT = 4;
/** How long a call counts as being set up, from its stream's connection. */
export const SETUP_SECS = 3;

const average = (old: number | null, sample: number) => (old === null ? sample : old * (1 - READING_WEIGHT) + sample * READING_WEIGHT);
/** The idle load: at once down to a lower reading, by the average up to a higher one. */
const lowerAtOnce = (old: number | null, sample: number) => (old !== null && sample < old ? sample : average(old, sample));

/** What one settled call costs and the idle load, as learnt so far (null: not yet). */
export interface CallCost {
  perCall: number | null;
  idle: number | null;
}

export const UNLEARNT_COST: CallCost = { perCall: null, idle: null };

/** The cost after one reading: the load over the last interval, the calls held at its end and how many of them are being set up. */
export function learnCost(cost: CallCost, load: number, calls: number, settingUp = 0): CallCost {
  const idle = calls === 0 ? lowerAtOnce(cost.idle, load) : cost.idle;
  if (calls < MIN_CALLS_TO_LEARN) return { perCall: cost.perCall, idle };
  const weighted = calls + (SETUP_WEIGHT - 1) * Math.min(settingUp, calls);
  return { perCall: average(cost.perCall, Math.max(0, load - (idle ?? 0)) / weighted), idle };
}

/** The load once the set-ups under way are over: what admission judges. */
export function settledLoadOf(cost: CallCost, load: number, settingUp: number): number {
  if (cost.perCall === null) return load;
  return Math.max(cost.idle ?? 0, load - (SETUP_WEIGHT - 1) * settingUp * cost.perCall);
}

/**
 * Calls this gateway can hold, counting those it holds: all of maxCalls until a cost is learnt,
 * then its calls plus what the settled load under maxLoad pays for — never fewer than it holds.
 */
export function roomOf(cost: CallCost, limits: { maxCalls: number; maxLoad: number }, calls: number, load: number, settingUp = 0): number {
  if (cost.perCall === null || cost.perCall <= 0) return Math.max(calls, limits.maxCalls);
  const more = Math.max(0, Math.floor((limits.maxLoad - settledLoadOf(cost, load, settingUp)) / cost.perCall));
  return Math.max(calls, Math.min(limits.maxCalls, calls + more));
}

/** The same with its cost held, learning from each reading it observes (the admission rule carries the cost itself, in its memory). */
export class RoomEstimate {
  private cost: CallCost = UNLEARNT_COST;

  constructor(
    private readonly maxCalls: number,
    private readonly maxLoad: number,
  ) {}

  /** The load one settled call adds, as last learnt (null until the gateway has carried enough calls). */
  get costPerCall(): number | null {
    return this.cost.perCall;
  }

  /** One reading: the load over the last interval, the calls held at its end and how many of them are being set up. */
  observe(load: number, calls: number, settingUp = 0): void {
    this.cost = learnCost(this.cost, load, calls, settingUp);
  }

  /** The load once the set-ups under way are over: what admission judges. */
  settledLoad(load: number, settingUp: number): number {
    return settledLoadOf(this.cost, load, settingUp);
  }

  /** Calls this gateway can hold, counting those it holds (roomOf). */
  room(calls: number, load: number, settingUp = 0): number {
    return roomOf(this.cost, { maxCalls: this.maxCalls, maxLoad: this.maxLoad }, calls, load, settingUp);
  }
}
