/**
 * The platform's Prometheus metrics: one registry per Node process (prom-client's global one), so
 * under `npm start` the API, the worker and the gateway record into the same registry and each
 * `/metrics` endpoint of the process shows all of it. The recording functions below are the only
 * way code records a metric: names, units, buckets and labels live here.
 *
 * No call data in labels: no call, stream or utterance id, no phone number, no text. Labels are
 * bounded sets (vendor names, kinds, stages, statuses); anything else is bucketed to `other`.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, register } from 'prom-client';

/** Where a turn's latency is measured from: the caller's last speech frame, or the VAD's stop decision. */
export type TurnLatencyFrom = 'speech_end' | 'vad_stop';

/**
 * Stages of a turn, in order: `vad` (last speech frame → VAD stop decision), `stt_final` (VAD stop
 * → final transcript), `handoff` (utterance handed to the workflow → the gateway runs its voice
 * turn), `llm_first_token` (LLM request → first text), `first_sentence` (first text → first whole
 * sentence sent to TTS), `tts_first_audio` (a sentence sent to TTS → its first audio).
 */
export type TurnStage = 'vad' | 'stt_final' | 'handoff' | 'llm_first_token' | 'first_sentence' | 'tts_first_audio';

export type ProviderKind = 'stt' | 'tts' | 'llm' | 'telephony';

/** Status of a call held by a media gateway: its stream being set up, or live. */
export type GatewayCallStatus = 'starting' | 'live';

const LATENCY_BUCKETS = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 7.5, 10];
const FAST_BUCKETS = [0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2];
const STAGE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 5];

const turnLatency = new Histogram({
  name: 'voice_turn_latency_seconds',
  help: 'Caller stops speaking → first agent audio frame sent, per turn; `from` is the caller\'s last speech frame (speech_end) or the VAD stop decision (vad_stop).',
  labelNames: ['from'] as const,
  buckets: LATENCY_BUCKETS,
});

const greetingLatency = new Histogram({
  name: 'voice_greeting_latency_seconds',
  help: 'Media stream start → first frame of the greeting sent to the caller.',
  buckets: LATENCY_BUCKETS,
});

const workflowFirstRequest = new Histogram({
  name: 'voice_workflow_first_request_seconds',
  help: "Media stream start → the call's workflow first asks the gateway anything (its media session, the greeting, the first turn): how far the worker and Temporal lag new calls.",
  buckets: LATENCY_BUCKETS,
});

const bargeInLatency = new Histogram({
  name: 'voice_barge_in_latency_seconds',
  help: 'VAD speech-start decision over agent speech → `clear` sent to the provider.',
  buckets: FAST_BUCKETS,
});

const VAD_LAG_BUCKETS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2];

const vadDecisionLag = new Histogram({
  name: 'voice_vad_decision_lag_seconds',
  help: 'Arrival of the caller audio that let the VAD decide → the decision (`start`: speech started, `stop`: it stopped): time the audio waited in the gateway (event loop, VAD batch or thread).',
  labelNames: ['decision'] as const,
  buckets: VAD_LAG_BUCKETS,
});

const bargeInFromSpeech = new Histogram({
  name: 'voice_barge_in_from_speech_seconds',
  help: 'Arrival of the first audio of the caller\'s speech (as the VAD places its onset) → `clear` sent, for speech that interrupted the agent: vad_start_secs plus the VAD\'s decision lag.',
  buckets: LATENCY_BUCKETS,
});

const turnStage = new Histogram({
  name: 'voice_turn_stage_seconds',
  help: 'Where a turn\'s time goes, per stage: vad, stt_final, handoff, llm_first_token, first_sentence, tts_first_audio.',
  labelNames: ['stage'] as const,
  buckets: STAGE_BUCKETS,
});

/** How a caller turn's reply started (src/gateway/workflow-link/utterance-delivery.ts). */
export type TurnPath = 'armed' | 'stale_plan' | 'not_armed' | 'alone';

const turnPaths = new Counter({
  name: 'voice_turns_total',
  help:
    'Caller turns (not backchannels) by how their reply started: armed (the workflow had armed the turn: the LLM started at once), ' +
    'stale_plan (armed, but before an earlier utterance reached the workflow or the caller heard the greeting whole: the workflow answered), ' +
    'not_armed (the workflow answered), alone (Temporal unreachable: the gateway answered). first="true": the call\'s first turn.',
  labelNames: ['path', 'first'] as const,
});

const refusedCalls = new Counter({
  name: 'voice_calls_refused_total',
  help: 'Voice calls refused because no media gateway had room (reason: no_gateway, at_capacity)',
  labelNames: ['reason', 'direction'] as const,
});

