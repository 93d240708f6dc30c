/**
 * One call's audio on this gateway: the pipeline between the provider's stream and the call
 * workflow. Caller audio goes to the VAD, the STT and the recording; the turn detector turns VAD
 * and transcripts into utterance signals and barge-ins; agent speech goes TTS → playback →
 * socket and recording. Activities (speak, voiceTurn, endMedia, mediaSession) act on it through
 * the methods below. Vendor failures become `error` events and the call goes on where it can.
 */
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { Config } from '../config';
import { createAgentStt, type SttStream } from '../providers/stt';
import { createAgentTts, type TtsSession } from '../providers/tts';
import type { SpeechProviderError } from '../providers/speech-socket';
import type { Logger } from '../shared/logger';
import {
  utteranceSignal,
  type EndReason,
  type GatewayEvent,
  type SpeakRequest,
  type SpeechOutcome,
  type UtteranceSignal,
  type VoiceConfig,
} from '../../workflows/call-definitions';
import { decodeMulaw } from '../audio/g711';
import { FRAME_MS } from '../audio/pcm';
import { GatewayEventLog } from './events';
import { Playback, type AgentSpeech, type SpeechResult } from './playback';
import { WavRecorder } from './recording/wav-recorder';
import { splitSentences } from './sentences';
import { TurnDetector, type CompletedTurn } from './turn-detector';
import { vadParamsFromPipeline, VadAnalyzer } from './vad/vad-analyzer';
import type { SpeechProbability } from './vad/silero';

/** How the call talks to its provider socket (Twilio Media Streams framing lives in the caller). */
export interface StreamOutput {
  media(frame: Buffer): void;
  mark(name: string): void;
  clear(): void;
  close(code: number, reason: string): void;
}

export interface CallMediaOptions {
  callId: string;
  streamSid: string;
  voice: VoiceConfig;
  config: Config;
  workflow: WorkflowHandle;
  /** Per-call speech model streams (the gateway's shared, batched Silero). */
  vad: { createStream(): SpeechProbability };
  out: StreamOutput;
  log: Logger;
  /** performance.now() when the stream started: time 0 of the recording and media timestamps. */
  startPerf: number;
}

/** `hangup`: the provider ended the stream; `closed`: the platform did; `shutdown`: this gateway stopped. */
export type CloseReason = 'hangup' | 'closed' | 'shutdown';

export interface MediaClosure {
  reason: CloseReason;
  /** Events reported after the last activity result (e.g. tts_stopped of speech cut by the hang-up). */
  events: GatewayEvent[];
}

/** Thrown by speech requests when the agent's TTS could not be set up (e.g. no API key). */
export class SpeechUnavailable extends Error {}

// Reopening a dropped STT stream: first at once, then backing off.
const STT_RECONNECT_DELAYS_MS = [0, 500, 1000, 2000, 5000];
// A TTS utterance whose text is complete but whose audio stopped arriving this long is abandoned.
const TTS_STALL_MS = 10_000;
const SIGNAL_ATTEMPTS = 3;

export class CallMedia {
  readonly callId: string;
  readonly streamSid: string;
  readonly recordingPath: string;
  readonly events = new GatewayEventLog();
  readonly playback: Playback;
  readonly closed: Promise<MediaClosure>;

  private readonly opts: CallMediaOptions;
  private readonly log: Logger;
  private readonly turns: TurnDetector;
  private readonly vad: VadAnalyzer;
  private readonly recorder: WavRecorder;
  private stt: SttStream | null = null;
  private sttFatal = false;
  private sttReconnects = 0;
  private sttTimer: NodeJS.Timeout | undefined;
  private readonly tts: TtsSession | null = null;
  private readonly ttsProblem: string | null = null;
  private readonly speeches = new Map<string, { speech: AgentSpeech; firstTextPerf: number | null; lastAudioPerf: number; textEnded: boolean }>();
  private readonly usedTtsIds = new Set<string>();
  private readonly llmStreams = new Set<AbortController>();
  private stallTimer: NodeJS.Timeout | undefined;
  private cutting: 'barge_in' | null = null;
  /** Set when an utterance was signalled: its end of speech, for the e2e latency of the reply. */
  private pendingE2e: { speechEndPerf: number; vadStopPerf: number; signalledPerf: number } | null = null;
  private signals: Promise<void> = Promise.resolve();
  private pcm = new Int16Array(FRAME_MS * 8);
  private agentPcm = new Int16Array(FRAME_MS * 8);
  private closing = false;
  private closedBy: CloseReason | null = null;
  private readonly interruptsOnSpeechStart: boolean;
  private resolveClosed!: (c: MediaClosure) => void;

