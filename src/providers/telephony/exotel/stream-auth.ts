/**
 * Exotel cannot sign anything, so each stream carries our per-call credentials (call id + token,
 * src/gateway/stream/stream-token.ts) itself: as custom parameters in the stream URL's query, which the
 * Voicebot applet hands back in `start.custom_parameters` (at most 3 of them, 256 characters in
 * all: `call_id` 36 + `token` 43 fit). The sample rate rides along as `sample-rate`, the applet's
 * own parameter.
 *
 * A token in a URL can end up in a proxy's access log; it is only good for one call, and the
 * gateway refuses a second stream for a call that is streaming or over, so a logged token opens
 * nothing. Keep `/media/` out of access logs anyway (README, Exotel).
 */
import { EXOTEL_SAMPLE_RATES } from './media-messages';

export const CALL_ID_PARAM = 'call_id';
export const TOKEN_PARAM = 'token';
export const SAMPLE_RATE_PARAM = 'sample-rate';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TOKEN = /^[A-Za-z0-9_-]{1,128}$/;

/** The stream URL Exotel is given: the gateway's /media/exotel with our credentials and the rate. */
export function exotelStreamUrl(streamUrl: string, callId: string, token: string, sampleRate: number): string {
  if (!(EXOTEL_SAMPLE_RATES as readonly number[]).includes(sampleRate)) throw new Error(`Exotel stream: unsupported sample rate ${sampleRate}`);
  const url = new URL(streamUrl);
  if (url.protocol !== 'wss:' && url.protocol !== 'ws:') throw new Error(`Exotel stream URL must be wss:// (got ${url.protocol})`);
  url.searchParams.set(CALL_ID_PARAM, callId);
  url.searchParams.set(TOKEN_PARAM, token);
  url.searchParams.set(SAMPLE_RATE_PARAM, String(sampleRate));
  return url.toString();
}

/**
 * The call id and token of a stream: from `start.custom_parameters`, else from the upgrade
 * request's query (the same URL). Null fields when absent or malformed — an unauthenticated
 * stream, which the gateway closes.
 */
export function exotelStreamCredentials(custom: Record<string, string>, query: URLSearchParams | null): { callId: string | null; token: string | null } {
  const pick = (name: string) => custom[name] ?? query?.get(name) ?? null;
  const callId = pick(CALL_ID_PARAM);
  const token = pick(TOKEN_PARAM);
  return { callId: callId && UUID.test(callId) ? callId.toLowerCase() : null, token: token && TOKEN.test(token) ? token : null };
}
