/**
 * One call's audio on this gateway: the pipeline between the provider's stream and the call
 * workflow, wired in one place, in the stream's own audio format.
 *
 *   caller audio (16-bit PCM, decoded once by the vendor codec) → arrival clock, recording (as sent),
 *     noise suppression (the agent's setting) → VAD, STT
 *   VAD events + transcripts → turn detector → barge-in (speech out) or an utterance (delivery)
 *   utterance → the armed turn (voice-turn.ts) or a report to the workflow (workflow-reports.ts)
 *   agent text → speech out: TTS (in the stream's format) → playback → socket and recording
 *
 * Latency metrics watch from the side (a PipelineObserver). Activities (speak, voiceTurn,
 * armedTurn, endMedia, mediaSession) and the socket's mark echoes use the parts directly:
 * `speech`, `delivery`, `reports`.
 * Vendor failures become `error` events and the call goes on where it can.
 */
import path from 'node:path';
import { setImmediate as setImmediatePromise } from 'node:timers/promises';
import { toPcm16, type AudioFormat } from '../../audio/format';
import type { Logger } from '../../shared/logger';
import { interruptsOnSpeechStart, pausesOnSpeech, turnPolicyOf } from '../../shared/turn-policy';
import { ApplicationFailure } from '@temporalio/common';
import { DTMF_DIGITS, dtmfAudio } from '../../audio/dtmf';
import type { EndReason, GatewayEvent, SendDtmfResult, SpeechOutcome } from '../../../workflows/call-definitions';
import { observeVadDecisionLag } from '../../observability/metrics';
import { ArrivalClock } from '../turns/arrival-clock';
import type { CallMediaOptions, CloseReason, MediaClosure } from './call-media-options';
import { ConversationMirror } from '../turns/conversation-mirror';
import { DtmfGatherer, dtmfInputText } from '../turns/dtmf-gatherer';
import { GOODBYE_AFTER_SPEECH_MS, sayGoodbye } from './goodbye';
import { LatencyMetrics } from '../metrics/latency-metrics';
import { fanOut, type PipelineObserver } from '../metrics/pipeline-observer';
import { TurnSpans } from '../metrics/turn-spans';
import { NoiseSuppressor } from '../noise/noise-suppressor';
import { WavRecorder } from '../recording/wav-recorder';
import { SpeechOut } from '../speech/speech-out';
import { SttLink } from '../stt/stt-link';
import { TurnDetector, type CompletedTurn } from '../turns/turn-detector';
import { UtteranceDelivery } from '../workflow-link/utterance-delivery';
import { vadParamsFromPipeline, VadAnalyzer } from '../vad/vad-analyzer';
import { runVoiceTurn } from '../turns/voice-turn';
import { PrefetchingRetriever } from '../../knowledge/prefetch';
import { prefetchKnowledge } from '../../knowledge/turn-knowledge';
import { WorkflowReports } from '../workflow-link/workflow-reports';
import { VoicemailWatch, type VoicemailCall } from '../voicemail/voicemail-watch';

export class CallMedia {
  readonly callId: string;
  readonly streamSid: string;
  readonly format: AudioFormat;
  readonly recordingPath: string;
  readonly closed: Promise<MediaClosure>;
  /** Reporting to the workflow: the event log and the signals. */
  readonly reports: WorkflowReports;
  /** Where a caller utterance goes: the armed turn, or a report to the workflow. */
  readonly delivery: UtteranceDelivery;
  /** Agent speech: TTS → playback, the greeting, speak requests, barge-in. */
  readonly speech: SpeechOut;
  /** Latency metrics and the turn spans, watching the pipeline from the side. */
  readonly observer: PipelineObserver;
  /** The call's turns in its trace (docs/tracing.md); inert while tracing is off. */
  readonly turnSpans: TurnSpans;
  /** What the gateway knows of the conversation (to answer alone while Temporal is away). */
  readonly conversation = new ConversationMirror();
  readonly knowledge?: PrefetchingRetriever; // this call's `auto` searches (voice-turn.ts), with their prefetches

