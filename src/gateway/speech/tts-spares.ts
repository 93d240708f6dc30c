/**
 * A connected TTS session kept ready for the next call of each voice, so a call's greeting starts
 * on an open socket instead of waiting for a WebSocket (and TLS) handshake — on a busy machine
 * that handshake was most of the greeting's delay.
 *
 * Vendors cap concurrent connections per account, so spares are bounded and belong to the calls
 * that opened them: a voice (provider, model, voice, language, settings, audio format) has a spare
 * only while one of its calls is up — taking a session opens the voice's next spare in the
 * background, and the end of the voice's last call closes it (release), so no vendor socket
 * outlives the calls. At most MAX_SPARES voices per process have one (the oldest goes first), and
 * a spare no call took within `idleMs` (GATEWAY_TTS_SPARE_SECS) is closed and not replaced until
 * the voice's next call. A spare's sockets count as `tts_spare` in `voice_vendor_sockets` until a
 * call takes it, then as `tts`.
 */
import type { TtsSession } from '../../providers/tts';
import type { SocketRole } from '../../providers/socket-census';

/** At most this many voices have a ready session per gateway process (one socket each). */
export const MAX_SPARES = 32;
/** GATEWAY_TTS_SPARE_SECS' default: see the inactivity timeout in providers/tts/elevenlabs/stream.ts. */
export const DEFAULT_SPARE_IDLE_MS = 50_000;

/** Opens a session whose sockets count under `role`. */
export type OpenTts = (role: SocketRole) => TtsSession;

/** A call's TTS session; `release` when the call ends (after or with closing the session). */
export interface TtsLease {
  session: TtsSession;
  /** The call is over: the last call of its voice takes the voice's spare with it. Idempotent. */
  release(): void;
}

interface Spare {
  session: TtsSession;
  role: SocketRole;
  idle: NodeJS.Timeout;
}

export class TtsSpares {
  private readonly spares = new Map<string, Spare>();
  /** Calls up per voice: a voice has a spare only while this is above 0. */
  private readonly calls = new Map<string, number>();
  private closed = false;

  /** `idleMs` 0: no spares (every call opens its own session). */
  constructor(private readonly idleMs = DEFAULT_SPARE_IDLE_MS) {}

  /** Ready sessions held now (one per voice). */
  get size(): number {
    return this.spares.size;
  }

  /** The spare of this voice if there is one, else a new session; `open` throws as it would. */
  take(key: string, open: OpenTts): TtsLease {
    const spare = this.spares.get(key);
    let session: TtsSession;
    if (spare) {
      this.forget(key, spare);
      spare.role.kind = 'tts';
      session = spare.session;
    } else {
      session = open({ kind: 'tts' });
    }
    this.calls.set(key, (this.calls.get(key) ?? 0) + 1);
    if (this.idleMs > 0) setImmediate(() => this.refill(key, open));
    let released = false;
    return {
      session,
      release: () => {
        if (released) return;
        released = true;
        this.callEnded(key);
      },
    };
  }

  close(): Promise<void> {
    this.closed = true;
    const sessions = [...this.spares].map(([key, spare]) => {
      this.forget(key, spare);
      return spare.session;
    });
    return Promise.allSettled(sessions.map((s) => s.close())).then(() => undefined);
  }

  /** One call of `key` ended; the last one closes the voice's spare (opened for a next call that did not come). */
  private callEnded(key: string): void {
    const left = (this.calls.get(key) ?? 1) - 1;
    if (left > 0) return void this.calls.set(key, left);
    this.calls.delete(key);
    const spare = this.spares.get(key);
    if (spare) this.retire(key, spare);
  }

  private refill(key: string, open: OpenTts): void {
    // The call may have ended before this ran (a stream that closed at once): nothing to refill for.
    if (this.closed || this.spares.has(key) || !this.calls.has(key)) return;
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
