/**
 * ElevenLabs streaming TTS (`/v1/text-to-speech/{voice_id}/stream-input`). That endpoint
 * speaks one utterance per connection: `{"text":" ", voice_settings, generation_config}`
 * opens it, each sentence follows as `{"text":"… ", "flush":true}`, `{"text":""}` ends it, and
 * the server answers with `{"audio": base64}` messages, `{"isFinal": true}`, then closes.
 *
 * Latency choices: the session holds a spare connection that is already open and initialised,
 * so startUtterance() never waits for a handshake. The next spare is opened when an utterance's
 * audio is complete (isFinal) or it is cancelled — not when its text is complete, so a call holds
 * one socket while the agent speaks (two only for the handshake's length), and the spare is still
 * ready well before the caller has finished the next turn. With
 * `auto_mode=true` (and `flush` per sentence) ElevenLabs starts generating each sentence at once
 * instead of waiting for its chunk schedule to fill. Barge-in simply drops the connection.
 */
import WebSocket from 'ws';
import { MULAW_8K, type AudioFormat } from '../../../audio/format';
import { createLogger } from '../../../shared/logger';
import { countCharacters, openSpeechSocket, parseVendorJson, readyLatch, SpeechProviderError, wsBaseUrl } from '../../speech-socket';
import { ttsRole, type SocketRole } from '../../socket-census';
import { TtsSessionBase } from '../session-base';
import type { TtsOptions, TtsSession } from '../types';

const log = createLogger('tts.elevenlabs');

export const ELEVENLABS_DEFAULTS = {
  baseUrl: 'wss://api.elevenlabs.io',
  // Listed by the official @elevenlabs/elevenlabs-js 2.73.0 (eleven_flash_v2_5).
  model: 'eleven_flash_v2_5',
  // A stock ElevenLabs voice, so an agent without `voice` still speaks.
  voice: '21m00Tcm4TlvDq8ikWAM',
  // How long ElevenLabs keeps a socket we send nothing on. It only decides anything for a socket
  // we failed to close (our side never leaves one idle longer: an unused spare is recycled after
  // 50 s, and the gateway's ready sessions are closed after GATEWAY_TTS_SPARE_SECS, 50 s by
  // default, or with their voice's last call), so it is kept short — every second of it is a connection of the account's limit
  // held for nothing — yet above the 50 s, so ElevenLabs never closes a spare we still count as
  // ready. Its default of 20 s would close spares between turns; its maximum, 180 s, would hold
  // a leaked socket for three minutes.
  inactivityTimeoutSecs: 60,
} as const;

// Recycle an unused spare this long before ElevenLabs' inactivity timeout would close it (50 s).
const SPARE_RECYCLE_MARGIN_SECS = 10;
// A spare that lived this long and then closed was healthy (timed out): reopen it quietly.
const HEALTHY_CONNECTION_MS = 1000;
// Spares closing faster than that this many times in a row: stop pre-opening and report.
const MAX_QUICK_SPARE_CLOSES = 3;
const CLOSE_TIMEOUT_MS = 1000;
// tts_settings keys that belong to the first message, not to the URL.
const VOICE_SETTINGS_KEYS = ['stability', 'similarity_boost', 'style', 'use_speaker_boost', 'speed'] as const;
const BODY_KEYS = ['voice_settings', 'generation_config', 'pronunciation_dictionary_locators', 'chunk_length_schedule'] as const;

interface Utterance {
  id: string;
  conn: Connection;
  characters: number;
  textSent: boolean;
  ended: boolean;
}

interface Connection {
  ws: WebSocket;
  open: boolean;
  openedAt: number;
  outbox: string[];
  utt?: Utterance;
  recycleTimer?: NodeJS.Timeout;
  /** An error was already reported for this connection. */
  reported: boolean;
}

export class ElevenLabsTts extends TtsSessionBase<Utterance> implements TtsSession {
  readonly provider = 'elevenlabs';
  readonly ready: Promise<void>;
  charactersSent = 0;

  private readonly url: string;
  private readonly apiKey: string;
  private readonly firstMessage: string;
  private readonly inactivityTimeoutSecs: number;
  private readonly handshakeTimeoutMs?: number;
  private readonly role: SocketRole;
  private spare?: Connection;
  /** The last spare failed fast (bad key, bad voice): stop pre-opening until a connection works. */
  private spareBroken = false;
  private quickSpareCloses = 0;
  private readonly connections = new Set<Connection>();
  private closed = false;
  private settleReady?: { resolve: () => void; reject: (err: Error) => void };

  constructor(options: TtsOptions) {
    super(log);
    const { query, first } = elevenLabsRequest(options);
    this.inactivityTimeoutSecs = Number(query.get('inactivity_timeout')) || 20;
    const voice = encodeURIComponent(options.voice || ELEVENLABS_DEFAULTS.voice);
    this.url = `${wsBaseUrl(options.baseUrl || ELEVENLABS_DEFAULTS.baseUrl)}/v1/text-to-speech/${voice}/stream-input?${query.toString()}`;
    this.apiKey = options.apiKey;
    this.firstMessage = JSON.stringify(first);
    this.handshakeTimeoutMs = options.handshakeTimeoutMs;
    this.role = options.role ?? ttsRole();
    const latch = readyLatch();
    this.ready = latch.promise;
    this.settleReady = latch;
    this.ensureSpare();
  }

