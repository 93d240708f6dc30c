/**
 * `npm run bench:noise [-- --runs 3 --secs 60]`: what `pipeline_settings.noise_suppression:
 * "rnnoise"` does to a call's audio-input path, measured on the gateway's own code (the call's
 * NoiseSuppressor and VadAnalyzer on the real Silero model, fed 20 ms frames as they arrive) with
 * the sox/eSpeak fixtures of test/fixtures/audio/ (scripts/make-noise-fixtures.sh). Per run:
 *
 * - false interruptions: the caller silent, noise on their line at -32 dBFS RMS (10 dB under the
 *   speech fixtures) for `--secs` while the agent talks: every VAD speech start would pause or
 *   interrupt the agent. Counted per minute, with the share of the time the VAD was not quiet
 *   (the agent held), for street noise, a babble of 6 voices and a crowd of 12;
 * - CPU-ms per call-second of the path (VAD alone, or RNNoise + VAD) at 8 and 16 kHz, and of
 *   RNNoise with its resampling alone (process.cpuUsage; Silero runs inline here, not on the VAD
 *   thread, so its share is the same work in another place);
 * - turn latency, VAD side: the raw frame whose arrival let the VAD decide the caller's speech
 *   stop, minus the true end of the speech (energy), for four speech fixtures clean and in street
 *   noise, each at eight phases of the VAD's 32 ms windows; reported as the mean change on − off.
 *
 * Prints a table per run and one `SUMMARY` line with the ranges over the runs.
 */
import path from 'node:path';
import { resample } from '../src/audio/resampler';
import { readWavFile } from '../src/audio/wav';
import { NoiseSuppressor } from '../src/gateway/noise/noise-suppressor';
import { sharedSileroModel, type SileroSampleRate, type SileroVadModel } from '../src/gateway/vad/silero';
import { VadAnalyzer } from '../src/gateway/vad/vad-analyzer';

const FIXTURES = path.join(__dirname, '../test/fixtures/audio');
const NOISES = ['street', 'babble', 'crowd'] as const;
const SPEECH = ['hello-appointment.wav', 'stop-wait.wav', 'hello-question.wav', 'silence-speech-silence.wav'];
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const RUNS = arg('runs', 3);
const SECS = arg('secs', 60);

const load = (name: string, rate = 8000) => {
  const pcm = readWavFile(path.join(FIXTURES, name)).samples;
  return rate === 8000 ? pcm : resample(pcm, 8000, rate);
};
const loop = (pcm: Int16Array, samples: number) => Int16Array.from({ length: samples }, (_, i) => pcm[i % pcm.length]!);
const cpuMs = (since: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(since);
  return (c.user + c.system) / 1000;
};

interface PathRun {
  starts: number;
  heldShare: number;
  cpuMs: number;
  nsCpuMs: number;
  /** Raw-audio ms at which each stop was decided (the end of the frame that let it). */
  stopsAtMs: number[];
}

/** One call's input path over `pcm`: frames in, the VAD's decisions out. */
async function runPath(model: SileroVadModel, pcm: Int16Array, rate: SileroSampleRate, rnnoise: boolean): Promise<PathRun> {
  const ns = rnnoise ? new NoiseSuppressor(rate) : null;
  const vad = new VadAnalyzer(model.createStream(rate));
  const frame = rate / 50;
  let starts = 0;
  let held = 0;
  let frames = 0;
  let nsCpuMs = 0;
  const stopsAtMs: number[] = [];
  const t0 = process.cpuUsage();
  for (let i = 0; i + frame <= pcm.length; i += frame) {
    const n0 = process.cpuUsage();
    const heard = ns ? ns.process(pcm.subarray(i, i + frame)) : pcm.subarray(i, i + frame);
    if (ns) nsCpuMs += cpuMs(n0);
    for (const e of await vad.analyze(heard)) {
      if (e.type === 'speech_started') starts++;
      else stopsAtMs.push(((i + frame) * 1000) / rate);
    }
    frames++;
    if (vad.state !== 'quiet') held++;
  }
  const total = cpuMs(t0);
  ns?.close();
  return { starts, heldShare: held / frames, cpuMs: total, nsCpuMs, stopsAtMs };
}

