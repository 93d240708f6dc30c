/**
 * A call's speech out: agent utterances from text to the provider socket — the TTS link (text →
 * audio in the stream's format, tts-link.ts) into playback (paced frames, playback.ts) — and what
 * acts on them as a whole: the greeting, synthesised as soon as the stream connects; `speak`
 * requests; the LLM streams of voice turns; barge-in, which silences the line and stops their
 * TTS and LLM. Reports `tts_started`, `tts_stopped` and `interruption` events.
 */
import type { AudioFormat } from '../../audio/format';
import type { Config } from '../../config';
import type { Logger } from '../../shared/logger';
import type { SpeakRequest, SpeechOutcome, VoiceConfig } from '../../../workflows/call-definitions';
import type { GatewayEventLog } from '../workflow-link/events';
import type { AgentSpeech, SpeechResult } from './agent-speech';
import { Playback, type PlaybackOutput } from './playback';
import type { PipelineObserver } from '../metrics/pipeline-observer';
import { splitSentences } from './sentences';
import { TtsLink } from './tts-link';
import type { TtsSpares } from './tts-spares';

/** Utterances whose ending is remembered (heardWhole). */
const HEARD_KEPT = 16;

export interface SpeechOutOptions {
  callId: string;
  /** The stream's audio format, and the length of each outgoing frame (default 20 ms). */
  format: AudioFormat;
  frameMs?: number;
  tts: VoiceConfig['tts'];
  config: Config;
  /** The gateway's ready TTS sessions (see tts-spares.ts). */
  spares?: TtsSpares;
  events: GatewayEventLog;
  log: Logger;
  /** The provider socket, and each frame as it is sent (the recording's agent channel). */
  out: PlaybackOutput;
  /** While true no new frames are sent (Playback's hold). */
  hold(): boolean;
  /** An agent utterance began. */
  began(): void;
  observer: Pick<PipelineObserver, 'agentSpeechStarted' | 'bargedIn'>;
}

export class SpeechOut {
  readonly playback: Playback;
  /** Where speak requests and voice turns begin, feed, end and stop their utterances. */
  readonly tts: TtsLink;
  private readonly llmStreams = new Set<AbortController>();
  /** True while barge-in cuts utterances off (their `interruption` events). */
  private bargingIn = false;
  /** The greeting, started when the stream connected, until its `speak` request claims it. */
  private greeting: { utteranceId: string; text: string; speech: AgentSpeech } | null = null;
  private closed = false;
  /** Keys being pressed (send_dtmf): not cut by barge-in. */
  private keyTones = 0;
  /** How recent utterances ended: heard whole or not (an armed plan may depend on one). */
  private readonly heard = new Map<string, boolean>();

  constructor(private readonly opts: SpeechOutOptions) {
    this.playback = new Playback(
      opts.out,
      { started: (s, atPerf) => this.started(s, atPerf), finished: (s, r) => this.finished(s, r) },
      opts.hold,
      { format: opts.format, frameMs: opts.frameMs },
    );
    const { callId, format, config, events, log, spares, began } = opts;
    this.tts = new TtsLink({ callId, tts: opts.tts, format, config, events, log, playback: this.playback, spares, began });
  }

  /** An LLM stream feeding the current speech: aborted on barge-in. Returns its removal. */
  trackLlm(controller: AbortController): () => void {
    this.llmStreams.add(controller);
    if (this.closed) controller.abort();
    return () => this.llmStreams.delete(controller);
  }

  /**
   * The greeting the workflow announced (voiceConfig): synthesis starts now, when the stream has
   * connected, and its `speak` request, arriving a workflow round trip later, takes it over.
   */
  startGreeting(greeting: { utteranceId: string; text: string }): void {
    if (this.closed || !greeting.text.trim()) return;
    let speech: AgentSpeech;
    try {
      speech = this.tts.begin(greeting.utteranceId);
    } catch {
      return; // no TTS: the speak request reports it
    }
    for (const sentence of splitSentences(greeting.text)) this.tts.push(speech, sentence);
    this.tts.end(speech);
    this.greeting = { ...greeting, speech };
  }