  constructor(opts: CallMediaOptions) {
    this.opts = opts;
    this.callId = opts.callId;
    this.streamSid = opts.streamSid;
    this.log = opts.log;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    this.recordingPath = path.join(opts.config.dataDir, 'recordings', `${opts.callId}.wav`);
    this.recorder = new WavRecorder({
      path: this.recordingPath,
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
    );

    const pipeline = opts.voice.pipeline;
    this.interruptsOnSpeechStart = (pipeline.min_words ?? 3) <= 1;
    this.turns = new TurnDetector(pipeline.min_words ?? 3, {
      agentSpeaking: () => this.playback.speaking,
      bargeIn: () => this.bargeIn(),
      finalize: () => this.stt?.finalize(),
      utterance: (turn) => this.utterance(turn),
    });
    this.vad = new VadAnalyzer(opts.vad.createStream(), vadParamsFromPipeline(pipeline), (e) => this.turns.onVad(e));

    this.openStt();
    try {
      const { tts } = opts.voice;
      this.tts = createAgentTts(
        { tts_provider: tts.provider, tts_model: tts.model, voice: tts.voice, tts_language: tts.language, tts_settings: tts.settings },
        opts.config,
      );
      this.tts.on('audio', ({ id, audio }) => this.ttsAudio(id, audio));
      this.tts.on('done', ({ id, reason, characters }) => this.ttsDone(id, reason, characters));
      this.tts.on('error', (err) => this.events.error(err.message, 'tts', ttsErrorDetails(err)));
    } catch (err) {
      this.ttsProblem = (err as Error).message;
      this.events.error(this.ttsProblem, 'tts');
      this.log.error('TTS unavailable for call', { callId: this.callId, error: this.ttsProblem });
    }
  }

  get isClosed(): boolean {
    return this.closing;
  }

  /** Why the stream closed (null while open). */
  get closeReason(): CloseReason | null {
    return this.closedBy;
  }

  // ---- caller audio ----------------------------------------------------------------------------

  /** One media frame from the provider: base64 mu-law, `timestampMs` since the stream started. */
  onCallerAudio(payloadBase64: string, timestampMs: number): void {
    if (this.closing) return;
    const mulaw = Buffer.from(payloadBase64, 'base64');
    if (mulaw.length === 0) return;
    if (this.pcm.length < mulaw.length) this.pcm = new Int16Array(mulaw.length);
    const pcm = decodeMulaw(mulaw, this.pcm);
    // Both copy what they need: the scratch buffer is reused for the next frame.
    this.vad.push(pcm);
    this.recorder.writeCaller(pcm, Number.isFinite(timestampMs) && timestampMs >= 0 ? timestampMs : performance.now() - this.opts.startPerf);
    this.stt?.sendAudio(mulaw);
  }

  onMark(name: string): void {
    this.playback.onMark(name);
  }

  // ---- agent speech ----------------------------------------------------------------------------

  /** Starts an agent utterance; a reused id (an activity retry) gets a fresh TTS id. */
  beginSpeech(utteranceId: string): AgentSpeech {
    if (this.ttsProblem || !this.tts) throw new SpeechUnavailable(this.ttsProblem ?? 'TTS unavailable');
    let ttsId = utteranceId;
    for (let n = 2; this.usedTtsIds.has(ttsId); n++) ttsId = `${utteranceId}~${n}`;
    this.usedTtsIds.add(ttsId);
    const speech = this.playback.start(utteranceId, ttsId);
    if (speech.state !== 'active') return speech;
    this.speeches.set(ttsId, { speech, firstTextPerf: null, lastAudioPerf: performance.now(), textEnded: false });
    this.tts.startUtterance(ttsId);
    return speech;
  }

  /** One sentence of the utterance: TTS is asked for its audio at once. */
  sayMore(speech: AgentSpeech, sentence: string): void {
    const entry = this.speeches.get(speech.ttsId);
    if (!entry || speech.state !== 'active' || !sentence) return;
    entry.firstTextPerf ??= performance.now();
    this.playback.addSentence(speech, sentence);
    this.tts!.pushText(speech.ttsId, sentence);
  }

  /** No more text for this utterance. */
  endSpeech(speech: AgentSpeech): void {
    const entry = this.speeches.get(speech.ttsId);
    if (!entry || speech.state !== 'active') return;
    entry.textEnded = true;
    entry.lastAudioPerf = performance.now();
    this.tts!.endText(speech.ttsId);
    this.armStallCheck();
  }

  /** Stops one utterance (its activity was cancelled or its LLM failed). */
  stopSpeech(speech: AgentSpeech): void {
    this.playback.stop(speech);
    if (this.speeches.has(speech.ttsId)) this.tts?.cancel(speech.ttsId);
  }

  /** An LLM stream feeding the current speech: aborted on barge-in. */
  trackLlm(controller: AbortController): () => void {
    this.llmStreams.add(controller);
    if (this.closing) controller.abort();
    return () => this.llmStreams.delete(controller);
  }

  /** `speak`: a fixed text, sentence by sentence into TTS; resolves when played or cut off. */
  async speak(req: SpeakRequest, cancel: AbortSignal): Promise<SpeechOutcome> {
    if (!req.text.trim()) return { heardText: '', interrupted: false, characters: 0, events: this.events.drain() };
    const speech = this.beginSpeech(req.utteranceId);
    const onCancel = () => this.stopSpeech(speech);
    cancel.addEventListener('abort', onCancel, { once: true });
    try {
      for (const sentence of splitSentences(req.text)) this.sayMore(speech, sentence);
      this.endSpeech(speech);
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
    for (const s of cut) if (this.speeches.has(s.ttsId)) this.tts?.cancel(s.ttsId);
    for (const c of this.llmStreams) c.abort();
    if (cut.length) this.log.debug('barge-in', { callId: this.callId, utterances: cut.map((s) => s.id) });
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

  /**
   * Closes everything once (see CloseReason). Resolves when the recording is final.
   */
  close(reason: CloseReason, code = 1000, message = ''): Promise<MediaClosure> {
    if (this.closing) return this.closed;
    this.closing = true;
    this.closedBy = reason;
    const endMs = performance.now() - this.opts.startPerf;
    this.turns.close();
    for (const c of this.llmStreams) c.abort();
    this.playback.close();
    if (this.stallTimer) clearInterval(this.stallTimer);
    if (this.sttTimer) clearTimeout(this.sttTimer);
    this.opts.out.close(code, message);
    const stt = this.stt;
    this.stt = null;
    void Promise.allSettled([stt?.close(), this.tts?.close()]);
    void (async () => {
      try {
        await this.recorder.close(endMs);
      } catch (err) {
        this.log.error('recording could not be finalised', { callId: this.callId, error: (err as Error).message });
      }
      await this.signals.catch(() => undefined);
      this.resolveClosed({ reason, events: this.events.drain() });
    })();
    return this.closed;
  }

  // ---- internals -------------------------------------------------------------------------------

  private openStt(): void {
    if (this.closing || this.sttFatal) return;
    const { stt: s } = this.opts.voice;
    let stt: SttStream;
    try {
      stt = createAgentStt({ stt_provider: s.provider, stt_model: s.model, stt_language: s.language, stt_settings: s.settings }, this.opts.config);
    } catch (err) {
      this.sttFatal = true;
      this.events.error((err as Error).message, 'stt');
      this.log.error('STT unavailable for call', { callId: this.callId, error: (err as Error).message });
      return;
    }
    this.stt = stt;
    stt.on('transcript', (t) => {
      this.sttReconnects = 0;
      this.turns.onTranscript(t);
    });
    stt.on('error', (err) => {
      if (err.details.fatal) this.sttFatal = true;
      this.events.error(err.message, 'stt');
    });
    stt.on('closed', () => {
      if (this.stt !== stt || this.closing) return;
      this.stt = null;
      // A dropped stream is reopened so the caller is heard again; a rejected one is not.
      if (this.sttFatal) return;
      const delay = STT_RECONNECT_DELAYS_MS[Math.min(this.sttReconnects++, STT_RECONNECT_DELAYS_MS.length - 1)]!;
      this.sttTimer = setTimeout(() => this.openStt(), delay);
    });
  }

  private ttsAudio(ttsId: string, mulaw: Buffer): void {
    const entry = this.speeches.get(ttsId);
    if (!entry) return;
    const now = performance.now();
    if (entry.speech.audioBytes === 0 && entry.firstTextPerf !== null) {
      this.events.add('ttfb_metric', { processor: 'tts', ms: Math.round(now - entry.firstTextPerf), utterance_id: entry.speech.id }, now);
    }
    entry.lastAudioPerf = now;
    this.playback.audio(ttsId, mulaw);
  }

  private ttsDone(ttsId: string, reason: string, characters: number): void {
    const entry = this.speeches.get(ttsId);
    this.speeches.delete(ttsId);
    if (characters > 0) {
      this.events.add('tts_usage', { characters, provider: this.tts?.provider, utterance_id: entry?.speech.id ?? ttsId });
    }
    this.playback.ttsFinished(ttsId, reason === 'completed');
  }

  private armStallCheck(): void {
    if (this.stallTimer || this.closing) return;
    this.stallTimer = setInterval(() => {
      const now = performance.now();
      let waiting = 0;
      for (const [ttsId, entry] of this.speeches) {
        if (!entry.textEnded) continue;
        waiting++;
        if (now - entry.lastAudioPerf > TTS_STALL_MS) {
          this.events.error(`TTS sent no audio for ${TTS_STALL_MS / 1000} s; utterance abandoned`, 'tts', { utterance_id: entry.speech.id });
          this.tts?.cancel(ttsId);
        }
      }
      if (waiting === 0) {
        clearInterval(this.stallTimer);
        this.stallTimer = undefined;
      }
    }, 1000);
    this.stallTimer.unref();
  }

  private recordAgent(frame: Buffer, slotPerf: number): void {
    if (this.agentPcm.length < frame.length) this.agentPcm = new Int16Array(frame.length);
    const atMs = Math.max(0, slotPerf - this.opts.startPerf);
    this.recorder.writeAgent(decodeMulaw(frame, this.agentPcm), atMs);
  }

  private speechStarted(speech: AgentSpeech, atPerf: number): void {
    this.events.add('tts_started', { utterance_id: speech.id }, atPerf);
    const e2e = this.pendingE2e;
    if (e2e && speech.createdPerf >= e2e.signalledPerf) {
      this.pendingE2e = null;
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
    if (turn.sttTtfbMs !== null) this.events.add('ttfb_metric', { processor: 'stt', ms: turn.sttTtfbMs });
    if (!turn.duringAgentSpeech && turn.speechEndPerf !== null && turn.vadStopPerf !== null) {
      this.pendingE2e = { speechEndPerf: turn.speechEndPerf, vadStopPerf: turn.vadStopPerf, signalledPerf: performance.now() };
    }
    const payload: UtteranceSignal = { text: turn.text, duringAgentSpeech: turn.duringAgentSpeech, events: this.events.drain() };
    // One after the other, so the workflow sees utterances in the order they were spoken.
    this.signals = this.signals.then(() => this.signal(payload));
  }

  private async signal(payload: UtteranceSignal): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.opts.workflow.signal(utteranceSignal, payload);
        return;
      } catch (err) {
        const notFound = (err as Error).name === 'WorkflowNotFoundError';
        if (notFound || attempt >= SIGNAL_ATTEMPTS) {
          this.log.error('could not deliver an utterance to the call workflow', { callId: this.callId, error: (err as Error).message });
          // The workflow is gone: nobody will ever end this stream but us.
          if (notFound) void this.close('closed', 1011, 'call workflow not running');
          return;
        }
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  }
}

function ttsErrorDetails(err: SpeechProviderError): Record<string, unknown> {
  return err.details.utteranceId ? { utterance_id: err.details.utteranceId } : {};
}
