/**
 * The fake Deepgram's upgrade check, as Deepgram answers it: `Authorization: Token <key>` (or the
 * `token, <key>` subprotocol) else 401 with `dg-error` / `dg-request-id` headers and a JSON body;
 * bad query parameters 400. Only `mulaw` and `linear16` audio are understood by the fake.
 */
import crypto from 'node:crypto';
import type http from 'node:http';
import type { UpgradeRejection } from './ws-fake-server';

const ENCODINGS = ['linear16', 'flac', 'mulaw', 'alaw', 'amr-nb', 'amr-wb', 'opus', 'ogg-opus', 'speex', 'g729'];
const FAKE_DECODABLE = ['mulaw', 'linear16'];
const BOOLEAN_PARAMS = ['interim_results', 'vad_events', 'smart_format', 'punctuate', 'diarize', 'filler_words', 'numerals', 'profanity_filter', 'no_delay', 'multichannel'];

export function checkUpgrade(req: http.IncomingMessage, url: URL, apiKey: string): UpgradeRejection | undefined {
  const requestId = crypto.randomUUID();
  const fail = (status: number, errCode: string, errMsg: string): UpgradeRejection => ({
    status,
    headers: { 'dg-request-id': requestId, 'dg-error': errMsg, 'content-type': 'application/json' },
    body: JSON.stringify({ err_code: errCode, err_msg: errMsg, request_id: requestId }),
  });
  if (url.pathname !== '/v1/listen') return fail(404, 'NOT_FOUND', `No such endpoint: ${url.pathname}`);
  const auth = req.headers.authorization ?? '';
  const protocols = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  const key = auth.startsWith('Token ') ? auth.slice(6) : protocols[0] === 'token' ? protocols[1] : undefined;
  if (key !== apiKey) return fail(401, 'INVALID_AUTH', 'Invalid credentials.');

  const q = url.searchParams;
  const encoding = q.get('encoding');
  if (encoding !== null) {
    if (!ENCODINGS.includes(encoding)) return fail(400, 'Bad Request', `Invalid encoding: ${encoding}`);
    if (!FAKE_DECODABLE.includes(encoding)) return fail(400, 'Bad Request', `The fake Deepgram only decodes ${FAKE_DECODABLE.join(' and ')}`);
    if (!/^\d+$/.test(q.get('sample_rate') ?? '')) return fail(400, 'Bad Request', 'sample_rate is required when encoding is set');
  }
  for (const name of BOOLEAN_PARAMS) {
    const v = q.get(name);
    if (v !== null && v !== 'true' && v !== 'false') return fail(400, 'Bad Request', `Invalid value for ${name}: ${v}`);
  }
  const endpointing = q.get('endpointing');
  if (endpointing !== null && endpointing !== 'false' && endpointing !== 'true' && !/^\d+$/.test(endpointing)) {
    return fail(400, 'Bad Request', `Invalid value for endpointing: ${endpointing}`);
  }
  const utteranceEnd = q.get('utterance_end_ms');
  if (utteranceEnd !== null) {
    if (!/^\d+$/.test(utteranceEnd)) return fail(400, 'Bad Request', `Invalid value for utterance_end_ms: ${utteranceEnd}`);
    if (q.get('interim_results') !== 'true') return fail(400, 'Bad Request', 'utterance_end_ms requires interim_results=true');
  }
  return undefined;
}
