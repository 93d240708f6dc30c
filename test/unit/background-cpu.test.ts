/**
 * The machine's background work (processes niced above the platform's own, background-cpu.ts) is
 * left out of the CPU admission judges: read from a /proc of files this test writes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BackgroundCpu } from '../../src/gateway/admission/background-cpu';

function procDir(): { dir: string; proc: (pid: number, nice: number, utime: number, stime: number, comm?: string) => void; exit: (pid: number) => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-proc-'));
  return {
    dir,
    proc(pid, nice, utime, stime, comm = 'node') {
      fs.mkdirSync(path.join(dir, String(pid)), { recursive: true });
      // Fields 3… as Linux writes them: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice …
      fs.writeFileSync(path.join(dir, String(pid), 'stat'), `${pid} (${comm}) S 1 1 1 0 -1 0 0 0 0 0 ${utime} ${stime} 0 0 20 ${nice} 1 0 100 0 0\n`);
    },
    exit(pid) {
      fs.rmSync(path.join(dir, String(pid)), { recursive: true, force: true });
    },
  };
}

describe('background CPU', () => {
  it('counts the CPU of processes niced above 10 since the last reading, in ms, and nothing on the first', () => {
    const p = procDir();
    p.proc(100, 19, 500, 100); // a nice 19 build
    p.proc(200, 10, 900, 0); // the platform's Temporal at nice 10: not background
    p.proc(300, 0, 50, 50); // the gateway itself
    p.proc(400, 19, 7, 0, 'tsc (watch) x'); // a command with spaces and parentheses
    const bg = new BackgroundCpu(p.dir);
    expect(bg.msSinceLast()).toBe(0);
    p.proc(100, 19, 560, 110); // +70 ticks
    p.proc(200, 10, 990, 0); // +90 ticks, not counted
    p.proc(300, 0, 80, 60);
    p.proc(400, 19, 10, 0); // +3 ticks
    expect(bg.msSinceLast()).toBe(730);
  });

  it('counts a background process started since the last reading whole, and forgets one that exited', () => {
    const p = procDir();
    p.proc(100, 19, 100, 0);
    const bg = new BackgroundCpu(p.dir);
    bg.msSinceLast();
    p.exit(100);
    p.proc(101, 15, 20, 5);
    expect(bg.msSinceLast()).toBe(250);
    expect(bg.msSinceLast()).toBe(0);
  });

  it('reads nothing where there is no /proc, and skips a file it cannot parse', () => {
    expect(new BackgroundCpu('/nonexistent-proc').msSinceLast()).toBe(0);
    const p = procDir();
    fs.mkdirSync(path.join(p.dir, '500'));
    fs.writeFileSync(path.join(p.dir, '500', 'stat'), 'garbage');
    const bg = new BackgroundCpu(p.dir);
    bg.msSinceLast();
    expect(bg.msSinceLast()).toBe(0);
  });
});
