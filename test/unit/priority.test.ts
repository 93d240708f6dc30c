import { spawn } from 'node:child_process';
import os from 'node:os';
import { applyNice } from '../../src/runtime/priority';
import type { Logger } from '../../src/shared/logger';

function recordingLogger(): Logger & { warnings: Array<{ message: string; meta: unknown }> } {
  const warnings: Array<{ message: string; meta: unknown }> = [];
  const noop = () => undefined;
  return { warnings, debug: noop, info: noop, error: noop, warn: (message: string, meta?: unknown) => warnings.push({ message, meta }) } as never;
}

describe('CPU priority (NICE)', () => {
  it('lowers the priority of a process it started, e.g. the Temporal dev server', async () => {
    const child = spawn('sleep', ['30']);
    try {
      await new Promise((r) => child.once('spawn', r));
      const log = recordingLogger();
      applyNice(10, log, child.pid!, 'test child');
      expect(os.getPriority(child.pid!)).toBe(10);
      expect(log.warnings).toEqual([]);
    } finally {
      child.kill();
    }
  });

  it('logs a refusal instead of failing start-up', () => {
    const log = recordingLogger();
    expect(() => applyNice(5, log, 2 ** 22 + 12345, 'no such process')).not.toThrow();
    expect(log.warnings).toHaveLength(1);
    expect(log.warnings[0]!.message).toMatch(/CPU priority/);
  });
});
