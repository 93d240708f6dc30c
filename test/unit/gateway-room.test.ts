import { MIN_CALLS_TO_LEARN, READING_WEIGHT, RoomEstimate, SETUP_WEIGHT } from '../../src/gateway/admission/room-estimate';
import { LoadMeter, withHostCpu } from '../../src/gateway/admission/load-meter';
import { HANDOFF_WINDOW_MS, HandoffLag } from '../../src/gateway/admission/handoff-lag';

describe('the room a gateway offers', () => {
  it('offers all of GATEWAY_MAX_CALLS until it has carried enough calls to learn their cost', () => {
    const room = new RoomEstimate(100, 0.8);
    room.observe(0.3, MIN_CALLS_TO_LEARN - 1);
    expect(room.costPerCall).toBeNull();
    expect(room.room(4, 0.3)).toBe(100);
  });

  it('offers what the load left under GATEWAY_MAX_LOAD pays for, once a call has a cost', () => {
    const room = new RoomEstimate(100, 0.8);
    room.observe(0.2, 10); // 0.02 a call
    // 10 calls at 0.2: 0.6 left pays for 30 more.
    expect(room.room(10, 0.2)).toBe(40);
    // A burst: the newest reading leads, the room shrinks with it.
    expect(room.room(20, 0.5)).toBe(35);
    expect(room.room(30, 0.79)).toBe(30);
  });

  it('counts only the load above idle as the calls’ cost', () => {
    const room = new RoomEstimate(100, 0.8);
    room.observe(0.1, 0);
    room.observe(0.3, 10); // (0.3 − 0.1) / 10
    expect(room.costPerCall).toBeCloseTo(0.02, 6);
    expect(room.room(10, 0.3)).toBe(35);
  });

  it('does not take a fresh gateway’s start-up for its idle load', () => {
    const room = new RoomEstimate(1000, 0.6);
    // Measured on a fresh gateway: its own start-up, the other processes starting, then quiet.
    for (const load of [1.0, 0.5, 0.14, 0.01, 0.02, 0.02]) room.observe(load, 0);
    room.observe(0.3, 100); // 100 settled calls
    expect(room.costPerCall).toBeGreaterThan(0.0027);
    expect(room.costPerCall).toBeLessThan(0.003);
    // So 0.3 left under 0.6 pays for about 100 more, not the ~300 an idle load of 0.23 made it.
    expect(room.room(100, 0.3)).toBeLessThan(210);
    // A quieter reading still lowers the idle load, a busier one raises it only by the average.
    room.observe(0.2, 0);
    room.observe(0.005, 0);
    room.observe(0.3, 100);
    expect(room.costPerCall).toBeGreaterThan(0.0028);
  });

  it('never offers more than GATEWAY_MAX_CALLS nor fewer than the calls it holds', () => {
    const room = new RoomEstimate(25, 0.8);
    room.observe(0.05, 10);
    expect(room.room(10, 0.05)).toBe(25);
    expect(room.room(12, 0.95)).toBe(12);
  });

  it('makes a call dearer while set-ups load a burst, and settles back within seconds', () => {
    const room = new RoomEstimate(100, 0.8);
    room.observe(0.5, 10); // a burst of set-ups: 0.05 a call
    room.observe(0.2, 10); // the set-ups are over: 0.02 a call
    expect(room.costPerCall).toBeCloseTo(0.05 * (1 - READING_WEIGHT) + 0.02 * READING_WEIGHT, 6);
    for (let i = 0; i < 15; i++) room.observe(0.2, 10);
    expect(room.costPerCall).toBeCloseTo(0.02, 3);
    // 30 more, bar the rounding of a cost still a hair above 0.02.
    expect(room.room(10, 0.2)).toBeGreaterThanOrEqual(39);
  });

  it('counts a call being set up as SETUP_WEIGHT calls while learning what a settled call costs', () => {
    const room = new RoomEstimate(100, 0.6);
    room.observe(0.05, 0);
    // 20 calls, all of them in their first seconds: 0.45 above idle is 20 × SETUP_WEIGHT settled calls.
    room.observe(0.5, 20, 20);
    expect(room.costPerCall).toBeCloseTo(0.45 / (20 * SETUP_WEIGHT), 6);
  });

  it('judges the room on the load the calls will make once their set-ups are over', () => {
    const room = new RoomEstimate(1000, 0.75);
    room.observe(0, 0);
    room.observe(0.5, 20, 20); // 20 calls in their set-up: 0.5 / (20 × SETUP_WEIGHT) a settled call
    const perCall = 0.5 / (20 * SETUP_WEIGHT);
    // Settled, the 20 calls make what 20 settled calls cost: the rest of 0.75 pays for more.
    expect(room.settledLoad(0.5, 20)).toBeCloseTo(20 * perCall, 9);
    expect(room.room(20, 0.5, 20)).toBe(20 + Math.floor((0.75 - 20 * perCall) / perCall + 1e-9));
    // The same load with the set-ups over is all settled calls: less room.
    expect(room.room(20, 0.5, 0)).toBe(20 + Math.floor((0.75 - 0.5) / perCall + 1e-9));
    expect(room.room(20, 0.5, 0)).toBeLessThan(room.room(20, 0.5, 20));
    // Never below the idle load, whatever the set-ups.
    expect(room.settledLoad(0.1, 20)).toBe(0);
  });
});

