/**
 * A call's streaming TTS session and the agent utterances it is producing: created at call start
 * (warm before the greeting), asked for audio in the stream's own format (so playback sends it
 * unconverted), each sentence pushed the moment it exists. An utterance is begun, fed sentences,
 * ended or stopped here (speak requests and voice turns); its audio goes to playback, `done` ends
 * it, and one whose audio stops arriving for TTS_STALL_MS is abandoned. Reports `tts_usage`, the
 * `tts` time to first audio, and vendor errors as call events.
 */
import type { AudioFormat } from '../../audio/format';
import type { Config } from '../../config';
import { createAgentTts, type TtsSession } from '../../providers/tts';
import type { SpeechProviderError } from '../../providers/speech-socket';
import { ttsRole, type SocketRole } from '../../providers/socket-census';
import { countProviderError, observeTurnStage } from '../../observability/metrics';
import type { Logger } from '../../shared/logger';
import type { VoiceConfig } from '../../../workflows/call-definitions';
import type { GatewayEventLog } from '../workflow-link/events';
import type { AgentSpeech } from './agent-speech';
import type { Playback } from './playback';
import type { TtsSpares } from './tts-spares';

// A TTS utterance whose text is complete but whose audio stopped arriving this long is abandoned.
const TTS_STALL_MS = 10_000;

/** Thrown by speech requests when the agent's TTS could not be set up (e.g. no API key). */
export class SpeechUnavailable extends Error {}

interface Utterance {
  speech: AgentSpeech;
  firstTextPerf: number | null;
  lastAudioPerf: number;
  textEnded: boolean;
}

export interface TtsLinkOptions {
  callId: string;
  tts: VoiceConfig['tts'];
  format: AudioFormat;
  config: Config;
  playback: Playback;
  events: GatewayEventLog;
  log: Logger;
  /** Connected sessions kept ready per voice (the greeting then needs no handshake). */
  spares?: TtsSpares;
  /** An agent utterance began (the caller may already be talking: see TurnDetector.onAgentSpeech). */
  began?(): void;
}

