/**
 * The gateway's cgroup (v2) CPU reader (src/gateway/admission/cgroup-cpu.ts). No cgroup of our own
 * can be made on this machine (cgroup v1, no privileges), so these are "the cgroup files given to
 * the meter": a temporary directory with cpu.max and cpu.stat in the kernel's format, whose
 * counters the test advances as the kernel would, and a clock the test drives.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CgroupCpu, ownCgroupDir, parseCpuMax } from '../../src/gateway/admission/cgroup-cpu';
import { LoadMeter } from '../../src/gateway/admission/load-meter';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cgroup-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function writeStat(usageUsec: number, periods = 0, throttled = 0): void {
  fs.writeFileSync(
    path.join(dir, 'cpu.stat'),
    `usage_usec ${usageUsec}\nuser_usec ${Math.floor(usageUsec * 0.7)}\nsystem_usec ${Math.floor(usageUsec * 0.3)}\nnr_periods ${periods}\nnr_throttled ${throttled}\nthrottled_usec ${throttled * 20_000}\nnr_bursts 0\nburst_usec 0\n`,
  );
}

describe('the cgroup CPU reader', () => {
  it('parses cpu.max: a quota in cores, none for "max"', () => {
    expect(parseCpuMax('200000 100000\n')).toBe(2);
    expect(parseCpuMax('50000 100000')).toBe(0.5);
    expect(parseCpuMax('max 100000\n')).toBeNull();
    expect(parseCpuMax('')).toBeNull();
  });

  it('reads the usage against the quota and the share of throttled periods since the last reading', () => {
    fs.writeFileSync(path.join(dir, 'cpu.max'), '200000 100000\n');
    writeStat(5_000_000, 100, 0);
    let now = 1000;
    const cgroup = new CgroupCpu(dir, () => now);
    // One second: 1.8 core-seconds used of 2 allowed, throttled in 4 of its 10 periods.
    now += 1000;
    writeStat(6_800_000, 110, 4);
    expect(cgroup.read()).toEqual({ quotaCores: 2, usage: expect.closeTo(0.9, 9), throttled: expect.closeTo(0.4, 9) });
    // The next second, nearly idle and not throttled.
    now += 1000;
    writeStat(6_900_000, 120, 4);
    expect(cgroup.read()).toEqual({ quotaCores: 2, usage: expect.closeTo(0.05, 9), throttled: 0 });
  });

  it('follows a quota changed at run time (the pod resized)', () => {
    fs.writeFileSync(path.join(dir, 'cpu.max'), '100000 100000\n');
    writeStat(0);
    let now = 0;
    const cgroup = new CgroupCpu(dir, () => now);
    now += 1000;
    writeStat(500_000);
    expect(cgroup.read()?.usage).toBeCloseTo(0.5, 9);
    fs.writeFileSync(path.join(dir, 'cpu.max'), 'max 100000\n');
    now += 1000;
    writeStat(1_000_000);
    expect(cgroup.read()).toEqual({ quotaCores: null, usage: null, throttled: 0 });
  });

  it('reads nothing where there are no cgroup v2 files (cgroup v1, macOS)', () => {
    const cgroup = new CgroupCpu(path.join(dir, 'absent'));
    expect(cgroup.read()).toBeNull();
  });

  it('finds the process\'s own cgroup from /proc/self/cgroup', () => {
    const file = path.join(dir, 'cgroup');
    fs.writeFileSync(file, '0::/kubepods.slice/pod1/abc\n');
    expect(ownCgroupDir(file)).toBe('/sys/fs/cgroup/kubepods.slice/pod1/abc');
    fs.writeFileSync(file, '12:cpu,cpuacct:/\n0::/\n');
    expect(ownCgroupDir(file)).toBe('/sys/fs/cgroup');
    expect(ownCgroupDir(path.join(dir, 'none'))).toBe('/sys/fs/cgroup');
  });

  it('gives the load meter its quota: the process CPU is a share of the quota\'s cores', () => {
    // A quota of a tenth of a core: this process's busy 50 ms is most of it.
    fs.writeFileSync(path.join(dir, 'cpu.max'), '10000 100000\n');
    writeStat(0);
    const meter = new LoadMeter({ cgroupDir: dir });
    const until = Date.now() + 50;
    while (Date.now() < until); // this process keeps one core busy
    writeStat(1_000);
    const reading = meter.read();
    meter.stop();
    expect(reading.cgroup).toMatchObject({ quotaCores: 0.1 });
    expect(reading.ownCpu).toBeCloseTo(reading.cpu / 0.1, 9);
    expect(reading.ownCpu).toBeGreaterThan(0.5);
  });
});
