/**
 * The Plivo XML documents we answer Plivo with, built with the SDK's XML builder (which escapes
 * attribute values and text and checks attribute names).
 */
import { Response } from 'plivo';
import type { PlivoContentType } from './media-messages';

/** The SDK's element builder; `addStream` exists at run time but is missing from its typings. */
interface PlivoXmlResponse {
  addStream(body: string, attributes: Record<string, string | boolean | number>): unknown;
  addSpeak(body: string, attributes: { language?: string; voice?: string }): unknown;
  addHangup(attributes: { reason?: string; schedule?: number }): unknown;
  toXML(): string;
}

function response(): PlivoXmlResponse {
  return (Response as unknown as () => PlivoXmlResponse)();
}

export interface StreamXmlOptions {
  /** wss:// URL of the media gateway (the element's text). */
  streamUrl: string;
  contentType: PlivoContentType;
  /** `k=v,k2=v2`, [A-Za-z0-9] only; arrives in the `start` message as `extra_headers`. */
  extraHeaders: string;
  /** Receives StartStream / StopStream / DroppedStream (form POST, signed). */
  statusCallbackUrl?: string;
}

/**
 * `<Stream bidirectional keepCallAlive>`: a two-way stream that holds the call until the socket
 * closes (nothing after it runs). Closing the socket therefore ends the call — but so would a
 * dead gateway only after Plivo notices; every end on our side also hangs up through the REST API.
 */
export function streamXml(opts: StreamXmlOptions): string {
  const url = new URL(opts.streamUrl);
  if (url.protocol !== 'wss:' && url.protocol !== 'ws:') throw new Error(`stream URL must be wss:// (got ${url.protocol})`);
  if (!/^[A-Za-z0-9]+=[A-Za-z0-9]*(?:,[A-Za-z0-9]+=[A-Za-z0-9]*)*$/.test(opts.extraHeaders) || opts.extraHeaders.length > 512) {
    throw new Error('extraHeaders must be k=v pairs of [A-Za-z0-9], comma-separated, at most 512 bytes');
  }
  const r = response();
  r.addStream(opts.streamUrl, {
    bidirectional: true,
    keepCallAlive: true,
    audioTrack: 'inbound',
    contentType: opts.contentType,
    extraHeaders: opts.extraHeaders,
    ...(opts.statusCallbackUrl ? { statusCallbackUrl: opts.statusCallbackUrl, statusCallbackMethod: 'POST' } : {}),
  });
  return r.toXML();
}

/**
 * `<Hangup reason="rejected">` as the only element: the call is refused without being answered,
 * so it is not billed; the caller hears the network's rejection tone.
 */
export function rejectXml(reason: 'rejected' | 'busy' = 'rejected'): string {
  const r = response();
  r.addHangup({ reason });
  return r.toXML();
}

/** Answers, speaks `text` with Plivo's TTS, and hangs up (e.g. "all lines are busy"). */
export function speakAndHangupXml(text: string, language?: string): string {
  const r = response();
  r.addSpeak(text, language ? { language } : {});
  r.addHangup({});
  return r.toXML();
}
