/**
 * Opening a vendor WebSocket for streaming speech (STT/TTS adapters). The point of this helper
 * is the failure path: a rejected upgrade (bad key → HTTP 401, bad parameter → 400) comes back
 * as a SpeechProviderError carrying the vendor's status and error text instead of ws's bare
 * "Unexpected server response: 401". Every vendor socket opens here, so here it is counted too
 * (socket-census.ts).
 */
import WebSocket from 'ws';
import type { Logger } from '../shared/logger';
import { countVendorSocket, type SocketRole } from './socket-census';

export class SpeechProviderError extends Error {
  override name = 'SpeechProviderError';
  constructor(
    message: string,
    readonly details: {
      provider: string;
      /** HTTP status of a rejected WebSocket upgrade. */
      status?: number;
      /** WebSocket close code when the vendor closed the stream. */
      closeCode?: number;
      /** The TTS utterance the error belongs to, when it is about one. */
      utteranceId?: string;
      /** True when retrying with the same settings cannot help (bad key, bad parameter). */
      fatal?: boolean;
    },
  ) {
    super(message);
  }
}

export interface OpenSocketOptions {
  /** For messages: "Deepgram", "Deepgram TTS". */
  provider: string;
  /** The registry name, for the open-socket count (`voice_vendor_sockets{vendor}`). */
  vendor: string;
  /** What the socket is for (`voice_vendor_sockets{kind}`); see socket-census.ts. */
  role: SocketRole;
  headers?: Record<string, string>;
  handshakeTimeoutMs?: number;
}

/** Turns an http(s) base URL into ws(s) so either form works in *_BASE_URL settings. */
export function wsBaseUrl(baseUrl: string): string {
  return baseUrl.replace(/^http(s?):\/\//i, 'ws$1://').replace(/\/+$/, '');
}

// Long enough for a slow TLS handshake across continents, short enough that a dead vendor
// surfaces as an error while the caller is still on the line.
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;
// Error bodies are for humans; never let one grow without bound.
const MAX_ERROR_BODY_CHARS = 500;

/**
 * Starts connecting and returns the socket at once, so callers can attach listeners and queue
 * work while the handshake runs. `failed` is called at most once, with a clear error, if the
 * socket never opens.
 */
export function openSpeechSocket(url: string, options: OpenSocketOptions, failed: (err: SpeechProviderError) => void): WebSocket {
  const ws = new WebSocket(url, {
    headers: options.headers,
    handshakeTimeout: options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
    // Audio does not compress and deflate adds latency to every frame.
    perMessageDeflate: false,
  });
  countVendorSocket(ws, options.vendor, options.role);
  let reported = false;
  let opened = false;
  ws.once('open', () => {
    opened = true;
  });
  const report = (err: SpeechProviderError) => {
    if (reported) return;
    reported = true;
    failed(err);
  };

  ws.on('unexpected-response', (_req, res) => {
    const status = res.statusCode ?? 0;
    const headerDetail = firstHeader(res.headers['dg-error']);
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (body.length < MAX_ERROR_BODY_CHARS) body += chunk;
    });
    const finish = () => {
      const detail = headerDetail ?? errorText(body) ?? res.statusMessage ?? '';
      report(
        new SpeechProviderError(`${options.provider} rejected the connection: HTTP ${status}${detail ? ` (${detail})` : ''}`, {
          provider: options.provider,
          status,
          fatal: status >= 400 && status < 500 && status !== 408 && status !== 429,
        }),
      );
      ws.terminate();
    };
    res.on('end', finish);
    res.on('error', finish);
  });
  ws.on('error', (err) => {
    if (opened) return; // errors after open also end in 'close', which the adapter handles
    report(new SpeechProviderError(`${options.provider} connection failed: ${err.message}`, { provider: options.provider }));
  });
  return ws;
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Pulls the human part out of a JSON error body (`err_msg`, `message`, `error`, `detail`). */
function errorText(body: string): string | undefined {
  const trimmed = body.trim().slice(0, MAX_ERROR_BODY_CHARS);
  if (!trimmed) return undefined;
  try {
    const parsed = JSON.parse(trimmed) as Record<string, unknown>;
    for (const key of ['err_msg', 'message', 'error', 'detail']) {
      if (typeof parsed[key] === 'string') return parsed[key] as string;
    }
    // `{"error": {"message": …}}` (Sarvam, OpenAI)
    const nested = parsed.error as Record<string, unknown> | undefined;
    if (nested && typeof nested === 'object' && typeof nested.message === 'string') return nested.message;
  } catch {
    // plain-text body
  }
  return trimmed;
}

/** Counts characters the way vendors bill them: code points, not UTF-16 units. */
export function countCharacters(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * A session's `ready` promise and the functions that settle it. Awaiting it is optional (a failure
 * is also reported as an `error` event), so an unobserved rejection is not an unhandled one.
 */
export function readyLatch(): { promise: Promise<void>; resolve: () => void; reject: (err: Error) => void } {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/**
 * A vendor's text message as JSON, or undefined when it is not JSON (logged, by size only: it may
 * hold what the caller said). One garbled message never ends a session.
 */
export function parseVendorJson<T>(text: string, log: Logger): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    log.warn('ignoring a non-JSON message', { length: text.length });
    return undefined;
  }
}
