/**
 * A connected TTS session kept ready for the next call of each voice, so a call's greeting starts
 * on an open socket instead of waiting for a WebSocket (and TLS) handshake — on a busy machine
 * that handshake was most of the greeting's delay. One spare per voice (provider, model, voice,
 * language, settings, audio format); taking it opens the next one in the background. At most
 * MAX_SPARES voices are kept, the oldest spare going first, and a spare older than SPARE_MAX_AGE_MS
 * is replaced rather than used (the adapters reconnect an idle socket the vendor closed anyway).
 */
import type { TtsSession } from '../providers/tts';

const MAX_SPARES = 32;
const SPARE_MAX_AGE_MS = 10 * 60_000;

export class TtsSpares {
  private readonly spares = new Map<string, { session: TtsSession; atMs: number }>();
  private closed = false;

  /** The spare of this voice if there is one, else a new session; `open` throws as it would. */
  take(key: string, open: () => TtsSession): TtsSession {
    const spare = this.spares.get(key);
    this.spares.delete(key);
    let session: TtsSession;
    if (spare && Date.now() - spare.atMs < SPARE_MAX_AGE_MS) {
      session = spare.session;
    } else {
      if (spare) void spare.session.close();
      session = open();
    }
    setImmediate(() => this.refill(key, open));
    return session;
  }

  close(): Promise<void> {
    this.closed = true;
    const sessions = [...this.spares.values()].map((s) => s.session);
    this.spares.clear();
    return Promise.allSettled(sessions.map((s) => s.close())).then(() => undefined);
  }

  private refill(key: string, open: () => TtsSession): void {
    if (this.closed || this.spares.has(key)) return;
    for (const [k, s] of this.spares) {
      if (this.spares.size < MAX_SPARES) break;
      this.spares.delete(k);
      void s.session.close();
    }
    try {
      this.spares.set(key, { session: open(), atMs: Date.now() });
    } catch {
      // The voice cannot be set up (no key): the next call reports it.
    }
  }
}
