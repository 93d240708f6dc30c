/**
 * Azure speech-to-text through the Speech SDK: caller audio (16-bit PCM at the stream's rate) is
 * written to a push stream, continuous recognition runs on it, `recognizing` events become
 * interim transcripts and `recognized` ones finals (`speechFinal`: Azure's segmentation decided
 * the phrase ended).
 *
 * Azure has no "finalize now": Azure ends a phrase after `segmentation_silence_ms` of silence
 * (400 ms here, shorter than Azure's default). finalize() with a phrase still open (a hypothesis
 * came, or loud audio went out since the last final) writes that much silence into the stream so
 * the phrase closes now, and marks the next final as its answer; with no phrase open it answers
 * at once with an empty final, so the turn does not wait for nothing.
 */
import { EventEmitter } from 'node:events';
import * as sdk from 'microsoft-cognitiveservices-speech-sdk';
import { decodeMulaw } from '../../../audio/g711';
import { pcmFromBytes, pcmToBytes, rms } from '../../../audio/pcm';
import { createLogger } from '../../../shared/logger';
import { azureCancellationError, azureLocale, azureSpeechConfig, type AzureSpeechConnection } from '../../azure-speech/speech-config';
import { readyLatch, SpeechProviderError } from '../../speech-socket';
import { sttRole, vendorConnection } from '../../socket-census';
import type { SttEvents, SttStream, SttTranscript } from '../types';

const log = createLogger('stt.azure');

export const AZURE_STT_DEFAULTS = {
  language: 'en-US',
  segmentationSilenceMs: 400,
  closeTimeoutMs: 2000,
} as const;

const TICKS_PER_SEC = 10_000_000;
// 16-bit RMS above which audio counts as speech for finalize() (about -45 dBFS).
const SPEECH_RMS = 180;

export interface AzureSttOptions {
  connection: AzureSpeechConnection;
  language?: string;
  sampleRate: number;
  encoding?: 'mulaw' | 'linear16';
  /** The agent's stt_settings: segmentation_silence_ms, profanity (masked|removed|raw), endpoint_id. */
  settings?: Record<string, unknown>;
  closeTimeoutMs?: number;
}

export class AzureStt extends EventEmitter<SttEvents> implements SttStream {
  readonly provider = 'azure';
  readonly ready: Promise<void>;
  audioBytesSent = 0;

  private readonly push: sdk.PushAudioInputStream;
  private readonly recognizer: sdk.SpeechRecognizer;
  private readonly connection: sdk.Connection;
  /** The recognizer's socket in the open-socket count. */
  private readonly counted = vendorConnection('azure', sttRole());
  private readonly latch = readyLatch();
  private readonly sampleRate: number;
  private connected = false;
  /** A phrase is open: a hypothesis or loud audio since the last final. */
  private phraseOpen = false;
  private finalizePending = false;
  /** Silence was written for the open phrase's finalize (once per phrase). */
  private silenceQueued = false;
  private readonly segmentationSilenceMs: number;
  private closing = false;
  private closedInfo?: { code: number; reason: string };
  private readonly closedWaiters: Array<() => void> = [];

  constructor(private readonly options: AzureSttOptions) {
    super();
    this.ready = this.latch.promise;
    this.sampleRate = options.sampleRate;
    const settings = options.settings ?? {};
    const config = azureSpeechConfig(options.connection);
    config.speechRecognitionLanguage = azureLocale(options.language, AZURE_STT_DEFAULTS.language);
    config.outputFormat = sdk.OutputFormat.Simple;
    const silence = typeof settings.segmentation_silence_ms === 'number' ? settings.segmentation_silence_ms : AZURE_STT_DEFAULTS.segmentationSilenceMs;
    config.setProperty(sdk.PropertyId.Speech_SegmentationSilenceTimeoutMs, String(silence));
    this.segmentationSilenceMs = silence;
    // The SDK slows its upload to 2x real time once 5 s of audio went out (meant for files). Caller
    // audio is live and never ahead of real time, except the silence finalize() writes, which
    // must not be held back.
    config.setProperty('SPEECH-TransmitLengthBeforThrottleMs', String(24 * 3600 * 1000));
    if (typeof settings.endpoint_id === 'string') config.endpointId = settings.endpoint_id;
    if (settings.profanity === 'removed') config.setProfanity(sdk.ProfanityOption.Removed);
    else if (settings.profanity === 'raw') config.setProfanity(sdk.ProfanityOption.Raw);

    this.push = sdk.AudioInputStream.createPushStream(sdk.AudioStreamFormat.getWaveFormatPCM(options.sampleRate, 16, 1));
    this.recognizer = new sdk.SpeechRecognizer(config, sdk.AudioConfig.fromStreamInput(this.push));
    this.connection = sdk.Connection.fromRecognizer(this.recognizer);
    this.connection.connected = () => {
      if (!this.closedInfo) this.counted.opened();
      this.connected = true;
      this.latch.resolve();
    };
    this.connection.disconnected = () => {
      this.counted.closed();
      this.disconnected();
    };
    this.recognizer.recognizing = (_s, e) => {
      this.phraseOpen = true;
      if (e.result.text) this.emit('transcript', this.transcript(e.result, false, false));
    };
    this.recognizer.recognized = (_s, e) => this.recognized(e.result);
    this.recognizer.speechStartDetected = (_s, e) => this.emit('speechStarted', { timestampSecs: e.offset / TICKS_PER_SEC });
    this.recognizer.canceled = (_s, e) => this.canceled(e);
    this.recognizer.startContinuousRecognitionAsync(
      () => {},
      (err) => this.fail(new SpeechProviderError(`Azure Speech could not start recognition: ${err}`, { provider: 'azure' }), true),
    );
  }

