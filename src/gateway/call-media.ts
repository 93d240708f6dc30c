/**
 * One call's audio on this gateway: the pipeline between the provider's stream and the call
 * workflow, in the stream's own audio format. Caller audio arrives as 16-bit PCM at the stream's
 * rate (decoded once by the vendor codec) and goes to the VAD, the STT and the recording; the turn
 * detector turns VAD and transcripts into utterance signals and barge-ins; agent speech goes
 * TTS (in the stream's format) → playback → socket and recording. Activities (speak, voiceTurn,
 * endMedia, mediaSession) act on it through the methods below. Vendor failures become `error`
 * events and the call goes on where it can.
 */
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { toPcm16, type AudioFormat } from '../audio/format';
import type { Config } from '../config';
import {
  observeBargeInLatency,
  observeGreetingLatency,
  observeHandoff,
  observeTurnLatency,
  observeTurnStage,
} from '../observability/metrics';
import type { Logger } from '../shared/logger';
import type {
  ArmedTurnRequest,
  ArmedTurnResult,
  EndReason,
  GatewayEvent,
  SpeakRequest,
  SpeechOutcome,
  VoiceConfig,
} from '../../workflows/call-definitions';
import { ArrivalClock } from './arrival-clock';
import { GatewayEventLog } from './events';
import { Playback, type AgentSpeech, type SpeechResult } from './playback';
import { WavRecorder } from './recording/wav-recorder';
import { splitSentences } from './sentences';
import { SttLink } from './stt-link';
import { TtsLink } from './tts-link';
import type { TtsSpares } from './tts-spares';
import { TurnDetector, type CompletedTurn } from './turn-detector';
import { UtteranceDelivery, type TurnRunner } from './utterance-delivery';
import { vadParamsFromPipeline, VadAnalyzer } from './vad/vad-analyzer';
import type { SpeechProbability } from './vad/silero';

export { SpeechUnavailable } from './tts-link';

/** How the call talks to its provider socket (the vendor's framing lives in the stream's codec). */
export interface StreamOutput {
  media(frame: Buffer): void;
  mark(name: string): void;
  clear(): void;
  close(code: number, reason: string): void;
}

export interface CallMediaOptions {
  callId: string;
  streamSid: string;
  /** The stream's audio format, both ways. */
  format: AudioFormat;
  /** Length of each outgoing media frame (default 20 ms). */
  frameMs?: number;
  voice: VoiceConfig;
  config: Config;
  workflow: WorkflowHandle;
  /** Per-call speech model streams at the stream's rate (the gateway's shared, batched Silero). */
  vad: { createStream(sampleRate: 8000 | 16000): SpeechProbability };
  out: StreamOutput;
  log: Logger;
  /** performance.now() when the stream started: time 0 of the recording and media timestamps. */
  startPerf: number;
  /** The gateway's ready TTS sessions (see tts-spares.ts). */
  ttsSpares?: TtsSpares;
}

/**
 * `hangup`: the provider ended the stream; `closed`: the platform did; `shutdown`: this gateway
 * stopped; `failed`: the call cannot go on (its STT is gone for good).
 */
export type CloseReason = 'hangup' | 'closed' | 'shutdown' | 'failed';

export interface MediaClosure {
  reason: CloseReason;
  /** Events reported after the last activity result (e.g. tts_stopped of speech cut by the hang-up). */
  events: GatewayEvent[];
  /** With `failed`: why, and which part failed (`stt`). */
  error?: { message: string; context: string };
}

export class CallMedia {
  readonly callId: string;
  readonly streamSid: string;
  readonly format: AudioFormat;
  readonly recordingPath: string;
  readonly events = new GatewayEventLog();
  readonly playback: Playback;
  readonly closed: Promise<MediaClosure>;

  private readonly opts: CallMediaOptions;
  private readonly log: Logger;
  private readonly turns: TurnDetector;
  private readonly vad: VadAnalyzer;
  private readonly recorder: WavRecorder;
  private readonly stt: SttLink;
  private readonly tts: TtsLink;
  private readonly llmStreams = new Set<AbortController>();
  private cutting: 'barge_in' | null = null;
  /** Set when an utterance was delivered: its end of speech, for the e2e latency of the reply. */
  private pendingE2e: { speechEndPerf: number; vadStopPerf: number; signalledPerf: number; handoffTimed?: boolean } | null = null;
  /** Metrics: when the VAD last decided the caller started speaking; whether the greeting was timed. */
  private vadStartPerf: number | null = null;
  private greetingTimed = false;
  private readonly delivery: UtteranceDelivery;
  private readonly arrivals: ArrivalClock;
  /** The greeting, started when the stream connected, until its `speak` request claims it. */
  private greeting: { utteranceId: string; text: string; speech: AgentSpeech } | null = null;
  private agentPcm = new Int16Array(0);
  private closing = false;
  private closedBy: CloseReason | null = null;
  private failure: MediaClosure['error'];
  private readonly interruptsOnSpeechStart: boolean;
  private resolveClosed!: (c: MediaClosure) => void;

