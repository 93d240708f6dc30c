/**
 * A call's streaming STT connection: opened at call start (warm before the caller speaks), fed
 * the caller's audio as 16-bit PCM (`linear16`) at the stream's rate, reopened at once when the
 * vendor drops it (then backing off), and given up for good when the vendor rejects it (bad key,
 * unsupported language). Vendor errors become `error` events; the call goes on without STT.
 */
import type { AudioFormat } from '../audio/format';
import { pcmToBytes } from '../audio/pcm';
import type { Config } from '../config';
import { createAgentStt, type SttStream, type SttTranscript } from '../providers/stt';
import { countProviderError } from '../observability/metrics';
import type { Logger } from '../shared/logger';
import type { VoiceConfig } from '../../workflows/call-definitions';
import type { GatewayEventLog } from './events';

// Reopening a dropped STT stream: first at once, then backing off.
const RECONNECT_DELAYS_MS = [0, 500, 1000, 2000, 5000];

export interface SttLinkOptions {
  callId: string;
  stt: VoiceConfig['stt'];
  format: AudioFormat;
  config: Config;
  events: GatewayEventLog;
  log: Logger;
  onTranscript(t: SttTranscript): void;
}

export class SttLink {
  private stream: SttStream | null = null;
  private fatal = false;
  private reconnects = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly opts: SttLinkOptions) {
    this.open();
  }

  /** Caller audio at the stream's rate; dropped while reconnecting. */
  send(pcm: Int16Array): void {
    this.stream?.sendAudio(pcmToBytes(pcm));
  }

  finalize(): void {
    this.stream?.finalize();
  }

  close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const stream = this.stream;
    this.stream = null;
    return stream ? stream.close() : Promise.resolve();
  }

  private open(): void {
    if (this.closed || this.fatal) return;
    const { stt: s, config, format, events, log, callId } = this.opts;
    let stream: SttStream;
    try {
      stream = createAgentStt({ stt_provider: s.provider, stt_model: s.model, stt_language: s.language, stt_settings: s.settings }, config, {
        encoding: 'linear16',
        sampleRate: format.sampleRate,
      });
    } catch (err) {
      this.fatal = true;
      countProviderError('stt', s.provider);
      events.error((err as Error).message, 'stt');
      log.error('STT unavailable for call', { callId, error: (err as Error).message });
      return;
    }
    this.stream = stream;
    stream.on('transcript', (t) => {
      this.reconnects = 0;
      this.opts.onTranscript(t);
    });
    stream.on('error', (err) => {
      if (err.details.fatal) this.fatal = true;
      countProviderError('stt', stream.provider);
      events.error(err.message, 'stt');
    });
    stream.on('closed', () => {
      if (this.stream !== stream || this.closed) return;
      this.stream = null;
      // A dropped stream is reopened so the caller is heard again; a rejected one is not.
      if (this.fatal) return;
      const delay = RECONNECT_DELAYS_MS[Math.min(this.reconnects++, RECONNECT_DELAYS_MS.length - 1)]!;
      this.timer = setTimeout(() => this.open(), delay);
    });
  }
}
