/**
 * The TwiML documents we answer Twilio with, built with the SDK's VoiceResponse (which escapes
 * attribute values and text).
 */
import twilio from 'twilio';
import type VoiceResponseNs from 'twilio/lib/twiml/VoiceResponse';

const { VoiceResponse } = twilio.twiml;
/** A Twilio <Say> language such as `en-US`, `hi-IN`. */
export type SayLanguage = NonNullable<VoiceResponseNs.SayAttributes['language']>;

export interface ConnectStreamOptions {
  /** wss:// URL of the media gateway, without query string: Twilio fails the handshake otherwise. */
  streamUrl: string;
  /** Arrive in the Media Streams `start` message as `customParameters`. */
  parameters: Record<string, string>;
  /** Receives stream-started / stream-stopped / stream-error events (form POST, signed). */
  statusCallbackUrl?: string;
}

/**
 * `<Connect><Stream>`: a bidirectional Media Stream that holds the call until our side closes the
 * WebSocket; nothing follows it, so closing the socket hangs up.
 */
export function connectStreamTwiml(opts: ConnectStreamOptions): string {
  const url = new URL(opts.streamUrl);
  if (url.protocol !== 'wss:' && url.protocol !== 'ws:') {
    throw new Error(`stream URL must be wss:// (got ${url.protocol})`);
  }
  if (url.search || url.hash) {
    throw new Error('stream URL must not carry a query string or fragment: pass values as parameters');
  }
  const response = new VoiceResponse();
  const stream = response.connect().stream({
    url: opts.streamUrl,
    ...(opts.statusCallbackUrl ? { statusCallback: opts.statusCallbackUrl, statusCallbackMethod: 'POST' as const } : {}),
  });
  for (const [name, value] of Object.entries(opts.parameters)) stream.parameter({ name, value });
  return response.toString();
}

/**
 * `<Reject>` as the first verb: Twilio never answers, so the call is not billed. The caller hears
 * a busy tone (`busy`, call ends `busy`) or a not-in-service message (`rejected`, ends `no-answer`).
 */
export function rejectTwiml(reason: 'busy' | 'rejected' = 'busy'): string {
  const response = new VoiceResponse();
  response.reject({ reason });
  return response.toString();
}

/** Answers, speaks `text` with Twilio's TTS, and hangs up (e.g. "all lines are busy"). */
export function sayAndHangupTwiml(text: string, language?: SayLanguage): string {
  const response = new VoiceResponse();
  response.say(language ? { language } : {}, text);
  response.hangup();
  return response.toString();
}