  /** `speak`: a fixed text, sentence by sentence into TTS; resolves when played or cut off. */
  async speak(req: SpeakRequest, cancel: AbortSignal): Promise<SpeechOutcome> {
    const { events } = this.opts;
    if (!req.text.trim()) return { heardText: '', interrupted: false, characters: 0, events: events.drain() };
    const early = this.greeting;
    this.greeting = null;
    const claimed = early !== null && early.utteranceId === req.utteranceId && early.text === req.text;
    if (early && !claimed) this.tts.stop(early.speech); // not what the workflow asked for after all
    const speech = claimed ? early.speech : this.tts.begin(req.utteranceId);
    const onCancel = () => this.tts.stop(speech);
    cancel.addEventListener('abort', onCancel, { once: true });
    try {
      if (!claimed) {
        for (const sentence of splitSentences(req.text)) this.tts.push(speech, sentence);
        this.tts.end(speech);
      }
      const result = await speech.result;
      return {
        heardText: result.whole ? req.text : result.heardText,
        interrupted: result.interrupted,
        characters: speech.characters,
        events: events.drain(),
      };
    } finally {
      cancel.removeEventListener('abort', onCancel);
    }
  }

  /** True while DTMF tones the agent sends are queued or playing. */
  get pressingKeys(): boolean {
    return this.keyTones > 0;
  }

  /**
   * send_dtmf: the tones (already in the stream's format) play after whatever is queued, like an
   * utterance; resolves when they have played. Barge-in does not cut them: an IVR prompt playing
   * while the agent presses keys is the normal case, and half a tone is a wrong or lost key.
   */
  async pressKeys(id: string, audio: Buffer): Promise<{ playedMs: number }> {
    if (this.closed) return { playedMs: 0 };
    const speech = this.playback.start(id, `${id}~dtmf`);
    this.keyTones++;
    try {
      this.playback.audio(speech.ttsId, audio);
      this.playback.ttsFinished(speech.ttsId, true);
      return { playedMs: (await speech.result).playedMs };
    } finally {
      this.keyTones--;
    }
  }

  /** Barge-in: the line goes silent now; speech, TTS and LLM stop. */
  bargeIn(): void {
    if (this.closed || this.keyTones > 0) return;
    const atPerf = performance.now();
    this.bargingIn = true;
    let cut: AgentSpeech[];
    try {
      cut = this.playback.interrupt(atPerf);
    } finally {
      this.bargingIn = false;
    }
    this.opts.observer.bargedIn(cut);
    for (const s of cut) this.tts.cancel(s);
    for (const c of this.llmStreams) c.abort();
    if (cut.length) this.opts.log.debug('barge-in', { callId: this.opts.callId, utterances: cut.map((s) => s.id) });
  }

  /** The stream is gone: LLM streams abort and every utterance ends with what had played. */
  close(): void {
    this.closed = true;
    for (const c of this.llmStreams) c.abort();
    this.playback.close();
  }

  private started(speech: AgentSpeech, atPerf: number): void {
    this.opts.events.add('tts_started', { utterance_id: speech.id }, atPerf);
    this.opts.observer.agentSpeechStarted(speech, atPerf);
  }

  /** Whether the utterance `id` has finished playing whole (recent utterances only). */
  heardWhole(id: string): boolean {
    return this.heard.get(id) === true;
  }

  private finished(speech: AgentSpeech, result: SpeechResult): void {
    this.heard.set(speech.id, result.whole && !result.interrupted);
    if (this.heard.size > HEARD_KEPT) this.heard.delete(this.heard.keys().next().value!);
    if (speech.framesSent > 0) {
      this.opts.events.add('tts_stopped', { utterance_id: speech.id, duration_ms: result.playedMs, interrupted: result.interrupted });
    }
    if (result.interrupted && this.bargingIn) {
      this.opts.events.add('interruption', { utterance_id: speech.id, heard_text: result.heardText });
    }
  }
}
