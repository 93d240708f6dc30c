/**
 * The media half of the telephony seam: a vendor's bidirectional audio WebSocket, decoded into
 * neutral events and encoded back. The media gateway holds one MediaStreamCodec per socket
 * (`/media/<provider>`), found through the registry (registry.ts); it never sees a vendor's JSON.
 *
 * Caller audio is decoded once, by the codec, to 16-bit PCM at the stream's rate: the VAD, the
 * STT and the recording all take that. Agent audio comes from TTS already in the stream's format
 * and the codec only wraps it (`media`).
 *
 * Robustness is the gateway's job, not the codec's: a codec never throws, it reports a message it
 * cannot read as `invalid` and one it need not read as `ignored`; the gateway logs and counts
 * those and the call goes on. Only a flood, an unauthenticated stream, or a stream for an
 * unknown or finished call is closed.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { AudioFormat } from '../../audio/format';

/** The WebSocket upgrade request (some vendors carry parameters or credentials on it). */
export interface StreamUpgrade {
  /** Path and query of the upgrade request, e.g. /media/<provider>?call_id=…&token=… */
  url: URL;
  headers: IncomingHttpHeaders;
  remoteAddress: string;
}

/** What the stream's start tells the gateway. */
export interface StreamStart {
  /** The vendor's stream id (for logs and the call_status event). */
  streamId: string;
  /** The provider's call id, when the start carries it. */
  providerCallId: string | null;
  /** Our call id and per-call stream token, from wherever the vendor carries them; null when absent. */
  callId: string | null;
  token: string | null;
  /** The stream's audio format, both ways. */
  format: AudioFormat;
  /**
   * Length of each outgoing `media` message in ms (default 20). A vendor with a minimum chunk
   * size asks for longer frames; the gateway keeps the line buffered accordingly.
   */
  frameMs?: number;
}

/** One message from the vendor, in neutral terms. */
export type StreamEvent =
  /** A handshake message before start (a `connected` event): nothing to do. */
  | { type: 'connected' }
  | { type: 'start'; start: StreamStart }
  /**
   * Caller audio, decoded to 16-bit PCM at the stream's rate. `pcm` may be the codec's scratch
   * buffer: valid until the next decode; copy it to keep it. `timestampMs`: the vendor's position
   * of this audio since the stream started, when it says (null: place it at arrival).
   */
  | { type: 'audio'; pcm: Int16Array; timestampMs: number | null }
  /** A mark/checkpoint we sent has played (some vendors also echo pending marks after a clear). */
  | { type: 'mark'; name: string }
  /** The vendor confirmed a clear. */
  | { type: 'cleared' }
  | { type: 'dtmf'; digit: string }
  /** The vendor ended the stream (a `stop` event); a vendor without one just closes the socket. */
  | { type: 'stop' }
  /** Well-formed but nothing for us (another track, an event we do not use): ignored silently. */
  | { type: 'ignored'; what: string }
  /** Malformed or unexpected (bad JSON, missing fields, another stream's id): logged, counted, ignored. */
  | { type: 'invalid'; error: string }
  /** The stream cannot be served at all (e.g. an audio format we do not support): closed. */
  | { type: 'refused'; reason: string };

/** One socket's codec; stateful (it learns the stream id and format from the start). */
export interface MediaStreamCodec {
  /** One WebSocket message from the vendor. Never throws. */
  decode(data: Buffer, isBinary: boolean): StreamEvent;
  /**
   * A message carrying agent audio: `audio` is exactly one frame (frameMs) in the stream's format.
   * A string is sent as a text frame, a Buffer as a binary one.
   */
  media(audio: Buffer): string | Buffer;
  /** A marker the vendor reports back (as a `mark` event) once the audio sent before it has played. */
  mark(name: string): string;
  /** Drops the audio the vendor has buffered (barge-in). */
  clear(): string;
  /**
   * Checks the start's token for `callId` when the protocol's tokens are its own (expiring ones,
   * bound to the page origin of the upgrade); without it the gateway checks the per-call stream
   * token (src/gateway/stream/stream-token.ts).
   */
  authenticate?(secret: string, callId: string, token: string | null, nowMs: number): { ok: true } | { ok: false; reason: string };
}

export interface MediaStreamProtocol {
  readonly name: string;
  /** Largest WebSocket message accepted from the vendor, in bytes (bigger ones close the socket, 1009). */
  readonly maxMessageBytes: number;
  /** A codec for a new socket on /media/<name>. */
  open(upgrade: StreamUpgrade): MediaStreamCodec;
}