const providerErrors = new Counter({
  name: 'voice_provider_errors_total',
  help: 'Errors reported by a vendor, by kind (stt, tts, llm, telephony) and vendor.',
  labelNames: ['kind', 'vendor'] as const,
});

type CallCount = { provider: string; status: GatewayCallStatus; count: number };
const callSources = new Set<() => Iterable<CallCount>>();

new Gauge({
  name: 'voice_gateway_calls',
  help: 'Calls whose media stream this process holds, by telephony provider and status (starting, live).',
  labelNames: ['provider', 'status'] as const,
  collect() {
    this.reset();
    for (const source of callSources) {
      for (const { provider, status, count } of source()) this.inc({ provider: label(provider), status }, count);
    }
  },
});

/** A gateway's presence, as it publishes it (src/gateway/admission/presence.ts). */
type PresenceReading = { load: number; ownCpu: number; cgroupCpu: number | null; hostCpu: number; handoffLagMs: number; admitting: boolean; room: number };
const presenceSources = new Set<() => PresenceReading>();

new Gauge({
  name: 'voice_gateway_load',
  help: 'This gateway\'s load as admission sees it: the largest of event-loop utilisation, event-loop delay p99 / 50 ms, its cgroup against its CPU quota and the machine\'s CPU against GATEWAY_MAX_HOST_CPU, smoothed (0 idle, 1 full).',
  collect() {
    this.reset();
    for (const source of presenceSources) this.set(source().load);
  },
});

new Gauge({
  name: 'voice_gateway_own_cpu',
  help: 'This gateway process\'s CPU over the last second (all its threads), as a share of the cores it may use: its cgroup\'s CPU quota, else all the machine\'s (0…1; shown, not counted: its cgroup is).',
  collect() {
    this.reset();
    for (const source of presenceSources) this.set(source().ownCpu);
  },
});

new Gauge({
  name: 'voice_gateway_cgroup_cpu',
  help: 'This gateway\'s container (cgroup v2) CPU over the last second against its CPU quota (cpu.max); absent without a quota. 0.9 of the quota reads as a full gateway (refusal cgroup_cpu).',
  collect() {
    this.reset();
    for (const source of presenceSources) {
      const usage = source().cgroupCpu;
      if (usage !== null) this.set(usage);
    }
  },
});

new Gauge({
  name: 'voice_gateway_host_cpu',
  help: 'The busy share of all the machine\'s cores over the last second, as this gateway reads it (0…1; counts as load against GATEWAY_MAX_HOST_CPU).',
  collect() {
    this.reset();
    for (const source of presenceSources) this.set(source().hostCpu);
  },
});

new Gauge({
  name: 'voice_gateway_handoff_lag_seconds',
  help: 'The longest a call connected to this gateway waited for its workflow\'s first request over the last second, waits still going included (admission closes at GATEWAY_MAX_HANDOFF_MS).',
  collect() {
    this.reset();
    for (const source of presenceSources) this.set(source().handoffLagMs / 1000);
  },
});

new Gauge({
  name: 'voice_gateway_admitting',
  help: '1 while this gateway takes new calls (active, load under GATEWAY_MAX_LOAD, fewer than GATEWAY_MAX_CALLS, hand-off lag under GATEWAY_MAX_HANDOFF_MS), else 0.',
  collect() {
    this.reset();
    for (const source of presenceSources) this.set(source().admitting ? 1 : 0);
  },
});

new Gauge({
  name: 'voice_gateway_room',
  help: 'Calls this gateway offers to hold now, counting those it holds: projected from the load one call adds (GATEWAY_MAX_CALLS until learnt); its calls while not admitting.',
  collect() {
    this.reset();
    for (const source of presenceSources) this.set(source().room);
  },
});

/**
 * What a vendor socket is for: a call's speech to text, a call's text to speech, or a TTS session
 * kept ready for the next call of its voice (src/gateway/speech/tts-spares.ts) that no call holds yet.
 */
export type VendorSocketKind = 'stt' | 'tts' | 'tts_spare';
type SocketCount = { vendor: string; kind: VendorSocketKind; count: number };
const socketSources = new Set<() => Iterable<SocketCount>>();

new Gauge({
  name: 'voice_vendor_sockets',
  help: 'Vendor WebSockets this process holds open (vendors cap concurrent connections per account), by vendor and kind: stt, tts (held by a call), tts_spare (ready for the next call of a voice).',
  labelNames: ['vendor', 'kind'] as const,
  collect() {
    this.reset();
    for (const source of socketSources) {
      for (const { vendor, kind, count } of source()) this.inc({ vendor: label(vendor), kind }, count);
    }
  },
});

type StatusCount = { provider: string | null; status: string; count: number };
const statusSources = new Set<() => Promise<StatusCount[]>>();
// A scrape must answer even when the database hangs: the gauge is then left out.
const STATUS_TIMEOUT_MS = 2000;

