/**
 * Azure text-to-speech through the Speech SDK. One SpeechSynthesizer per call (its WebSocket is
 * opened at session start, so the first sentence pays no handshake); each sentence is one
 * `speakSsmlAsync` request, and its audio is emitted chunk by chunk from the `synthesizing`
 * events as the service streams it, in the call stream's own format (Raw8Khz8BitMonoMULaw,
 * Raw8Khz16BitMonoPcm, Raw16Khz16BitMonoPcm): nothing is converted.
 *
 * The SDK synthesizes one request at a time, so sentences queue here and go out one after the
 * other. Barge-in: the synthesizer has no "stop" for a request in flight, so a cancel that hits
 * one closes that synthesizer (its socket, and so the audio, stops at once) and opens a fresh one
 * for the next turn; queued sentences of the cancelled utterance are simply dropped.
 */
import * as sdk from 'microsoft-cognitiveservices-speech-sdk';
import { describeFormat, MULAW_8K, type AudioFormat } from '../../../audio/format';
import { createLogger } from '../../../shared/logger';
import { azureCancellationError, azureLocale, azureSpeechConfig, type AzureSpeechConnection } from '../../azure-speech/speech-config';
import { countCharacters, readyLatch, SpeechProviderError } from '../../speech-socket';
import { ttsRole, vendorConnection, type SocketRole, type VendorConnection } from '../../socket-census';
import { TtsSessionBase } from '../session-base';
import type { TtsSession } from '../types';
import { azureSsml } from './ssml';

const log = createLogger('tts.azure');
const CLOSE_TIMEOUT_MS = 1000;

export const AZURE_TTS_DEFAULTS = {
  // Multilingual: speaks the language of the text, so an agent without `voice` works in any language.
  voice: 'en-US-AvaMultilingualNeural',
  language: 'en-US',
  // No audio within this long after a sentence was sent: the request is given up.
  firstAudioTimeoutMs: 10_000,
} as const;

export interface AzureTtsOptions {
  connection: AzureSpeechConnection;
  format?: AudioFormat;
  voice?: string;
  language?: string;
  /** tts_settings: style, style_degree, role, rate, pitch, volume (SSML). */
  settings?: Record<string, unknown>;
  firstAudioTimeoutMs?: number;
  /** What the synthesizer's socket is for (default: a call's tts); see socket-census.ts. */
  role?: SocketRole;
}

/**
 * Closes a synthesizer and its socket. The SDK's close() (1.52) disposes only a connection that a
 * request has configured: the warm socket of a synthesizer that never spoke (a call that ended
 * before its greeting, a ready session no call took, the fresh synthesizer after a barge-in)
 * stayed open until Azure dropped it. So the connection the SDK opened is disposed here too —
 * through the adapter's internals, there being no public way (Connection.closeConnection refuses
 * synthesizers); if a later SDK renames them, test/integration/call-end-sockets.test.ts fails.
 */
export async function closeSynthesizer(synth: sdk.SpeechSynthesizer): Promise<void> {
  const adapter = (synth as unknown as { internalData?: { privConnectionPromise?: Promise<{ dispose(): Promise<void> }> | null } }).internalData;
  const warm = adapter?.privConnectionPromise;
  await new Promise<void>((resolve) => {
    try {
      synth.close(() => resolve(), () => resolve());
    } catch {
      resolve(); // already disposed
    }
  });
  // Bounded: a handshake that never completes must not hold up a call's (or the gateway's) close.
  let timer: NodeJS.Timeout | undefined;
  const disposed = warm?.then((connection) => connection.dispose()).catch(() => undefined);
  await Promise.race([disposed, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS).unref()))]);
  clearTimeout(timer);
}