  sendAudio(input: Buffer): void {
    if (input.length === 0 || this.closing || this.closedInfo) return;
    const audio = this.options.encoding === 'mulaw' ? pcmToBytes(decodeMulaw(input)) : input;
    if (!this.phraseOpen && rms(pcmFromBytes(audio.length % 2 ? audio.subarray(1) : audio)) >= SPEECH_RMS) this.phraseOpen = true;
    // The push stream keeps the buffer: hand it a copy of exactly these bytes.
    this.push.write(audio.buffer.slice(audio.byteOffset, audio.byteOffset + audio.byteLength) as ArrayBuffer);
    this.audioBytesSent += audio.length;
  }

  finalize(): void {
    if (this.closing || this.closedInfo) return;
    if (this.phraseOpen) {
      this.finalizePending = true;
      // Azure's segmentation closes a phrase after this much silence; writing it now (instead of
      // waiting for the caller's real silence to reach it) is the nearest thing to "finalize now".
      // The caller's audio after it is that much behind in Azure's timeline, which only shifts offsets.
      if (!this.silenceQueued) {
        this.silenceQueued = true;
        this.push.write(new ArrayBuffer(Math.round((this.sampleRate * this.segmentationSilenceMs) / 1000) * 2));
      }
      return;
    }
    this.emit('transcript', { text: '', isFinal: true, speechFinal: true, confidence: 0, fromFinalize: true, startSecs: this.positionSecs(), durationSecs: 0 });
  }

  async close(): Promise<void> {
    if (this.closedInfo) return;
    const closed = new Promise<void>((resolve) => this.closedWaiters.push(resolve));
    if (!this.closing) {
      this.closing = true;
      // End of audio: Azure finishes the open phrase (recognized), then ends the turn.
      this.push.close();
      const timeout = setTimeout(() => this.shutdown(1000, ''), this.options.closeTimeoutMs ?? AZURE_STT_DEFAULTS.closeTimeoutMs);
      timeout.unref();
      this.recognizer.sessionStopped = () => {
        clearTimeout(timeout);
        this.shutdown(1000, '');
      };
      if (!this.connected) {
        clearTimeout(timeout);
        this.shutdown(1000, '');
      }
    }
    await closed;
  }

  private recognized(result: sdk.SpeechRecognitionResult): void {
    const fromFinalize = this.finalizePending;
    if (result.reason === sdk.ResultReason.RecognizedSpeech) {
      this.phraseOpen = false;
      this.finalizePending = false;
      this.silenceQueued = false;
      this.emit('transcript', this.transcript(result, true, fromFinalize));
    } else if (result.reason === sdk.ResultReason.NoMatch) {
      // Noise, not words: a finalize waiting on it gets its (empty) answer.
      this.phraseOpen = false;
      this.finalizePending = false;
      this.silenceQueued = false;
      if (fromFinalize) this.emit('transcript', { ...this.transcript(result, true, true), text: '', confidence: 0 });
    }
  }

  private transcript(result: sdk.SpeechRecognitionResult, isFinal: boolean, fromFinalize: boolean): SttTranscript {
    return {
      text: (result.text ?? '').trim(),
      isFinal,
      speechFinal: isFinal,
      // The simple output format carries no confidence; a recognized phrase is Azure's best.
      confidence: result.text ? 1 : 0,
      fromFinalize,
      startSecs: (result.offset ?? 0) / TICKS_PER_SEC,
      durationSecs: (result.duration ?? 0) / TICKS_PER_SEC,
    };
  }

  private canceled(e: sdk.SpeechRecognitionCanceledEventArgs): void {
    if (e.reason === sdk.CancellationReason.EndOfStream) return;
    this.fail(azureCancellationError('recognition', e.errorCode, e.errorDetails), true);
  }

  private disconnected(): void {
    if (this.closing || this.closedInfo) return;
    // The SDK reconnects by itself on the next audio; a drop the gateway should hear about is
    // one it reports as canceled. Only the first, never-connected failure is handled there.
    log.debug('Azure Speech connection closed');
  }

  private fail(err: SpeechProviderError, end: boolean): void {
    if (this.closedInfo) return;
    this.latch.reject(err);
    if (this.listenerCount('error') > 0) this.emit('error', err);
    else log.warn(err.message);
    // A finalize waiting for a final that will not come gets its empty answer.
    if (this.finalizePending) {
      this.finalizePending = false;
      this.emit('transcript', { text: '', isFinal: true, speechFinal: true, confidence: 0, fromFinalize: true, startSecs: this.positionSecs(), durationSecs: 0 });
    }
    if (end) this.shutdown(err.details.fatal ? 1008 : 1011, err.message);
  }

  private positionSecs(): number {
    return this.audioBytesSent / 2 / this.sampleRate;
  }

  private shutdown(code: number, reason: string): void {
    if (this.closedInfo) return;
    this.closedInfo = { code, reason };
    this.closing = true;
    this.counted.closed();
    try {
      this.recognizer.close();
    } catch {
      // already closed by the SDK
    }
    this.emit('closed', this.closedInfo);
    for (const resolve of this.closedWaiters.splice(0)) resolve();
  }
}