new Gauge({
  name: 'voice_calls_active',
  help: 'Calls ringing or in progress on the platform (all instances: read from the database), by telephony provider (none: text and web calls) and status.',
  labelNames: ['provider', 'status'] as const,
  async collect() {
    this.reset();
    for (const source of statusSources) {
      let rows: StatusCount[];
      try {
        rows = await Promise.race([
          source(),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), STATUS_TIMEOUT_MS).unref()),
        ]);
      } catch {
        continue;
      }
      for (const { provider, status, count } of rows) this.inc({ provider: provider ? label(provider) : 'none', status: label(status) }, count);
    }
  },
});

let defaultsCollected = false;

/**
 * Default process metrics (CPU, memory, event loop lag, GC…), once per process. No process label:
 * Prometheus tells scrape targets apart by `job` and `instance`.
 */
export function initProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics();
}

/** One turn: the caller stopped speaking (`from`) → the agent's first audio frame went out. */
export function observeTurnLatency(ms: number, from: TurnLatencyFrom = 'speech_end'): void {
  if (valid(ms)) turnLatency.observe({ from }, ms / 1000);
}

/** Stream start → the greeting's first audio frame went out. */
export function observeGreetingLatency(ms: number): void {
  if (valid(ms)) greetingLatency.observe(ms / 1000);
}

/** Stream start → the call's workflow first asked the gateway anything. */
export function observeWorkflowFirstRequest(ms: number): void {
  if (valid(ms)) workflowFirstRequest.observe(ms / 1000);
}

/** The VAD decided the caller started speaking over the agent → `clear` went to the provider. */
export function observeBargeInLatency(ms: number): void {
  if (valid(ms)) bargeInLatency.observe(ms / 1000);
}

/** The caller audio that let the VAD decide arrived `ms` before the decision. */
export function observeVadDecisionLag(decision: 'start' | 'stop', ms: number): void {
  if (valid(ms)) vadDecisionLag.observe({ decision }, ms / 1000);
}

/** The caller's speech onset (its audio's arrival) → `clear` sent, for a barge-in. */
export function observeBargeInFromSpeech(ms: number): void {
  if (valid(ms)) bargeInFromSpeech.observe(ms / 1000);
}

/** One stage of a turn (see TurnStage). */
export function observeTurnStage(stage: TurnStage, ms: number): void {
  if (valid(ms)) turnStage.observe({ stage }, ms / 1000);
}

/** Utterance handed to the call workflow → its voice turn started on the gateway (Temporal's share). */
export function observeHandoff(ms: number): void {
  observeTurnStage('handoff', ms);
}

/** A caller turn reached the gateway's delivery: how its reply started, and whether it was the call's first. */
export function countTurnPath(path: TurnPath, first: boolean): void {
  turnPaths.inc({ path, first: String(first) });
}

/** A call refused at admission: no live gateway, or all at capacity. */
export function countRefusedCall(reason: string, direction: 'inbound' | 'outbound'): void {
  refusedCalls.inc({ reason: label(reason), direction });
}

/** A vendor error (a failed request, a dropped or rejected stream, a malformed message). */
export function countProviderError(kind: ProviderKind, vendor: string | undefined): void {
  providerErrors.inc({ kind, vendor: label(vendor ?? 'unknown') });
}

/**
 * Counts calls on scrape from `source` (a gateway's call registry); returns the function that
 * stops counting them (the gateway stopped).
 */
export function trackGatewayCalls(source: () => Iterable<CallCount>): () => void {
  callSources.add(source);
  return () => callSources.delete(source);
}

/** Reports a gateway's load and admission on scrape; returns the function that stops it. */
export function trackGatewayPresence(source: () => PresenceReading): () => void {
  presenceSources.add(source);
  return () => presenceSources.delete(source);
}

/** Reports the open vendor sockets on scrape (src/providers/socket-census.ts); returns the untrack function. */
export function trackVendorSockets(source: () => Iterable<SocketCount>): () => void {
  socketSources.add(source);
  return () => socketSources.delete(source);
}

/** Counts active calls by provider and status on scrape (the API, from the database); returns the untrack function. */
export function trackActiveCalls(source: () => Promise<StatusCount[]>): () => void {
  statusSources.add(source);
  return () => statusSources.delete(source);
}

/** The registry as Prometheus text. */
export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  return { contentType: register.contentType, body: await register.metrics() };
}

function valid(ms: number): boolean {
  return Number.isFinite(ms) && ms >= 0;
}

const LABEL = /^[a-z0-9_.-]+$/;

/** Label values come from our own registries; anything unexpected is one bucket, never free text. */
function label(value: string, max = 32): string {
  const v = value.toLowerCase();
  return v.length <= max && LABEL.test(v) ? v : 'other';
}