  private readonly opts: CallMediaOptions;
  private readonly log: Logger;
  private readonly recorder: WavRecorder;
  private readonly arrivals: ArrivalClock;
  private readonly vad: VadAnalyzer;
  /** RNNoise before the VAD and the STT (`noise_suppression: rnnoise`), else null. */
  private readonly noise: NoiseSuppressor | null;
  private readonly stt: SttLink;
  private readonly turns: TurnDetector;
  /** The caller's keypresses, gathered into inputs (dtmf-gatherer.ts). */
  private readonly keys: DtmfGatherer;
  /** Answering-machine detection (outbound calls of agents that ask for it). */
  readonly voicemail: VoicemailWatch | null;
  private agentPcm = new Int16Array(0);
  private closing = false;
  /** The gateway ends the call (Temporal away past the bound, a drain): no further turns. */
  private leaving = false;
  private closedBy: CloseReason | null = null;
  private failure: MediaClosure['error'];
  /** The drain's goodbye: what the caller heard, and its speech events. */
  private goodbye: { heardText: string; events: GatewayEvent[] } | undefined;
  private resolveClosed!: (c: MediaClosure) => void;

  /** performance.now() when its stream started. */
  get startPerf(): number {
    return this.opts.startPerf;
  }

  /** Whether the call's workflow has asked this gateway anything yet (voice_workflow_first_request_seconds). */
  heardFromWorkflow = false;

