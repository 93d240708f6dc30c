/**
 * A TTS session on one long-lived vendor WebSocket per call (Cartesia, Deepgram Aura). The socket
 * opens when the call starts, so no turn pays for a handshake; requests made before it is open
 * wait in order (the outbox); a lost socket ends the utterances in flight (session-base) and is
 * reopened with backoff, first retry at once, unless close() came first. The vendor adapters say
 * what goes on the wire, how to read what comes back, and which utterances a lost socket takes
 * with it.
 */
import WebSocket from 'ws';
import type { Logger } from '../../shared/logger';
import { Backoff } from '../../shared/backoff';
import { openSpeechSocket, readyLatch, SpeechProviderError } from '../speech-socket';
import { ttsRole, type SocketRole } from '../socket-census';
import { TtsSessionBase, type UtteranceState } from './session-base';

const CLOSE_TIMEOUT_MS = 1000;

export interface VendorSocket {
  url: string;
  headers: Record<string, string>;
  handshakeTimeoutMs?: number;
  /** For messages: "Cartesia", "Deepgram TTS". */
  label: string;
  /** Provider id in errors: "cartesia", "deepgram". */
  provider: string;
  /** What the socket is for (default tts: a call's); see socket-census.ts. */
  role?: SocketRole;
  /** Reconnect delays (default: Backoff's). */
  reconnectDelaysMs?: number[];
}

export abstract class SocketTtsSession<U extends UtteranceState, Queued> extends TtsSessionBase<U> {
  readonly ready: Promise<void>;
  protected ws?: WebSocket;
  protected wsOpen = false;
  protected closed = false;
  /** Requests waiting for the socket to open, sent in order by sendQueued. */
  protected outbox: Queued[] = [];
  private readonly backoff: Backoff;
  private reconnectTimer?: NodeJS.Timeout;
  private settleReady?: { resolve: () => void; reject: (err: Error) => void };

  protected constructor(
    log: Logger,
    private readonly socket: VendorSocket,
  ) {
    super(log);
    this.backoff = new Backoff(socket.reconnectDelaysMs);
    const latch = readyLatch();
    this.ready = latch.promise;
    this.settleReady = latch;
  }

  abstract cancel(id: string): void;
  /** Writes one request that waited in the outbox to the socket that just opened. */
  protected abstract sendQueued(ws: WebSocket, request: Queued): void;
  protected abstract onSocketMessage(data: WebSocket.RawData, isBinary: boolean): void;
  /** The utterances a lost socket takes with it; called before the outbox is emptied. */
  protected abstract lostInFlight(): U[];
  /** Vendor state to reset when a socket opens. */
  protected onSocketOpen(): void {}
  /** The vendor's way to end a session politely (default: a close frame). */
  protected goodbye(ws: WebSocket): void {
    ws.close(1000);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    for (const utt of [...this.utterances.values()]) this.cancel(utt.id);
    const ws = this.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => ws.terminate(), CLOSE_TIMEOUT_MS);
      ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      if (ws.readyState === WebSocket.OPEN) this.goodbye(ws);
      else ws.terminate();
    });
  }

  protected connect(): void {
    if (this.closed) return;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const { url, headers, handshakeTimeoutMs, label, provider, role } = this.socket;
    const ws = openSpeechSocket(url, { provider: label, vendor: provider, role: role ?? ttsRole(), headers, handshakeTimeoutMs }, (err) => {
      if (this.ws !== ws) return;
      this.ws = undefined;
      this.connectionLost(err);
    });
    this.ws = ws;
    ws.on('open', () => {
      this.wsOpen = true;
      this.onSocketOpen();
      this.backoff.opened();
      this.connectionOpened();
      this.settleReady?.resolve();
      for (const request of this.outbox.splice(0)) this.sendQueued(ws, request);
    });
    ws.on('message', (data, isBinary) => this.onSocketMessage(data, isBinary));
    ws.on('close', (code, reason) => {
      if (this.ws !== ws || !this.wsOpen) return; // a failed handshake is reported by openSpeechSocket
      this.ws = undefined;
      this.wsOpen = false;
      this.backoff.closed();
      if (this.closed) return;
      const text = reason.toString();
      this.connectionLost(new SpeechProviderError(`${label} connection closed (${code}${text ? ` ${text}` : ''})`, { provider, closeCode: code }));
    });
  }

  /** Rejects the ready latch and ends the utterances in flight (session-base). */
  private connectionLost(err: SpeechProviderError): void {
    this.settleReady?.reject(err);
    this.settleReady = undefined;
    const active = this.lostInFlight();
    this.outbox = [];
    this.failInFlight(err, active);
  }

  /** Reopens with backoff, unless close() came first (possibly from an error listener). */
  protected override reconnectAfterLoss(): void {
    if (this.closed) return;
    this.reconnectTimer = setTimeout(() => this.connect(), this.backoff.next());
    this.reconnectTimer.unref();
  }
}
