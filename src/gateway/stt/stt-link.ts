/**
 * A call's streaming STT connection: opened at call start (warm before the caller speaks), fed
 * the caller's audio as 16-bit PCM at the stream's rate. Reconnecting after a vendor drop is the
 * shared ResilientStt's job (src/providers/resilience.ts); when it gives up (rejected, or still
 * down after every retry) `onUnavailable` tells the call. Vendor errors become `error` events.
 *
 * Audio goes out in chunks (stt-chunker.ts), not per telephony frame. Nothing waits on a partial
 * chunk where it matters: `finalize()` sends it first, and the end of a turn is decided by the
 * VAD hundreds of milliseconds after the last word has gone out.
 */
import type { AudioFormat } from '../../audio/format';
import type { Config } from '../../config';
import { ResilientStt } from '../../providers/resilience';
import { createAgentStt, type SttTranscript } from '../../providers/stt';
import { countProviderError } from '../../observability/metrics';
import type { Logger } from '../../shared/logger';
import type { VoiceConfig } from '../../../workflows/call-definitions';
import type { GatewayEventLog } from '../workflow-link/events';
import { SttChunker } from './stt-chunker';

export interface SttLinkOptions {
  callId: string;
  stt: VoiceConfig['stt'];
  format: AudioFormat;
  config: Config;
  events: GatewayEventLog;
  log: Logger;
  onTranscript(t: SttTranscript): void;
  /** The STT is gone for good; the message names the provider and why. */
  onUnavailable?(message: string): void;
}

export class SttLink {
  private readonly stream: ResilientStt;
  private closed = false;
  private readonly chunker: SttChunker;

  constructor(private readonly opts: SttLinkOptions) {
    const { stt: s, config, format, events, log, callId } = opts;
    const input: AudioFormat = { encoding: 'pcm16', sampleRate: format.sampleRate };
    this.chunker = new SttChunker(format.sampleRate, (chunk) => this.stream.sendAudio(chunk));
    this.stream = new ResilientStt({
      open: () =>
        createAgentStt({ stt_provider: s.provider, stt_model: s.model, stt_language: s.language, stt_mode: s.mode, stt_settings: s.settings }, config, {
          format: input,
        }),
    });
    this.stream.on('transcript', (t) => this.opts.onTranscript(t));
    const reported = new WeakSet<Error>();
    this.stream.on('error', (err) => {
      reported.add(err);
      countProviderError('stt', s.provider);
      events.error(err.message, 'stt');
    });
    this.stream.on('unavailable', (err) => {
      if (this.closed) return;
      const message = err.message.startsWith('STT') ? err.message : `STT provider ${s.provider}: ${err.message}`;
      log.error('STT unavailable for call', { callId, error: message });
      if (!reported.has(err)) {
        countProviderError('stt', s.provider);
        events.error(message, 'stt');
      }
      this.opts.onUnavailable?.(message);
    });
  }

  /**
   * Caller audio at the stream's rate (copied: `pcm` may be reused); dropped while reconnecting.
   * `quiet`: the VAD hears no speech (longer chunks).
   */
  send(pcm: Int16Array, quiet = false): void {
    this.chunker.push(pcm, quiet);
  }

  /** Sends the partial chunk, then asks the vendor for the final transcript. */
  finalize(): void {
    this.chunker.flush();
    this.stream.finalize();
  }

  /** The stream's own wait for a final after finalize() (segment-based adapters), if it has one. */
  get finalWaitMs(): number | undefined {
    return this.stream.finalWaitMs;
  }

  close(): Promise<void> {
    this.closed = true;
    this.chunker.discard();
    return this.stream.close();
  }
}