  constructor(opts: CallMediaOptions) {
    this.opts = opts;
    if (opts.knowledge) this.knowledge = new PrefetchingRetriever(opts.knowledge);
    this.callId = opts.callId;
    this.streamSid = opts.streamSid;
    this.format = opts.format;
    this.log = opts.log;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    const { callId, format, config, log } = opts;
    this.reports = new WorkflowReports({
      callId,
      workflow: opts.workflow,
      ...(opts.sendConnected ? { sendConnected: opts.sendConnected } : {}),
      activities: opts.activities,
      reachability: opts.reachability,
      log,
      orphaned: () => void this.close('closed', 1011, 'call workflow not running'),
    });
    const events = this.reports.events;
    this.recordingPath = path.join(config.dataDir, 'recordings', opts.recordingPart ? `${callId}-${opts.recordingPart}.wav` : `${callId}.wav`);
    this.recorder = new WavRecorder({
      path: this.recordingPath,
      sampleRate: format.sampleRate,
      onError: (err) => events.error(`recording failed: ${err.message}`, 'recording'),
    });
    const { llm } = opts;
    const neverCancelled = new AbortController().signal;
    const { runJournal } = opts;
    this.delivery = new UtteranceDelivery(this.reports, {
      conversation: this.conversation,
      policy: turnPolicyOf(opts.voice.pipeline, opts.voice.stt.language),
      ...(llm ? { answerAlone: (req) => runVoiceTurn(this, llm(req.provider), req, neverCancelled) } : {}),
      heardWhole: (id) => this.speech.heardWhole(id),
      ...(opts.runsTurns ? { runsTurns: opts.runsTurns } : {}),
      ...(runJournal ? { journal: (turn) => runJournal.write(callId, turn) } : {}),
    });
    this.reports.onStalled = () => this.delivery.answerPendingAlone();
    this.turnSpans = new TurnSpans(callId, { stt: opts.voice.stt, tts: opts.voice.tts });
    this.observer = fanOut(new LatencyMetrics(events, opts.startPerf), this.turnSpans);

    // Caller audio in: VAD and STT feed the turn detector, which decides barge-ins and utterances.
    const pipeline = opts.voice.pipeline;
    // The turn policy in the agent's language with its own phrases, built once for the call.
    const policy = turnPolicyOf(pipeline, opts.voice.stt.language);
    this.turns = new TurnDetector(policy, {
      agentSpeaking: () => this.speech.playback.speaking,
      // A goodbye before the gateway hangs up is heard to its end: cut short, the caller would
      // hear half a sentence and then the line drop.
      bargeIn: () => {
        if (!this.leaving) this.speech.bargeIn();
      },
      finalize: () => this.stt.finalize(),
      finalWaitMs: () => this.stt.finalWaitMs,
      utterance: (turn) => this.utterance(turn),
      resumed: (reason) => this.reports.events.add('agent_resumed', { reason }),
      paused: () => {
        if (!this.speech.pressingKeys && !this.leaving) this.speech.playback.takeBack();
      },
      arrivalPerf: (audioMs) => this.arrivals.arrivalOf(audioMs),
      // The armed turn's search starts on the words so far; not over the agent (a backchannel, a barge-in).
      heardSoFar: (text) => !this.speech.playback.speaking && prefetchKnowledge(this.knowledge, this.delivery.requestIfSaid(text)),
    });
    this.keys = new DtmfGatherer({ timeoutSecs: pipeline.dtmf_timeout_secs ?? 2, maxDigits: pipeline.dtmf_max_digits ?? 32 }, (digits) =>
      this.utterance({ text: dtmfInputText(digits), duringAgentSpeech: false, speechEndPerf: null, vadStopPerf: null, sttTtfbMs: null }),
    );
    this.arrivals = new ArrivalClock(format.sampleRate);
    this.noise = pipeline.noise_suppression === 'rnnoise' ? this.noiseSuppressor() : null;
    this.vad = new VadAnalyzer(opts.vad.createStream(format.sampleRate as 8000 | 16000), vadParamsFromPipeline(pipeline), (e) => {
      const now = performance.now();
      // How long the audio that decided waited here: the share of a barge-in or a turn the
      // gateway adds before the VAD even knows (a busy event loop, the VAD batch or thread).
      const decidedBy = this.arrivals.arrivalOf(e.detected_at_ms);
      if (decidedBy !== null) observeVadDecisionLag(e.type === 'speech_started' ? 'start' : 'stop', now - decidedBy);
      if (e.type === 'speech_started') this.observer.callerSpeechStarted(now, this.arrivals.arrivalOf(e.at_ms + 1000 / format.sampleRate));
      this.voicemail?.onVad(e);
      this.turns.onVad(e, now);
    });
    this.voicemail = opts.voice.voicemail ? new VoicemailWatch(this.voicemailCall(), opts.voice.voicemail, format.sampleRate) : null;
    this.stt = new SttLink({
      callId,
      format,
      config,
      events,
      log,
      stt: opts.voice.stt,
      onTranscript: (t) => this.turns.onTranscript(t),
      // A call nobody can hear is over: the workflow records it failed (end_reason error).
      onUnavailable: (message) => this.fail(message, 'stt'),
    });

    // Speech out: TTS → playback → the socket and the recording's agent channel.
    const { out } = opts;
    // Only when speech start alone interrupts (the turn policy): holding for every backchannel
    // onset would chop the agent's speech.
    // Or when speech over the agent pauses it (pause at once, decide after): held from the VAD's
    // first suspicion until the turn detector decides.
    const holdsOnSpeechStart = interruptsOnSpeechStart(policy) || pausesOnSpeech(policy);
    this.speech = new SpeechOut({
      callId,
      format,
      frameMs: opts.frameMs,
      tts: opts.voice.tts,
      config,
      spares: opts.ttsSpares,
      events,
      log,
      out: {
        media: (frame) => out.media(frame),
        mark: (name) => out.mark(name),
        clear: () => out.clear(),
        sent: (frame, slotPerf) => this.recordAgent(frame, slotPerf),
      },
      // Keys the agent presses play out whole: an IVR talking over them must not cut them.
      hold: () => ((holdsOnSpeechStart && this.vad.state === 'starting') || this.turns.holdsAgent) && !this.speech.pressingKeys,
      began: () => this.turns.onAgentSpeech(),
      observer: this.observer,
    });
  }