  constructor(opts: CallMediaOptions) {
    this.opts = opts;
    this.callId = opts.callId;
    this.streamSid = opts.streamSid;
    this.format = opts.format;
    this.log = opts.log;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    this.recordingPath = path.join(opts.config.dataDir, 'recordings', `${opts.callId}.wav`);
    this.recorder = new WavRecorder({
      path: this.recordingPath,
      sampleRate: opts.format.sampleRate,
      onError: (err) => this.events.error(`recording failed: ${err.message}`, 'recording'),
    });

    this.playback = new Playback(
      {
        media: (frame) => opts.out.media(frame),
        mark: (name) => opts.out.mark(name),
        clear: () => opts.out.clear(),
        sent: (frame, slotPerf) => this.recordAgent(frame, slotPerf),
      },
      { started: (s, atPerf) => this.speechStarted(s, atPerf), finished: (s, r) => this.speechFinished(s, r) },
      // Only when speech start alone interrupts (min_words ≤ 1): holding for every backchannel
      // onset would chop the agent's speech.
      () => this.interruptsOnSpeechStart && this.vad.state === 'starting',
      { format: opts.format, frameMs: opts.frameMs },
    );

    const pipeline = opts.voice.pipeline;
    this.interruptsOnSpeechStart = (pipeline.min_words ?? 3) <= 1;
    this.turns = new TurnDetector(pipeline.min_words ?? 3, {
      agentSpeaking: () => this.playback.speaking,
      bargeIn: () => this.bargeIn(),
      finalize: () => this.stt.finalize(),
      finalWaitMs: () => this.stt.finalWaitMs,
      utterance: (turn) => this.utterance(turn),
      arrivalPerf: (audioMs) => this.arrivals.arrivalOf(audioMs),
    });
    this.arrivals = new ArrivalClock(opts.format.sampleRate);
    this.delivery = new UtteranceDelivery({
      callId: opts.callId,
      workflow: opts.workflow,
      events: this.events,
      log: opts.log,
      orphaned: () => void this.close('closed', 1011, 'call workflow not running'),
    });
    const rate = opts.format.sampleRate as 8000 | 16000;
    this.vad = new VadAnalyzer(opts.vad.createStream(rate), vadParamsFromPipeline(pipeline), (e) => {
      if (e.type === 'speech_started') this.vadStartPerf = performance.now();
      this.turns.onVad(e);
    });
    const common = { callId: opts.callId, format: opts.format, config: opts.config, events: this.events, log: opts.log };
    this.stt = new SttLink({
      ...common,
      stt: opts.voice.stt,
      onTranscript: (t) => this.turns.onTranscript(t),
      // A call nobody can hear is over: the workflow records it failed (end_reason error).
      onUnavailable: (message) => this.fail(message, 'stt'),
    });
    this.tts = new TtsLink({ ...common, tts: opts.voice.tts, playback: this.playback, spares: opts.ttsSpares });
  }

  get isClosed(): boolean {
    return this.closing;
  }

  /** Why the stream closed (null while open). */
  get closeReason(): CloseReason | null {
    return this.closedBy;
  }

  // ---- caller audio ----------------------------------------------------------------------------

  /**
   * Caller audio: 16-bit PCM at the stream's rate, `timestampMs` since the stream started (null:
   * now). The VAD, the STT and the recorder copy what they need: `pcm` may be a reused buffer.
   */
  onCallerAudio(pcm: Int16Array, timestampMs: number | null, arrivedPerf = performance.now()): void {
    if (this.closing || pcm.length === 0) return;
    this.arrivals.add(pcm.length, arrivedPerf);
    this.vad.push(pcm);
    const atMs = timestampMs !== null && Number.isFinite(timestampMs) && timestampMs >= 0 ? timestampMs : performance.now() - this.opts.startPerf;
    this.recorder.writeCaller(pcm, atMs);
    this.stt.send(pcm);
  }