/** Where the speech really ends: the last 10 ms block above -40 dBFS. */
function speechEndMs(pcm: Int16Array): number {
  let end = 0;
  for (let i = 0; i + 80 <= pcm.length; i += 80) {
    let sum = 0;
    for (let j = i; j < i + 80; j++) sum += pcm[j]! * pcm[j]!;
    if (Math.sqrt(sum / 80) > 328) end = (i + 80) / 8;
  }
  return end;
}

async function turnLatency(model: SileroVadModel, withNoise: boolean, rnnoise: boolean): Promise<number[]> {
  const street = load('noise-street.wav');
  const out: number[] = [];
  for (const name of SPEECH) {
    const clean = load(name);
    for (let phase = 0; phase < 8; phase++) {
      // A lead of 0–28 ms moves the speech against the VAD's 32 ms windows.
      const lead = phase * 32;
      const speech = new Int16Array(lead + clean.length);
      speech.set(clean, lead);
      const pcm = withNoise ? speech.map((v, i) => Math.max(-32768, Math.min(32767, v + street[i % street.length]!))) : speech;
      const run = await runPath(model, pcm, 8000, rnnoise);
      const end = speechEndMs(speech);
      const stop = run.stopsAtMs.find((t) => t > end);
      if (stop !== undefined) out.push(stop - end);
    }
  }
  return out;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const range = (xs: number[], digits = 1) => `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;

async function main() {
  const model = await sharedSileroModel();
  const summary: Record<string, number[]> = {};
  const note = (key: string, v: number) => (summary[key] ??= []).push(v);
  for (let run = 1; run <= RUNS; run++) {
    console.log(`run ${run}/${RUNS}: ${SECS} s of noise per case, caller silent, agent talking`);
    for (const noise of NOISES) {
      for (const rnnoise of [false, true]) {
        const mode = rnnoise ? 'rnnoise' : 'off';
        const r = await runPath(model, loop(load(`noise-${noise}.wav`), SECS * 8000), 8000, rnnoise);
        const perMin = r.starts / (SECS / 60);
        note(`false_per_min_${noise}_${mode}`, perMin);
        console.log(`  ${noise.padEnd(7)} ${mode.padEnd(8)} false interruptions ${r.starts} (${perMin.toFixed(1)}/min), agent held ${(100 * r.heldShare).toFixed(0)} % of the time`);
      }
    }
    for (const rate of [8000, 16000] as const) {
      const pcm = loop(load('noise-street.wav', rate), SECS * rate);
      const off = await runPath(model, pcm, rate, false);
      const on = await runPath(model, pcm, rate, true);
      note(`cpu_ms_per_call_s_${rate / 1000}k_off`, off.cpuMs / SECS);
      note(`cpu_ms_per_call_s_${rate / 1000}k_rnnoise`, on.cpuMs / SECS);
      note(`rnnoise_cpu_ms_per_call_s_${rate / 1000}k`, on.nsCpuMs / SECS);
      console.log(
        `  ${rate / 1000} kHz CPU-ms per call-second: VAD ${(off.cpuMs / SECS).toFixed(1)}, RNNoise + VAD ${(on.cpuMs / SECS).toFixed(1)} (RNNoise and its resampling ${(on.nsCpuMs / SECS).toFixed(1)})`,
      );
    }
    for (const withNoise of [false, true]) {
      const off = await turnLatency(model, withNoise, false);
      const on = await turnLatency(model, withNoise, true);
      const label = withNoise ? 'in street noise' : 'clean';
      note(`turn_ms_${withNoise ? 'street' : 'clean'}_off`, mean(off));
      note(`turn_ms_${withNoise ? 'street' : 'clean'}_delta`, mean(on) - mean(off));
      console.log(
        `  turn latency (VAD side, speech end → stop decided) ${label}: off ${mean(off).toFixed(1)} ms (${off.length} turns), rnnoise ${mean(on).toFixed(1)} ms (${on.length}): ${(mean(on) - mean(off)).toFixed(1)} ms`,
      );
    }
  }
  console.log(`SUMMARY ${Object.entries(summary).map(([k, v]) => `${k}=${range(v)}`).join(' ')}`);
}

void main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