export class TtsLink {
  private readonly session: TtsSession | null = null;
  private readonly problem: string | null = null;
  /** Hands the session back to the spares' bookkeeping when the call ends (tts-spares.ts). */
  private readonly release: () => void = () => {};
  private readonly utterances = new Map<string, Utterance>();
  private readonly usedIds = new Set<string>();
  private stallTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly opts: TtsLinkOptions) {
    const { tts } = opts;
    try {
      const open = (role: SocketRole) =>
        createAgentTts(
          { tts_provider: tts.provider, tts_model: tts.model, voice: tts.voice, tts_language: tts.language, tts_settings: tts.settings },
          opts.config,
          { format: opts.format, role },
        );
      const voice = JSON.stringify([tts.provider, tts.model, tts.voice, tts.language, tts.settings, opts.format]);
      const lease = opts.spares ? opts.spares.take(voice, open) : { session: open(ttsRole()), release: () => {} };
      this.session = lease.session;
      this.release = lease.release;
      this.session.on('audio', ({ id, audio }) => this.audio(id, audio));
      this.session.on('done', ({ id, reason, characters }) => this.done(id, reason, characters));
      this.session.on('error', (err) => {
        countProviderError('tts', tts.provider);
        opts.events.error(err.message, 'tts', errorDetails(err));
      });
    } catch (err) {
      this.problem = (err as Error).message;
      countProviderError('tts', tts.provider);
      opts.events.error(this.problem, 'tts');
      opts.log.error('TTS unavailable for call', { callId: opts.callId, error: this.problem });
    }
  }

  /** Starts an agent utterance; a reused id (an activity retry) gets a fresh TTS id. */
  begin(utteranceId: string): AgentSpeech {
    if (this.problem || !this.session) throw new SpeechUnavailable(this.problem ?? 'TTS unavailable');
    let ttsId = utteranceId;
    for (let n = 2; this.usedIds.has(ttsId); n++) ttsId = `${utteranceId}~${n}`;
    this.usedIds.add(ttsId);
    const speech = this.opts.playback.start(utteranceId, ttsId);
    if (speech.state === 'active') {
      this.utterances.set(ttsId, { speech, firstTextPerf: null, lastAudioPerf: performance.now(), textEnded: false });
      this.session.startUtterance(ttsId);
    }
    this.opts.began?.();
    return speech;
  }

  /** One sentence of the utterance: TTS is asked for its audio at once. */
  push(speech: AgentSpeech, sentence: string): void {
    const entry = this.utterances.get(speech.ttsId);
    if (!entry || speech.state !== 'active' || !sentence) return;
    entry.firstTextPerf ??= performance.now();
    this.opts.playback.addSentence(speech, sentence);
    this.session!.pushText(speech.ttsId, sentence);
  }

  /** No more text for this utterance. */
  end(speech: AgentSpeech): void {
    const entry = this.utterances.get(speech.ttsId);
    if (!entry || speech.state !== 'active') return;
    entry.textEnded = true;
    entry.lastAudioPerf = performance.now();
    this.session!.endText(speech.ttsId);
    this.armStallCheck();
  }

  /** Stops one utterance, audio and TTS (its activity was cancelled or its LLM failed). */
  stop(speech: AgentSpeech): void {
    this.opts.playback.stop(speech);
    this.cancel(speech);
  }

  /** Stops producing an utterance's audio (barge-in, a cancelled activity). */
  cancel(speech: AgentSpeech): void {
    if (this.utterances.has(speech.ttsId)) this.session?.cancel(speech.ttsId);
  }

  close(): Promise<void> {
    this.closed = true;
    if (this.stallTimer) clearInterval(this.stallTimer);
    this.release();
    return this.session ? this.session.close() : Promise.resolve();
  }

  get provider(): string | undefined {
    return this.session?.provider;
  }

  private audio(ttsId: string, audio: Buffer): void {
    const entry = this.utterances.get(ttsId);
    if (!entry) return;
    const now = performance.now();
    if (entry.speech.audioBytes === 0 && entry.firstTextPerf !== null) {
      this.opts.events.add('ttfb_metric', { processor: 'tts', ms: Math.round(now - entry.firstTextPerf), utterance_id: entry.speech.id }, now);
      observeTurnStage('tts_first_audio', now - entry.firstTextPerf);
    }
    entry.lastAudioPerf = now;
    this.opts.playback.audio(ttsId, audio);
  }

  private done(ttsId: string, reason: string, characters: number): void {
    const entry = this.utterances.get(ttsId);
    this.utterances.delete(ttsId);
    if (characters > 0) {
      this.opts.events.add('tts_usage', { characters, provider: this.session?.provider, utterance_id: entry?.speech.id ?? ttsId });
    }
    this.opts.playback.ttsFinished(ttsId, reason === 'completed');
  }

  private armStallCheck(): void {
    if (this.stallTimer || this.closed) return;
    this.stallTimer = setInterval(() => {
      const now = performance.now();
      let waiting = 0;
      for (const [ttsId, entry] of this.utterances) {
        if (!entry.textEnded) continue;
        waiting++;
        if (now - entry.lastAudioPerf > TTS_STALL_MS) {
          this.opts.events.error(`TTS sent no audio for ${TTS_STALL_MS / 1000} s; utterance abandoned`, 'tts', { utterance_id: entry.speech.id });
          this.session?.cancel(ttsId);
        }
      }
      if (waiting === 0) {
        clearInterval(this.stallTimer);
        this.stallTimer = undefined;
      }
    }, 1000);
    this.stallTimer.unref();
  }
}

function errorDetails(err: SpeechProviderError): Record<string, unknown> {
  return err.details.utteranceId ? { utterance_id: err.details.utteranceId } : {};
}