  get isClosed(): boolean {
    return this.closing;
  }

  /** Why the stream closed (null while open). */
  get closeReason(): CloseReason | null {
    return this.closedBy;
  }

  /**
   * Caller audio: 16-bit PCM at the stream's rate, `timestampMs` since the stream started (null:
   * now). The VAD, the STT and the recorder copy what they need: `pcm` may be a reused buffer.
   */
  onCallerAudio(pcm: Int16Array, timestampMs: number | null, arrivedPerf = performance.now()): void {
    if (this.closing || pcm.length === 0) return;
    this.arrivals.add(pcm.length, arrivedPerf);
    // Denoised audio is on the stream's timeline (noise-suppressor.ts), a few ms behind the raw.
    const heard = this.noise ? this.noise.process(pcm) : pcm;
    if (heard.length > 0) this.vad.push(heard);
    // Raw: an answering machine's beep is a steady tone, the kind of sound RNNoise removes.
    this.voicemail?.push(pcm);
    const atMs = timestampMs !== null && Number.isFinite(timestampMs) && timestampMs >= 0 ? timestampMs : performance.now() - this.opts.startPerf;
    // The recording's caller channel keeps what the caller sent, not what the VAD and STT heard.
    this.recorder.writeCaller(pcm, atMs);
    if (heard.length > 0) this.stt.send(heard, this.vad.state === 'quiet');
  }

  /** The call's suppressor; one that cannot start is an error event, and the call goes on without. */
  private noiseSuppressor(): NoiseSuppressor | null {
    try {
      return new NoiseSuppressor(this.format.sampleRate);
    } catch (err) {
      this.log.error('noise suppression unavailable', { callId: this.callId, error: (err as Error).message });
      this.reports.events.error(`noise suppression unavailable: ${(err as Error).message}`, 'noise');
      return null;
    }
  }

  /**
   * A caller keypress (any vendor's `dtmf`): recorded as a `dtmf` event, it interrupts the agent
   * like speech does, and joins the input being gathered.
   */
  onDtmf(digit: string): void {
    if (this.closing || this.leaving) return;
    this.reports.events.add('dtmf', { digit });
    if (this.speech.playback.speaking) this.speech.bargeIn();
    this.keys.push(digit);
  }

  /**
   * send_dtmf: in-band DTMF tones in the stream's own format, after whatever is queued. Every
   * vendor here gets tones: none has a way to send digits that keeps its media stream running
   * (docs/phone-operations.md).
   */
  async pressKeys(utteranceId: string, digits: string): Promise<SendDtmfResult> {
    if (!DTMF_DIGITS.test(digits)) throw ApplicationFailure.nonRetryable(`not DTMF digits: ${JSON.stringify(digits)}`, 'InvalidDigits');
    const { playedMs } = await this.speech.pressKeys(utteranceId, dtmfAudio(digits, this.format));
    return { method: 'inband', playedMs: Math.round(playedMs), events: this.reports.events.drain() };
  }

  // ---- ending ----------------------------------------------------------------------------------

  /**
   * Temporal has not taken this call's reports for longer than the outage bound: the caller hears
   * `message` and the call ends `failed` (recorded when Temporal is back; the reports stay queued).
   */
  giveUpOnTemporal(boundSecs: number, message: string): void {
    if (this.closing || this.leaving || this.reports.outbox.stalledForMs < boundSecs * 1000) return;
    const reason = `Temporal unreachable for more than ${boundSecs} s`;
    this.log.error('ending a call: Temporal unreachable past the outage bound', { callId: this.callId, bound_secs: boundSecs });
    void this.leave('outage', message, 0).then(() => {
      this.failure = { message: reason, context: 'temporal' };
      return this.close('failed', 1011, reason);
    });
  }