  onMark(name: string): void {
    this.playback.onMark(name);
  }

  // ---- agent speech ----------------------------------------------------------------------------

  /** Starts an agent utterance (throws SpeechUnavailable without TTS). */
  beginSpeech(utteranceId: string): AgentSpeech {
    const speech = this.tts.begin(utteranceId);
    this.turns.onAgentSpeech();
    return speech;
  }

  /** One sentence of the utterance: TTS is asked for its audio at once. */
  sayMore(speech: AgentSpeech, sentence: string): void {
    this.tts.push(speech, sentence);
  }

  /** No more text for this utterance. */
  endSpeech(speech: AgentSpeech): void {
    this.tts.end(speech);
  }

  /** Stops one utterance (its activity was cancelled or its LLM failed). */
  stopSpeech(speech: AgentSpeech): void {
    this.playback.stop(speech);
    this.tts.cancel(speech);
  }

  /** An LLM stream feeding the current speech: aborted on barge-in. */
  trackLlm(controller: AbortController): () => void {
    this.llmStreams.add(controller);
    if (this.closing) controller.abort();
    return () => this.llmStreams.delete(controller);
  }

  /**
   * The greeting the workflow announced (voiceConfig): synthesis starts now, when the stream has
   * connected, and its `speak` request, arriving a workflow round trip later, takes it over.
   */
  startGreeting(greeting: { utteranceId: string; text: string }): void {
    if (this.closing || !greeting.text.trim()) return;
    let speech: AgentSpeech;
    try {
      speech = this.beginSpeech(greeting.utteranceId);
    } catch {
      return; // no TTS: the speak request reports it
    }
    for (const sentence of splitSentences(greeting.text)) this.sayMore(speech, sentence);
    this.endSpeech(speech);
    this.greeting = { ...greeting, speech };
  }

  /** `speak`: a fixed text, sentence by sentence into TTS; resolves when played or cut off. */
  async speak(req: SpeakRequest, cancel: AbortSignal): Promise<SpeechOutcome> {
    if (!req.text.trim()) return { heardText: '', interrupted: false, characters: 0, events: this.events.drain() };
    const early = this.greeting;
    this.greeting = null;
    const claimed = early !== null && early.utteranceId === req.utteranceId && early.text === req.text;
    if (early && !claimed) this.stopSpeech(early.speech); // not what the workflow asked for after all
    const speech = claimed ? early.speech : this.beginSpeech(req.utteranceId);
    const onCancel = () => this.stopSpeech(speech);
    cancel.addEventListener('abort', onCancel, { once: true });
    try {
      if (!claimed) {
        for (const sentence of splitSentences(req.text)) this.sayMore(speech, sentence);
        this.endSpeech(speech);
      }
      const result = await speech.result;
      return {
        heardText: result.whole ? req.text : result.heardText,
        interrupted: result.interrupted,
        characters: speech.characters,
        events: this.events.drain(),
      };
    } finally {
      cancel.removeEventListener('abort', onCancel);
    }
  }

  /** `armedTurn`: the next turn waits here for the caller's utterance (utterance-delivery.ts). */
  armTurn(req: ArmedTurnRequest, run: TurnRunner, cancel: AbortSignal): Promise<ArmedTurnResult> {
    return this.delivery.arm(req, run, cancel);
  }

  disarmTurn(armId: string): void {
    this.delivery.disarm(armId);
  }

  /** Barge-in: the line goes silent now; speech, TTS and LLM stop. */
  bargeIn(): void {
    if (this.closing) return;
    const atPerf = performance.now();
    this.cutting = 'barge_in';
    let cut: AgentSpeech[];
    try {
      cut = this.playback.interrupt(atPerf);
    } finally {
      this.cutting = null;
    }
    // Playback sent `clear` iff some cut utterance had frames out.
    if (this.vadStartPerf !== null && cut.some((s) => s.framesSent > 0)) observeBargeInLatency(performance.now() - this.vadStartPerf);
    for (const s of cut) this.tts.cancel(s);
    for (const c of this.llmStreams) c.abort();
    if (cut.length) this.log.debug('barge-in', { callId: this.callId, utterances: cut.map((s) => s.id) });
  }

  /** A voice turn started on this gateway: the utterance's trip through the workflow is over. */
  noteTurnStarted(): void {
    const e2e = this.pendingE2e;
    if (e2e && !e2e.handoffTimed) {
      e2e.handoffTimed = true;
      observeHandoff(performance.now() - e2e.signalledPerf);
    }
  }

