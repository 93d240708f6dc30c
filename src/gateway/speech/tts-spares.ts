/**
 * A connected TTS session kept ready for the next call of each voice, so a call's greeting starts
 * on an open socket instead of waiting for a WebSocket (and TLS) handshake — on a busy machine
 * that handshake was most of the greeting's delay.
 *
 * Vendors cap concurrent connections per account, so spares are bounded: one per voice (provider,
 * model, voice, language, settings, audio format), at most MAX_SPARES per process (the oldest goes
 * first), and a spare no call took within `idleMs` (GATEWAY_TTS_SPARE_SECS) is closed and not
 * replaced — the next call of its voice opens its own session and a new spare — so a quiet gateway
 * holds no vendor socket at all. Taking a spare opens the next one in the background. A spare's
 * sockets count as `tts_spare` in `voice_vendor_sockets` until a call takes it, then as `tts`.
 */
import type { TtsSession } from '../../providers/tts';
import type { SocketRole } from '../../providers/socket-census';

/** At most this many voices have a ready session per gateway process (one socket each). */
export const MAX_SPARES = 32;
/** GATEWAY_TTS_SPARE_SECS' default: see the inactivity timeout in providers/tts/elevenlabs/stream.ts. */
export const DEFAULT_SPARE_IDLE_MS = 50_000;

/** Opens a session whose sockets count under `role`. */
export type OpenTts = (role: SocketRole) => TtsSession;

interface Spare {
  session: TtsSession;
  role: SocketRole;
  idle: NodeJS.Timeout;
}

export class TtsSpares {
  private readonly spares = new Map<string, Spare>();
  private closed = false;

  /** `idleMs` 0: no spares (every call opens its own session). */
  constructor(private readonly idleMs = DEFAULT_SPARE_IDLE_MS) {}

  /** Ready sessions held now (one per voice). */
  get size(): number {
    return this.spares.size;
  }

  /** The spare of this voice if there is one, else a new session; `open` throws as it would. */
  take(key: string, open: OpenTts): TtsSession {
    const spare = this.spares.get(key);
    let session: TtsSession;
    if (spare) {
      this.forget(key, spare);
      spare.role.kind = 'tts';
      session = spare.session;
    } else {
      session = open({ kind: 'tts' });
    }
    if (this.idleMs > 0) setImmediate(() => this.refill(key, open));
    return session;
  }

  close(): Promise<void> {
    this.closed = true;
    const sessions = [...this.spares].map(([key, spare]) => {
      this.forget(key, spare);
      return spare.session;
    });
    return Promise.allSettled(sessions.map((s) => s.close())).then(() => undefined);
  }

  private refill(key: string, open: OpenTts): void {
    if (this.closed || this.spares.has(key)) return;
    for (const [k, s] of this.spares) {
      if (this.spares.size < MAX_SPARES) break;
      this.retire(k, s);
    }
    const role: SocketRole = { kind: 'tts_spare' };
    let session: TtsSession;
    try {
      session = open(role);
    } catch {
      return; // The voice cannot be set up (no key): the next call reports it.
    }
    const spare: Spare = { session, role, idle: setTimeout(() => this.retire(key, spare), this.idleMs) };
    spare.idle.unref();
    this.spares.set(key, spare);
  }

  private retire(key: string, spare: Spare): void {
    if (this.spares.get(key) !== spare) return;
    this.forget(key, spare);
    void spare.session.close();
  }

  private forget(key: string, spare: Spare): void {
    clearTimeout(spare.idle);
    this.spares.delete(key);
  }
}
