/** The command line of `npm run bench:voice` (scripts/bench-voice.ts): its options, checked. */

/** The platform processes `--cpu-prof` can profile. */
const PROFILED = ['worker', 'gateway', 'api'] as const;

export interface BenchArgs {
  calls: number;
  turns: number;
  bargeIns: number;
  staggerMs: number;
  limitMinutes: number;
  provider: string;
  nice: number;
  /** Nice value of the media gateway (negative: ahead of everything else, as Compose's cpu_shares). */
  gatewayNice: number;
  warmup: number;
  /** The process to write a CPU profile of, if any. */
  cpuProf: string | null;
  /** Times a caller answered busy dials again, after the platform's Retry-After (0: never). */
  redial: number;
  /** Where Temporal keeps its state: on disk, as `npm start` does (default), or in memory (the benchmark before 2026-11-27 16:40). */
  temporal: 'disk' | 'memory';
  /** The agent answers from a knowledge base in `auto` mode: every turn searches it first. */
  knowledge: boolean;
}

export function benchArgs(argv: string[], defaults: { limitMinutes: number; nice: number; gatewayNice: number }): BenchArgs {
  const value = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] ?? '' : null;
  };
  const int = (name: string, def: number, min = 1, max = Infinity) => {
    const given = value(name);
    const v = given === null ? def : Number(given);
    if (!Number.isInteger(v) || v < min || v > max) throw new Error(`--${name} must be an integer from ${min}${max < Infinity ? ` to ${max}` : ' up'}`);
    return v;
  };
  const cpuProf = value('cpu-prof');
  if (cpuProf !== null && !(PROFILED as readonly string[]).includes(cpuProf)) throw new Error(`--cpu-prof must be one of ${PROFILED.join(', ')}`);
  const temporal = value('temporal') ?? 'disk';
  if (temporal !== 'disk' && temporal !== 'memory') throw new Error('--temporal must be disk or memory');
  return {
    calls: int('calls', 50),
    turns: int('turns', 3),
    bargeIns: int('barge-ins', 1, 0),
    staggerMs: int('stagger-ms', 100),
    limitMinutes: int('limit-minutes', defaults.limitMinutes),
    provider: value('provider') ?? 'twilio',
    nice: int('nice', defaults.nice, 0, 19),
    gatewayNice: int('gateway-nice', defaults.gatewayNice, -20, 0),
    warmup: int('warmup', 1, 0, 1),
    cpuProf,
    redial: int('redial', 0, 0, 10),
    temporal,
    knowledge: argv.includes('--knowledge'),
  };
}