  // ---- ending ----------------------------------------------------------------------------------

  /** `endMedia`: lets queued speech finish (bounded), then closes the stream and the recording. */
  async end(reason: EndReason, maxWaitMs = 10_000): Promise<MediaClosure> {
    if (!this.closing) {
      const played = await this.playback.idle(maxWaitMs);
      if (!played) this.log.warn('closing the stream with speech still playing', { callId: this.callId, reason });
    }
    return this.close('closed', 1000, `call ended: ${reason}`);
  }

  /** Ends the call from the gateway's side: the media session reports `failed` with the reason. */
  fail(message: string, context: string): void {
    if (this.closing) return;
    this.failure = { message, context };
    this.log.error('call failed in the media gateway', { callId: this.callId, context, error: message });
    void this.close('failed', 1011, `${context} unavailable`);
  }

  /** Closes everything once (see CloseReason). Resolves when the recording is final. */
  close(reason: CloseReason, code = 1000, message = ''): Promise<MediaClosure> {
    if (this.closing) return this.closed;
    this.closing = true;
    this.closedBy = reason;
    const endMs = performance.now() - this.opts.startPerf;
    this.turns.close();
    this.delivery.close();
    for (const c of this.llmStreams) c.abort();
    this.playback.close();
    this.opts.out.close(code, message);
    void Promise.allSettled([this.stt.close(), this.tts.close()]);
    void (async () => {
      try {
        await this.recorder.close(endMs);
      } catch (err) {
        this.log.error('recording could not be finalised', { callId: this.callId, error: (err as Error).message });
      }
      await this.delivery.settled;
      this.resolveClosed({ reason, events: this.events.drain(), ...(this.failure ? { error: this.failure } : {}) });
    })();
    return this.closed;
  }

  // ---- internals -------------------------------------------------------------------------------

  private recordAgent(frame: Buffer, slotPerf: number): void {
    if (this.agentPcm.length < frame.length) this.agentPcm = new Int16Array(frame.length);
    const atMs = Math.max(0, slotPerf - this.opts.startPerf);
    this.recorder.writeAgent(toPcm16(frame, this.format, this.agentPcm), atMs);
  }

  private speechStarted(speech: AgentSpeech, atPerf: number): void {
    this.events.add('tts_started', { utterance_id: speech.id }, atPerf);
    if (!this.greetingTimed) {
      // The call's first audio, before the caller said anything: the greeting.
      this.greetingTimed = true;
      if (!this.pendingE2e) observeGreetingLatency(atPerf - this.opts.startPerf);
    }
    const e2e = this.pendingE2e;
    if (e2e && speech.createdPerf >= e2e.signalledPerf) {
      this.pendingE2e = null;
      observeTurnLatency(atPerf - e2e.speechEndPerf, 'speech_end');
      observeTurnLatency(atPerf - e2e.vadStopPerf, 'vad_stop');
      this.events.add(
        'ttfb_metric',
        { processor: 'e2e', ms: Math.round(atPerf - e2e.speechEndPerf), after_vad_stop_ms: Math.round(atPerf - e2e.vadStopPerf), utterance_id: speech.id },
        atPerf,
      );
    }
  }

  private speechFinished(speech: AgentSpeech, result: SpeechResult): void {
    if (speech.framesSent > 0) {
      this.events.add('tts_stopped', { utterance_id: speech.id, duration_ms: result.playedMs, interrupted: result.interrupted });
    }
    if (result.interrupted && this.cutting === 'barge_in') {
      this.events.add('interruption', { utterance_id: speech.id, heard_text: result.heardText });
    }
  }

  private utterance(turn: CompletedTurn): void {
    if (this.closing) return;
    this.greetingTimed = true;
    if (turn.sttTtfbMs !== null) this.events.add('ttfb_metric', { processor: 'stt', ms: turn.sttTtfbMs });
    if (turn.sttTtfbMs !== null) observeTurnStage('stt_final', turn.sttTtfbMs);
    if (turn.speechEndPerf !== null && turn.vadStopPerf !== null) observeTurnStage('vad', turn.vadStopPerf - turn.speechEndPerf);
    if (!turn.duringAgentSpeech && turn.speechEndPerf !== null && turn.vadStopPerf !== null) {
      this.pendingE2e = { speechEndPerf: turn.speechEndPerf, vadStopPerf: turn.vadStopPerf, signalledPerf: performance.now() };
    }
    this.delivery.deliver(turn);
  }
}
