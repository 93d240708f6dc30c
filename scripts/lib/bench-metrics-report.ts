/**
 * The benchmark's section from the gateway's own `/metrics`: what its histograms gained during
 * the calls (a scrape before, one after), p50 / p95 estimated from the buckets, and where a
 * turn's time goes stage by stage.
 */
import { counterDelta, histogramDelta, histogramMeanMs, histogramQuantileMs, type HistogramDelta, type Scrape } from './prom-scrape';
import { fmtMs } from './caller-audio';

const STAGES: Array<[string, string]> = [
  ['vad', 'VAD: last speech frame → stop decision (vad_stop_secs + model windows)'],
  ['stt_final', 'STT: VAD stop → final transcript'],
  ['handoff', 'Temporal hand-off: utterance to the workflow → voice turn started on the gateway'],
  ['llm_first_token', 'LLM: request → first token'],
  ['first_sentence', 'LLM: first token → first whole sentence to TTS'],
  ['tts_first_audio', 'TTS: sentence sent → first audio'],
];

export interface GatewayFigures {
  turnSpeechEnd: HistogramDelta;
  turnVadStop: HistogramDelta;
  greeting: HistogramDelta;
  bargeIn: HistogramDelta;
  /** The caller's speech onset (its audio's arrival) → `clear` sent. */
  bargeInFromSpeech: HistogramDelta;
  /** Arrival of the audio that let the VAD decide → the decision. */
  vadLagStart: HistogramDelta;
  vadLagStop: HistogramDelta;
  /** Stream start → the call's workflow first asked the gateway anything. */
  workflowFirst: HistogramDelta;
}

export function gatewayFigures(before: Scrape, after: Scrape): GatewayFigures {
  return {
    turnSpeechEnd: histogramDelta(before, after, 'voice_turn_latency_seconds', { from: 'speech_end' }),
    turnVadStop: histogramDelta(before, after, 'voice_turn_latency_seconds', { from: 'vad_stop' }),
    greeting: histogramDelta(before, after, 'voice_greeting_latency_seconds'),
    bargeIn: histogramDelta(before, after, 'voice_barge_in_latency_seconds'),
    bargeInFromSpeech: histogramDelta(before, after, 'voice_barge_in_from_speech_seconds'),
    vadLagStart: histogramDelta(before, after, 'voice_vad_decision_lag_seconds', { decision: 'start' }),
    vadLagStop: histogramDelta(before, after, 'voice_vad_decision_lag_seconds', { decision: 'stop' }),
    workflowFirst: histogramDelta(before, after, 'voice_workflow_first_request_seconds'),
  };
}

const row = (label: string, h: HistogramDelta) =>
  `| ${label} | ${h.count} | ${fmtMs(histogramQuantileMs(h, 0.5))} | ${fmtMs(histogramQuantileMs(h, 0.95))} | ${fmtMs(histogramMeanMs(h))} |`;

export function printGatewayMetrics(before: Scrape, after: Scrape): GatewayFigures {
  const f = gatewayFigures(before, after);
  console.log('\n### The gateway\'s own measurements (its /metrics: what this run added; p50 / p95 estimated from histogram buckets)\n');
  console.log('| measure | n | p50 | p95 | mean |');
  console.log('|---|---|---|---|---|');
  console.log(row('turn: caller\'s last speech frame → first agent audio sent', f.turnSpeechEnd));
  console.log(row('turn: VAD stop decision → first agent audio sent', f.turnVadStop));
  console.log(row('greeting: stream start → first greeting audio sent', f.greeting));
  console.log(row("set-up: stream start → the workflow's first request to the gateway", f.workflowFirst));
  console.log(row('barge-in: VAD start decision → `clear` sent', f.bargeIn));
  console.log(row('barge-in: arrival of the speech onset (as the VAD places it) → `clear` sent', f.bargeInFromSpeech));
  console.log(row('VAD decision lag, speech start: arrival of the deciding audio → decision', f.vadLagStart));
  console.log(row('VAD decision lag, speech stop: arrival of the deciding audio → decision', f.vadLagStop));
  console.log('\nWhere a turn\'s time goes (`voice_turn_stage_seconds`):\n');
  console.log('| stage | n | p50 | p95 | mean |');
  console.log('|---|---|---|---|---|');
  let stagesP50 = 0;
  for (const [stage, label] of STAGES) {
    const h = histogramDelta(before, after, 'voice_turn_stage_seconds', { stage });
    if (h.count > 0) stagesP50 += histogramQuantileMs(h, 0.5);
    console.log(row(label, h));
  }
  // Stages are timed separately (TTS also for greetings and later sentences), so this is a reading, not an identity.
  console.log(`\nSum of the stage p50s: ${fmtMs(stagesP50)}; turn p50 from the last speech frame: ${fmtMs(histogramQuantileMs(f.turnSpeechEnd, 0.5))}.`);
  const paths = counterDelta(before, after, 'voice_turns_total');
  const turnsOf = (first: boolean) => {
    const mine = paths.filter((p) => p.labels.includes(`first="${first}"`));
    const n = (path: string) => mine.filter((p) => p.labels.includes(`path="${path}"`)).reduce((sum, p) => sum + p.delta, 0);
    const all = mine.reduce((sum, p) => sum + p.delta, 0);
    return `armed ${n('armed')} of ${all} (stale plan ${n('stale_plan')}, not armed ${n('not_armed')}, answered alone ${n('alone')})`;
  };
  console.log(`\nHow each turn's reply started (\`voice_turns_total\`): first turns ${turnsOf(true)}; later turns ${turnsOf(false)}.`);
  const errors = counterDelta(before, after, 'voice_provider_errors_total');
  console.log(`\nProvider errors during the run: ${errors.length ? errors.map((e) => `${e.labels} ${e.delta}`).join(', ') : 'none'}`);
  return f;
}