/** The SDK output format that is the stream's format, byte for byte. */
export function azureOutputFormat(format: AudioFormat): sdk.SpeechSynthesisOutputFormat {
  if (format.encoding === 'mulaw' && format.sampleRate === 8000) return sdk.SpeechSynthesisOutputFormat.Raw8Khz8BitMonoMULaw;
  if (format.encoding === 'pcm16') {
    switch (format.sampleRate) {
      case 8000:
        return sdk.SpeechSynthesisOutputFormat.Raw8Khz16BitMonoPcm;
      case 16000:
        return sdk.SpeechSynthesisOutputFormat.Raw16Khz16BitMonoPcm;
      case 24000:
        return sdk.SpeechSynthesisOutputFormat.Raw24Khz16BitMonoPcm;
    }
  }
  throw new SpeechProviderError(`Azure Speech cannot produce ${describeFormat(format)}`, { provider: 'azure', fatal: true });
}

interface Utterance {
  id: string;
  characters: number;
  ended: boolean;
}

interface Job {
  utteranceId: string;
  ssml: string;
}

export class AzureTts extends TtsSessionBase<Utterance> implements TtsSession {
  readonly provider = 'azure';
  readonly ready: Promise<void>;
  charactersSent = 0;

  private readonly config: sdk.SpeechConfig;
  private readonly voice: string;
  private readonly language: string;
  private readonly settings: Record<string, unknown>;
  private readonly firstAudioTimeoutMs: number;
  private synth!: sdk.SpeechSynthesizer;
  private jobs: Job[] = [];
  private inFlight: { job: Job; synth: sdk.SpeechSynthesizer; timer?: NodeJS.Timeout; gotAudio: boolean } | null = null;
  private closed = false;
  private latch: ReturnType<typeof readyLatch> | undefined = readyLatch();
  private readonly role: SocketRole;
  /** Each synthesizer's socket in the open-socket count. */
  private readonly counted = new WeakMap<sdk.SpeechSynthesizer, VendorConnection>();

  constructor(options: AzureTtsOptions) {
    super(log);
    this.ready = this.latch!.promise;
    this.config = azureSpeechConfig(options.connection);
    this.config.speechSynthesisOutputFormat = azureOutputFormat(options.format ?? MULAW_8K);
    this.voice = options.voice || AZURE_TTS_DEFAULTS.voice;
    this.language = azureLocale(options.language, AZURE_TTS_DEFAULTS.language);
    this.settings = options.settings ?? {};
    this.firstAudioTimeoutMs = options.firstAudioTimeoutMs ?? AZURE_TTS_DEFAULTS.firstAudioTimeoutMs;
    this.role = options.role ?? ttsRole();
    this.openSynthesizer();
  }

  startUtterance(id: string): void {
    this.claimId(id);
    this.utterances.set(id, { id, characters: 0, ended: false });
  }

  pushText(id: string, text: string): void {
    const utt = this.utterances.get(id);
    if (!utt || utt.ended || !text.trim()) return;
    const n = countCharacters(text);
    utt.characters += n;
    this.charactersSent += n;
    this.jobs.push({ utteranceId: id, ssml: azureSsml(text, { voice: this.voice, language: this.language, settings: this.settings }) });
    this.pump();
  }

  endText(id: string): void {
    const utt = this.utterances.get(id);
    if (!utt || utt.ended) return;
    utt.ended = true;
    this.finishIfDrained(utt);
  }

  cancel(id: string): void {
    const utt = this.utterances.get(id);
    if (!utt) return;
    this.jobs = this.jobs.filter((j) => j.utteranceId !== id);
    if (this.inFlight?.job.utteranceId === id) {
      // Mid-sentence: only closing the synthesizer stops the audio. A fresh one takes the next turn.
      this.dropInFlight();
      this.openSynthesizer();
    }
    this.finish(utt, 'cancelled');
    this.pump();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.jobs = [];
    if (this.inFlight) this.settle(this.inFlight);
    for (const utt of [...this.utterances.values()]) this.finish(utt, 'cancelled');
    const synth = this.synth;
    this.counted.get(synth)?.closed();
    await closeSynthesizer(synth);
  }

