/**
 * The simulated callers' clock: the gateway's own drift-free pacer, one timer for all callers at
 * a given speed, so a process can hold many callers.
 */
import { Pacer } from '../../src/gateway/speech/pacer';
import { FRAME_MS } from './phone-wire';

const clocks = new Map<number, Pacer>();

export function clockFor(speed: number): Pacer {
  let clock = clocks.get(speed);
  if (!clock) clocks.set(speed, (clock = new Pacer(FRAME_MS / speed)));
  return clock;
}