  startUtterance(id: string): void {
    this.claimId(id);
    const conn = this.spare ?? this.openConnection();
    this.spare = undefined;
    if (conn.recycleTimer) clearTimeout(conn.recycleTimer);
    const utt: Utterance = { id, conn, characters: 0, textSent: false, ended: false };
    conn.utt = utt;
    this.utterances.set(id, utt);
  }

  pushText(id: string, text: string): void {
    const utt = this.utterances.get(id);
    // Text for a cancelled or finished utterance is a normal race with barge-in: drop it.
    if (!utt || utt.ended || !text) return;
    const n = countCharacters(text);
    utt.characters += n;
    this.charactersSent += n;
    utt.textSent = true;
    // ElevenLabs wants every chunk to end with a space.
    this.send(utt.conn, { text: text.endsWith(' ') ? text : `${text} `, flush: true });
  }

  endText(id: string): void {
    const utt = this.utterances.get(id);
    if (!utt || utt.ended) return;
    utt.ended = true;
    if (utt.textSent) {
      // The spare opens at isFinal: until then this socket is the call's one.
      this.send(utt.conn, { text: '' });
    } else {
      this.dropConnection(utt.conn);
      queueMicrotask(() => this.finish(utt, 'completed'));
      this.ensureSpare();
    }
  }

  cancel(id: string): void {
    const utt = this.utterances.get(id);
    if (!utt) return;
    this.finish(utt, 'cancelled');
    this.dropConnection(utt.conn);
    this.ensureSpare();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const utt of [...this.utterances.values()]) this.cancel(utt.id);
    if (this.spare) this.dropConnection(this.spare);
    this.spare = undefined;
    await Promise.all(
      [...this.connections].map(
        (conn) =>
          new Promise<void>((resolve) => {
            if (conn.ws.readyState === WebSocket.CLOSED) return resolve();
            const timer = setTimeout(() => conn.ws.terminate(), CLOSE_TIMEOUT_MS);
            conn.ws.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
          }),
      ),
    );
  }

  private ensureSpare(): void {
    if (this.spare || this.spareBroken || this.closed) return;
    const conn = this.openConnection();
    this.spare = conn;
    const recycleMs = Math.max(1, this.inactivityTimeoutSecs - SPARE_RECYCLE_MARGIN_SECS) * 1000;
    conn.recycleTimer = setTimeout(() => {
      if (this.spare !== conn) return;
      this.spare = undefined;
      this.dropConnection(conn);
      this.ensureSpare();
    }, recycleMs);
    conn.recycleTimer.unref();
  }

  private openConnection(): Connection {
    const ws = openSpeechSocket(this.url, { provider: 'ElevenLabs', vendor: 'elevenlabs', role: this.role, headers: { 'xi-api-key': this.apiKey }, handshakeTimeoutMs: this.handshakeTimeoutMs }, (err) =>
      this.connectionFailed(conn, err),
    );
    const conn: Connection = { ws, open: false, openedAt: 0, outbox: [], reported: false };
    this.connections.add(conn);
    ws.on('open', () => {
      conn.open = true;
      conn.openedAt = Date.now();
      this.settleReady?.resolve();
      ws.send(this.firstMessage);
      for (const data of conn.outbox.splice(0)) ws.send(data);
      if (conn.utt) {
        this.spareBroken = false;
        this.quickSpareCloses = 0;
      }
    });
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.handleMessage(conn, data.toString());
    });
    ws.on('close', (code, reason) => this.connectionClosed(conn, code, reason.toString()));
    return conn;
  }

  private send(conn: Connection, msg: Record<string, unknown>): void {
    const data = JSON.stringify(msg);
    if (conn.open && conn.ws.readyState === WebSocket.OPEN) conn.ws.send(data);
    else conn.outbox.push(data);
  }

  /** Leaves a connection for good; ElevenLabs stops generating when the socket goes. */
  private dropConnection(conn: Connection): void {
    if (conn.recycleTimer) clearTimeout(conn.recycleTimer);
    conn.utt = undefined;
    conn.outbox = [];
    if (conn.ws.readyState === WebSocket.CONNECTING) conn.ws.terminate();
    else if (conn.ws.readyState === WebSocket.OPEN) conn.ws.close(1000);
  }

  private handleMessage(conn: Connection, text: string): void {
    const msg = parseVendorJson<ElevenLabsMessage>(text, log);
    if (!msg) return;
    const utt = conn.utt;
    if (typeof msg.audio === 'string' && msg.audio && utt && this.utterances.get(utt.id) === utt) {
      this.emit('audio', { id: utt.id, audio: Buffer.from(msg.audio, 'base64') });
    }
    if (msg.isFinal === true && utt) {
      this.finish(utt, 'completed');
      this.dropConnection(conn);
      this.ensureSpare();
      return;
    }
    if (msg.error || (msg.message && msg.code !== undefined)) {
      conn.reported = true;
      this.failConnection(conn, new SpeechProviderError(`ElevenLabs error: ${msg.message ?? msg.error}`, { provider: 'elevenlabs', closeCode: msg.code }));
    }
  }

  private connectionFailed(conn: Connection, err: SpeechProviderError): void {
    this.connections.delete(conn);
    if (conn.reported || this.closed) return;
    conn.reported = true;
    this.failConnection(conn, err);
  }

  private connectionClosed(conn: Connection, code: number, reason: string): void {
    this.connections.delete(conn);
    if (conn.recycleTimer) clearTimeout(conn.recycleTimer);
    if (!conn.open || this.closed) return; // a failed handshake is reported by openSpeechSocket
    const utt = conn.utt;
    const wasSpare = this.spare === conn;
    if (wasSpare) this.spare = undefined;
    if (conn.reported) {
      if (wasSpare) this.spareBroken = true;
      return;
    }
    const err = new SpeechProviderError(`ElevenLabs closed the connection (${code}${reason ? ` ${reason}` : ''})`, { provider: 'elevenlabs', closeCode: code });
    if (utt && this.utterances.get(utt.id) === utt) {
      this.emitError(new SpeechProviderError(`${err.message} before the audio was complete`, { ...err.details, utteranceId: utt.id }));
      this.finish(utt, 'error');
    } else if (wasSpare) {
      // ElevenLabs closing an idle spare (inactivity) is routine: open another. Spares that die
      // young again and again mean something is wrong with the settings; stop and say so.
      this.quickSpareCloses = Date.now() - conn.openedAt < HEALTHY_CONNECTION_MS ? this.quickSpareCloses + 1 : 0;
      if (this.quickSpareCloses >= MAX_QUICK_SPARE_CLOSES) {
        this.spareBroken = true;
        this.emitError(err);
        return;
      }
      this.ensureSpare();
    }
  }

  /** Reports a connection-level failure to whoever depends on that connection. */
  private failConnection(conn: Connection, err: SpeechProviderError): void {
    const utt = conn.utt;
    if (utt && this.utterances.get(utt.id) === utt) {
      this.emitError(new SpeechProviderError(err.message, { ...err.details, utteranceId: utt.id }));
      this.finish(utt, 'error');
      return;
    }
    if (this.spare === conn) {
      this.spare = undefined;
      this.spareBroken = true;
      this.settleReady?.reject(err);
      this.settleReady = undefined;
      this.emitError(err);
    }
  }
}