  private openSynthesizer(): void {
    // null audio config: audio only reaches us through events, never a speaker.
    const synth = new sdk.SpeechSynthesizer(this.config, null as unknown as sdk.AudioConfig);
    this.synth = synth;
    synth.synthesizing = (_s, e) => {
      const current = this.inFlight;
      if (!current || current.synth !== synth || !e.result.audioData?.byteLength) return;
      current.gotAudio = true;
      if (current.timer) clearTimeout(current.timer);
      this.emit('audio', { id: current.job.utteranceId, audio: Buffer.from(e.result.audioData) });
    };
    // Warm: open the socket now rather than with the first sentence.
    const connection = sdk.Connection.fromSynthesizer(synth);
    const counted = vendorConnection('azure', this.role);
    this.counted.set(synth, counted);
    connection.disconnected = () => counted.closed();
    connection.connected = () => {
      // The SDK reconnects a synthesizer by itself; one closed on purpose stays uncounted.
      if (this.synth === synth && !this.closed) counted.opened();
      this.latch?.resolve();
      this.latch = undefined;
    };
    connection.openConnection(
      () => {},
      (err) => {
        if (this.synth !== synth || this.closed) return;
        // A bad key surfaces here at call start, before any sentence depends on it.
        const e = azureCancellationError('synthesis', sdk.CancellationErrorCode.ConnectionFailure, String(err));
        this.latch?.reject(e);
        this.latch = undefined;
        this.emitError(e);
      },
    );
  }

  private pump(): void {
    if (this.closed || this.inFlight || this.jobs.length === 0) return;
    const job = this.jobs.shift()!;
    const synth = this.synth;
    const current: NonNullable<AzureTts['inFlight']> = { job, synth, gotAudio: false };
    this.inFlight = current;
    current.timer = setTimeout(() => {
      if (this.inFlight !== current) return;
      this.dropInFlight();
      this.openSynthesizer();
      this.failUtterance(job.utteranceId, new SpeechProviderError(`Azure Speech synthesis timed out: no audio within ${this.firstAudioTimeoutMs} ms`, { provider: 'azure' }));
      this.pump();
    }, this.firstAudioTimeoutMs);
    current.timer.unref();
    synth.speakSsmlAsync(
      job.ssml,
      (result) => {
        if (this.inFlight !== current) return; // cancelled or timed out meanwhile
        this.settle(current);
        if (result.reason === sdk.ResultReason.Canceled) {
          const details = sdk.CancellationDetails.fromResult(result);
          this.failUtterance(job.utteranceId, azureCancellationError('synthesis', details.ErrorCode, details.errorDetails));
        } else {
          const utt = this.utterances.get(job.utteranceId);
          if (utt) this.finishIfDrained(utt);
        }
        this.pump();
      },
      (error) => {
        if (this.inFlight !== current) return;
        this.settle(current);
        this.failUtterance(job.utteranceId, new SpeechProviderError(`Azure Speech synthesis failed: ${error}`, { provider: 'azure' }));
        this.pump();
      },
    );
  }

  private settle(current: NonNullable<AzureTts['inFlight']>): void {
    if (current.timer) clearTimeout(current.timer);
    this.inFlight = null;
  }

  private dropInFlight(): void {
    const current = this.inFlight;
    if (!current) return;
    this.settle(current);
    this.counted.get(current.synth)?.closed();
    void closeSynthesizer(current.synth);
  }

  private failUtterance(id: string, err: SpeechProviderError): void {
    const utt = this.utterances.get(id);
    this.jobs = this.jobs.filter((j) => j.utteranceId !== id);
    this.emitError(new SpeechProviderError(err.message, { ...err.details, utteranceId: id }));
    if (utt) this.finish(utt, 'error');
  }

  /** Done once the text ended and none of its sentences is queued or speaking. */
  private finishIfDrained(utt: Utterance): void {
    if (!utt.ended) return;
    if (this.inFlight?.job.utteranceId === utt.id || this.jobs.some((j) => j.utteranceId === utt.id)) return;
    queueMicrotask(() => this.finish(utt, 'completed'));
  }
}