describe('the machine\'s CPU as load (GATEWAY_MAX_HOST_CPU)', () => {
  const reading = (load: number, hostCpu: number) => ({ load, utilisation: load, loopLagP99Ms: 0, cpu: 0.3, hostCpu });

  it('reads cores GATEWAY_MAX_HOST_CPU busy as GATEWAY_MAX_LOAD, so a starved worker closes the door', () => {
    expect(withHostCpu(reading(0.3, 0.8), 0.6, 0.8).load).toBeCloseTo(0.6);
    expect(withHostCpu(reading(0.3, 0.9), 0.6, 0.8).load).toBeGreaterThan(0.6);
    // A quiet machine leaves the gateway's own figure.
    expect(withHostCpu(reading(0.3, 0.2), 0.6, 0.8).load).toBe(0.3);
  });

  it('is off above 1, and when the load itself never closes the door', () => {
    expect(withHostCpu(reading(0.3, 1), 0.6, 2).load).toBe(0.3);
    expect(withHostCpu(reading(0.3, 1), 100, 0.8).load).toBe(0.3);
  });

  it('measures the machine\'s busy share of all its cores', async () => {
    const meter = new LoadMeter();
    const until = Date.now() + 50;
    while (Date.now() < until); // this process keeps one core busy
    const { hostCpu } = meter.read();
    meter.stop();
    expect(hostCpu).toBeGreaterThan(0);
    expect(hostCpu).toBeLessThanOrEqual(1);
  });
});

describe('the hand-off lag (GATEWAY_MAX_HANDOFF_MS)', () => {
  it('reads the longest wait for a first request since the last reading, then forgets it', () => {
    const lag = new HandoffLag();
    lag.heard(400);
    lag.heard(2600);
    lag.heard(900);
    expect(lag.read(10_000, [])).toBe(2600);
    expect(lag.read(11_000, [])).toBe(0);
  });

  it('counts a call still waiting, so a worker that stopped answering closes the door before any call is heard', () => {
    const lag = new HandoffLag();
    lag.heard(500);
    // Two calls connected at 6 s and 9.5 s, neither heard from by 10 s.
    expect(lag.read(10_000, [6_000, 9_500])).toBe(4_000);
  });

  it('stops counting a call that waited past the window: one workflow that never asks does not close the door for good', () => {
    const lag = new HandoffLag();
    expect(lag.read(HANDOFF_WINDOW_MS + 5_000, [4_000, HANDOFF_WINDOW_MS + 4_000])).toBe(1_000);
  });
});