/** Query parameters and first message from the agent's fields and tts_settings. */
export function elevenLabsRequest(options: TtsOptions): { query: URLSearchParams; first: Record<string, unknown> } {
  const settings = { ...(options.settings ?? {}) };
  const voiceSettings: Record<string, unknown> = { ...((settings.voice_settings as Record<string, unknown>) ?? {}) };
  for (const key of VOICE_SETTINGS_KEYS) {
    if (key in settings) voiceSettings[key] = settings[key];
    delete settings[key];
  }
  const generationConfig: Record<string, unknown> = { ...((settings.generation_config as Record<string, unknown>) ?? {}) };
  if (settings.chunk_length_schedule !== undefined) generationConfig.chunk_length_schedule = settings.chunk_length_schedule;
  const first: Record<string, unknown> = { text: ' ' };
  if (Object.keys(voiceSettings).length > 0) first.voice_settings = voiceSettings;
  if (Object.keys(generationConfig).length > 0) first.generation_config = generationConfig;
  if (settings.pronunciation_dictionary_locators !== undefined) first.pronunciation_dictionary_locators = settings.pronunciation_dictionary_locators;
  for (const key of BODY_KEYS) delete settings[key];

  const params = new Map<string, string>([
    ['model_id', options.model || ELEVENLABS_DEFAULTS.model],
    ['output_format', elevenLabsOutputFormat(options.format ?? MULAW_8K)],
    ['inactivity_timeout', String(ELEVENLABS_DEFAULTS.inactivityTimeoutSecs)],
    ['auto_mode', 'true'],
  ]);
  if (options.language) params.set('language_code', options.language);
  for (const [key, value] of Object.entries(settings)) {
    if (key === 'output_format') continue; // the audio must be in the call stream's format
    if (value === null || value === undefined) params.delete(key);
    else params.set(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  return { query: new URLSearchParams([...params]), first };
}

interface ElevenLabsMessage {
  audio?: string | null;
  isFinal?: boolean | null;
  message?: string;
  error?: string;
  code?: number;
}

/** ElevenLabs' `output_format` for a stream format: `ulaw_8000`, or `pcm_<rate>` for 16-bit PCM. */
export function elevenLabsOutputFormat(format: AudioFormat): string {
  return format.encoding === 'mulaw' ? `ulaw_${format.sampleRate}` : `pcm_${format.sampleRate}`;
}