  /**
   * This gateway's drain deadline passed: what the agent is saying may finish (bounded), the
   * caller hears `goodbye`, and the stream closes with reason `drained` (the workflow ends the
   * call `completed` / `agent_ended` and hangs the provider up). Once; resolves when closed.
   */
  endForDrain(goodbye: string): Promise<MediaClosure> {
    if (this.closing || this.leaving) return this.closed;
    this.log.info('ending a call: the gateway is draining and its deadline passed', { callId: this.callId });
    return this.leave('drain', goodbye, GOODBYE_AFTER_SPEECH_MS).then((spoken) => {
      this.goodbye = { heardText: spoken?.heardText ?? '', events: spoken?.events ?? [] };
      return this.close('drained', 1000, 'media gateway drained');
    });
  }

  /** What the voicemail watch acts through: reports, silencing the agent, the message, the close. */
  private voicemailCall(): VoicemailCall {
    return {
      callId: this.callId,
      log: this.log,
      events: this.reports.events,
      report: (verdict) => this.reports.answeredBy(verdict),
      silence: (utteranceId) => {
        this.leaving = true;
        this.speech.playback.only(utteranceId);
        this.speech.bargeIn();
      },
      speak: (utteranceId, text) => this.leave(utteranceId, text, 0),
      finish: (message, events) => {
        if (this.closing) return;
        this.goodbye = { heardText: message ?? '', events };
        void this.close('voicemail', 1000, 'answering machine');
      },
    };
  }

  /** No further turns; speech playing gets `afterSpeechMs`, then `text` plays (undefined: it could not). */
  private leave(utteranceId: string, text: string, afterSpeechMs: number): Promise<SpeechOutcome | undefined> {
    this.leaving = true;
    return sayGoodbye(this.speech, { callId: this.callId, utteranceId, text }, afterSpeechMs);
  }

  /** `endMedia`: lets queued speech finish (bounded), then closes the stream and the recording. */
  async end(reason: EndReason, maxWaitMs = 10_000): Promise<MediaClosure> {
    if (!this.closing) {
      const played = await this.speech.playback.idle(maxWaitMs);
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
    this.keys.close();
    this.voicemail?.close();
    this.noise?.close();
    // A gateway shutting down fails the media session: the armed turn must complete on its own.
    const releasedArm = this.delivery.close(reason !== 'shutdown');
    // Once what the runs held has reached the workflow, their journal is no longer needed. The
    // run's result enters the outbox a tick after the close resolves it, hence the setImmediate.
    const journal = this.opts.runJournal;
    if (journal) void setImmediatePromise().then(() => this.reports.settled).then(() => journal.clear(this.callId));
    this.speech.close();
    this.turnSpans.close();
    this.opts.out.close(code, message);
    void Promise.allSettled([this.stt.close(), this.speech.tts.close()]);
    void (async () => {
      try {
        await this.recorder.close(endMs);
      } catch (err) {
        this.log.error('recording could not be finalised', { callId: this.callId, error: (err as Error).message });
      }
      // What the gateway reported before the close reaches the workflow first: the media
      // session's result queues behind it in the call's outbox.
      this.resolveClosed({
        reason,
        events: [...(this.goodbye?.events ?? []), ...this.reports.events.drain()],
        ...(this.failure ? { error: this.failure } : {}),
        ...(this.goodbye?.heardText ? { goodbye: this.goodbye.heardText } : {}),
        ...(releasedArm ? { releasedArm } : {}),
      });
    })();
    return this.closed;
  }

  private recordAgent(frame: Buffer, slotPerf: number): void {
    if (this.agentPcm.length < frame.length) this.agentPcm = new Int16Array(frame.length);
    const atMs = Math.max(0, slotPerf - this.opts.startPerf);
    this.recorder.writeAgent(toPcm16(frame, this.format, this.agentPcm), atMs);
  }

  private utterance(turn: CompletedTurn): void {
    if (this.closing || this.leaving) return;
    this.observer.utterance(turn);
    this.delivery.deliver(turn);
  }
}
