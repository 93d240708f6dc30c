/**
 * Pure parts of the Plivo adapter: the Audio Streaming message parser and builders, the content
 * types, the stream credentials in extraHeaders, the status mapping, the XML builders (read back
 * with the fakes' strict XML reader) and X-Plivo-Signature-V3 checks against signatures made by
 * the fake's independent implementation of Plivo's algorithm.
 */
import { PCM16_16K, PCM16_8K, MULAW_8K } from '../../src/audio/format';
import {
  checkpointMessage,
  clearAudioMessage,
  DEFAULT_PLIVO_CONTENT_TYPE,
  formatOfMediaFormat,
  MAX_PLIVO_MESSAGE_CHARS,
  parseExtraHeaders,
  parsePlivoStreamMessage,
  playAudioMessage,
  plivoContentTypeFormat,
  plivoMediaPayload,
  PLIVO_CONTENT_TYPES,
} from '../../src/providers/telephony/plivo/media-messages';
import { validatePlivoHttpRequest, validatePlivoSignature } from '../../src/providers/telephony/plivo/signature';
import { parsePlivoCallback, plivoStatusTransition } from '../../src/providers/telephony/plivo/status';
import { plivoStreamCredentials, plivoStreamExtraHeaders } from '../../src/providers/telephony/plivo/stream-auth';
import { rejectXml, speakAndHangupXml, streamXml } from '../../src/providers/telephony/plivo/xml';
import { streamToken, verifyStreamToken } from '../../src/gateway/stream/stream-token';
import { encodeMulaw } from '../../src/audio/g711';
import { plivoVendor } from '../../src/providers/telephony/plivo/server';
import { plivoMedia } from '../../src/providers/telephony/plivo/media';
import { plivoSignatureV3 } from '../fakes/plivo-server';
import { parseXml } from '../fakes/twilio-twiml';

const STREAM = '20170ada-f610-433b-8758-c02a2aab3662';
const CALL = '12345678-1234-1234-1234-123456789abc';

// Shapes as Plivo's protocol reference shows them.
const real = {
  start: {
    event: 'start',
    sequenceNumber: 1,
    start: {
      callId: CALL,
      streamId: STREAM,
      accountId: 'MAXXXXXXXXXXXXXXXXXX',
      tracks: ['inbound'],
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000 },
    },
    extra_headers: 'callid=0123456789abcdef0123456789abcdef,token=00ff',
  },
  media: {
    event: 'media',
    sequenceNumber: 42,
    streamId: STREAM,
    media: { track: 'inbound', timestamp: '1705312200000', chunk: 41, payload: Buffer.alloc(160, 0xff).toString('base64') },
    extra_headers: 'callid=0123456789abcdef0123456789abcdef,token=00ff',
  },
  dtmf: { event: 'dtmf', sequenceNumber: 50, streamId: STREAM, dtmf: { track: 'inbound', digit: '5' } },
  playedStream: { event: 'playedStream', sequenceNumber: 60, streamId: STREAM, name: 'utt-1' },
  clearedAudio: { event: 'clearedAudio', sequenceNumber: 61, streamId: STREAM },
};

describe('Plivo stream messages', () => {
  it('parses every documented message', () => {
    const start = parsePlivoStreamMessage(JSON.stringify(real.start));
    expect(start).toEqual({
      ok: true,
      message: expect.objectContaining({
        event: 'start',
        start: expect.objectContaining({ callId: CALL, streamId: STREAM, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000 } }),
        extraHeaders: { callid: '0123456789abcdef0123456789abcdef', token: '00ff' },
      }),
    });
    const media = parsePlivoStreamMessage(Buffer.from(JSON.stringify(real.media)));
    expect(media.ok && media.message.event === 'media' && plivoMediaPayload(media.message)).toEqual(Buffer.alloc(160, 0xff));
    expect(parsePlivoStreamMessage(JSON.stringify(real.dtmf))).toEqual({ ok: true, message: { event: 'dtmf', sequenceNumber: 50, streamId: STREAM, dtmf: { track: 'inbound', digit: '5' } } });
    expect(parsePlivoStreamMessage(JSON.stringify(real.playedStream))).toEqual({ ok: true, message: { event: 'playedStream', sequenceNumber: 60, streamId: STREAM, name: 'utt-1' } });
    // Plivo's older documentation calls the checkpoint answer `played`.
    expect(parsePlivoStreamMessage(JSON.stringify({ ...real.playedStream, event: 'played' }))).toMatchObject({ ok: true, message: { event: 'playedStream', name: 'utt-1' } });
    expect(parsePlivoStreamMessage(JSON.stringify(real.clearedAudio))).toEqual({ ok: true, message: { event: 'clearedAudio', sequenceNumber: 61, streamId: STREAM } });
  });

  it('reads extra headers separated by commas or semicolons, or as an object', () => {
    expect(parseExtraHeaders('a=1,b=2')).toEqual({ a: '1', b: '2' });
    expect(parseExtraHeaders('userId=12345;sessionId=abc-xyz')).toEqual({ userid: '12345', sessionid: 'abc-xyz' });
    expect(parseExtraHeaders({ 'X-PH-callid': 'x', other: 3 })).toEqual({ callid: 'x' });
    expect(parseExtraHeaders(undefined)).toEqual({});
    expect(parseExtraHeaders('garbage')).toEqual({});
  });

  it('never throws on malformed input, and says what is wrong', () => {
    const inputs: unknown[] = [
      '',
      'not json',
      '[]',
      'null',
      '42',
      '{}',
      '{"event":7}',
      JSON.stringify({ event: 'start' }),
      JSON.stringify({ ...real.start, start: { ...real.start.start, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 'fast' } } }),
      JSON.stringify({ ...real.start, start: { ...real.start.start, callId: '' } }),
      JSON.stringify({ ...real.media, media: { ...real.media.media, payload: 'not base64!' } }),
      JSON.stringify({ ...real.media, streamId: 5 }),
      JSON.stringify({ ...real.dtmf, dtmf: { digit: 'x' } }),
      JSON.stringify({ ...real.playedStream, name: 3 }),
      JSON.stringify({ event: 'clearedAudio' }),
      Buffer.from([0xff, 0xfe, 0x00]),
      [Buffer.from('{"ev'), Buffer.from('ent":"dtmf"}')],
      new ArrayBuffer(4),
      { event: 'media' },
      undefined,
    ];
    for (const input of inputs) {
      const result = parsePlivoStreamMessage(input);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error).toEqual(expect.any(String));
    }
    expect(parsePlivoStreamMessage('x'.repeat(MAX_PLIVO_MESSAGE_CHARS + 1))).toMatchObject({ ok: false, code: 'too_large' });
    expect(parsePlivoStreamMessage('{"event":"sendDTMF"}')).toMatchObject({ ok: false, code: 'unknown_event' });
  });

  it('fuzzed input never throws', () => {
    const base = JSON.stringify(real.media);
    for (let i = 0; i < 2000; i++) {
      const chars = base.split('');
      const pos = (i * 7919) % chars.length;
      chars[pos] = String.fromCharCode((i * 31) % 128);
      expect(() => parsePlivoStreamMessage(chars.slice(0, chars.length - (i % 5)).join(''))).not.toThrow();
    }
  });

  it('builds playAudio in the stream content type, checkpoint and clearAudio', () => {
    expect(JSON.parse(playAudioMessage(MULAW_8K, Buffer.from([1, 2, 3])))).toEqual({
      event: 'playAudio',
      media: { contentType: 'audio/x-mulaw', sampleRate: 8000, payload: Buffer.from([1, 2, 3]).toString('base64') },
    });
    const pcm = new Uint8Array(Buffer.from([9, 9, 1, 2, 3, 4])).subarray(2);
    expect(JSON.parse(playAudioMessage(PCM16_16K, pcm)).media).toEqual({ contentType: 'audio/x-l16', sampleRate: 16000, payload: Buffer.from([1, 2, 3, 4]).toString('base64') });
    expect(() => playAudioMessage({ encoding: 'mulaw', sampleRate: 16000 }, pcm)).toThrow(/cannot play/);
    expect(JSON.parse(checkpointMessage(STREAM, 'utt-1'))).toEqual({ event: 'checkpoint', streamId: STREAM, name: 'utt-1' });
    expect(JSON.parse(clearAudioMessage(STREAM))).toEqual({ event: 'clearAudio', streamId: STREAM });
  });

  it('maps content types to audio formats both ways', () => {
    expect(PLIVO_CONTENT_TYPES.map(plivoContentTypeFormat)).toEqual([MULAW_8K, PCM16_8K, PCM16_16K]);
    expect(plivoContentTypeFormat(DEFAULT_PLIVO_CONTENT_TYPE)).toEqual(MULAW_8K);
    expect(formatOfMediaFormat({ encoding: 'audio/x-l16', sampleRate: 16000 })).toEqual(PCM16_16K);
    expect(formatOfMediaFormat({ encoding: 'audio/x-mulaw;rate=8000', sampleRate: 8000 })).toEqual(MULAW_8K);
    expect(formatOfMediaFormat({ encoding: 'audio/x-mulaw', sampleRate: 16000 })).toBeNull();
    expect(formatOfMediaFormat({ encoding: 'audio/opus', sampleRate: 48000 })).toBeNull();
  });
});

describe('Plivo stream credentials in extraHeaders', () => {
  const secret = 'jwt-secret-for-tests';
  const callId = '6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab';

  it('round-trips the call id and token through Plivo-safe characters', () => {
    const token = streamToken(secret, callId);
    const header = plivoStreamExtraHeaders(callId, token);
    expect(header).toMatch(/^callid=[0-9a-f]{32},token=[0-9a-f]{64}$/);
    const back = plivoStreamCredentials(parseExtraHeaders(header));
    expect(back).toEqual({ callId, token });
    expect(verifyStreamToken(secret, back!.callId, back!.token)).toBe(true);
  });

  it('refuses missing or malformed credentials', () => {
    expect(plivoStreamCredentials({})).toBeNull();
    expect(plivoStreamCredentials({ callid: 'abc', token: '00' })).toBeNull();
    expect(plivoStreamCredentials({ callid: '0123456789abcdef0123456789abcdef' })).toBeNull();
    expect(plivoStreamCredentials({ callid: '0123456789abcdef0123456789abcdef', token: 'zz' })).toBeNull();
    expect(() => plivoStreamExtraHeaders('not-a-uuid', 'abc')).toThrow();
  });
});

describe('Plivo statuses', () => {
  it('maps every CallStatus Plivo sends to the five call statuses', () => {
    expect(
      Object.fromEntries(['queued', 'ringing', 'in-progress', 'completed', 'busy', 'no-answer', 'timeout', 'cancel', 'failed'].map((s) => [s, plivoStatusTransition(s)])),
    ).toEqual({
      queued: 'ringing',
      ringing: 'ringing',
      'in-progress': 'in_progress',
      completed: 'completed',
      busy: 'no_answer',
      'no-answer': 'no_answer',
      timeout: 'no_answer',
      cancel: 'no_answer',
      failed: 'failed',
    });
    expect(plivoStatusTransition('toString')).toBeNull();
  });

  it('parses a hangup callback', () => {
    expect(
      parsePlivoCallback({ CallUUID: 'c-1', RequestUUID: 'r-1', CallStatus: 'busy', HangupCause: 'USER_BUSY', Duration: '0', BillDuration: '0', Event: 'Hangup' }),
    ).toEqual({
      providerCallId: 'c-1',
      providerStatus: 'busy',
      status: 'busy',
      durationSecs: 0,
      detail: { request_uuid: 'r-1', hangup_cause: 'USER_BUSY', plivo_event: 'Hangup', bill_duration: 0 },
    });
    expect(parsePlivoCallback({ CallStatus: 'busy' })).toBeNull();
    expect(parsePlivoCallback({ Event: 'StartStream', StreamID: 's-1' })).toBeNull();
    expect(parsePlivoCallback({ CallUUID: 'c-1', CallStatus: 'completed', Duration: 'long' })).toEqual({ providerCallId: 'c-1', providerStatus: 'completed', status: 'completed' });
  });
});

describe('Plivo XML', () => {
  it('connects a bidirectional stream that keeps the call alive, with the credentials in extraHeaders', () => {
    const xml = streamXml({ streamUrl: 'wss://voice.example.com/media/plivo', contentType: 'audio/x-l16;rate=16000', extraHeaders: 'callid=ab12,token=cd34' });
    const root = parseXml(xml);
    expect(root.name).toBe('Response');
    expect(root.children).toHaveLength(1);
    expect(root.children[0]).toMatchObject({
      name: 'Stream',
      text: 'wss://voice.example.com/media/plivo',
      attrs: { bidirectional: 'true', keepCallAlive: 'true', contentType: 'audio/x-l16;rate=16000', extraHeaders: 'callid=ab12,token=cd34' },
    });
    expect(() => streamXml({ streamUrl: 'https://x/media', contentType: DEFAULT_PLIVO_CONTENT_TYPE, extraHeaders: 'a=1' })).toThrow(/wss/);
    expect(() => streamXml({ streamUrl: 'wss://x/media', contentType: DEFAULT_PLIVO_CONTENT_TYPE, extraHeaders: 'a=1-2' })).toThrow(/extraHeaders/);
  });

  it('rejects, or speaks and hangs up, escaping the text', () => {
    expect(parseXml(rejectXml()).children).toEqual([expect.objectContaining({ name: 'Hangup', attrs: { reason: 'rejected' } })]);
    const say = parseXml(speakAndHangupXml('Busy <now> & "later"', 'en-US'));
    expect(say.children.map((c) => c.name)).toEqual(['Speak', 'Hangup']);
    expect(say.children[0].text).toBe('Busy <now> & "later"');
  });
});

describe('X-Plivo-Signature-V3', () => {
  const token = 'MzY2YjYxZjQ1ZjQ1ZDQ2YmU4YjQ0';
  const url = 'https://voice.example.com/telephony/plivo/status/abc?x=2&a=1';
  const params = { CallUUID: 'c-1', CallStatus: 'completed', To: '14155550100' };
  const nonce = '05429567804466091622';
  const good = plivoSignatureV3(token, 'POST', url, params, nonce);

  it('accepts Plivo’s signature of the URL, sorted query and sorted parameters', () => {
    expect(validatePlivoSignature(token, 'POST', url, params, good, nonce)).toBe(true);
    const get = plivoSignatureV3(token, 'GET', 'https://h.example/p?b=2&a=1', {}, nonce);
    expect(validatePlivoSignature(token, 'GET', 'https://h.example/p?b=2&a=1', {}, get, nonce)).toBe(true);
  });

  it('refuses forged or missing signatures and a wrong nonce', () => {
    expect(validatePlivoSignature(token, 'POST', url, params, plivoSignatureV3('other-token', 'POST', url, params, nonce), nonce)).toBe(false);
    expect(validatePlivoSignature(token, 'POST', url, { ...params, CallStatus: 'busy' }, good, nonce)).toBe(false);
    expect(validatePlivoSignature(token, 'POST', url.replace('abc', 'abd'), params, good, nonce)).toBe(false);
    expect(validatePlivoSignature(token, 'POST', url, params, good, '1')).toBe(false);
    expect(validatePlivoSignature(token, 'POST', url, params, undefined, nonce)).toBe(false);
    expect(validatePlivoSignature(token, 'POST', url, params, good, undefined)).toBe(false);
    expect(validatePlivoSignature(token, 'POST', url, params, '', nonce)).toBe(false);
    expect(validatePlivoSignature('', 'POST', url, params, good, nonce)).toBe(false);
    expect(validatePlivoSignature(token, 'PUT', url, params, good, nonce)).toBe(false);
    expect(validatePlivoSignature(token, 'POST', 'not a url', params, good, nonce)).toBe(false);
  });

  it('accepts a header listing several signatures when one matches', () => {
    const other = plivoSignatureV3('old-token', 'POST', url, params, nonce);
    expect(validatePlivoSignature(token, 'POST', url, params, `${other},${good}`, nonce)).toBe(true);
    expect(validatePlivoSignature(token, 'POST', url, params, `${other}, ${good}`, nonce)).toBe(true);
    expect(validatePlivoSignature(token, 'POST', url, params, `${other},${other}`, nonce)).toBe(false);
  });

  it('checks a request against the public URL, not the Host it arrived on', () => {
    const req = {
      method: 'POST',
      originalUrl: '/telephony/plivo/status/abc?x=2&a=1',
      headers: { host: '127.0.0.1:8000', 'x-plivo-signature-v3': good, 'x-plivo-signature-v3-nonce': nonce },
      body: params,
    };
    expect(validatePlivoHttpRequest(req, { authToken: token, publicBaseUrl: 'https://voice.example.com' })).toBe(true);
    expect(validatePlivoHttpRequest(req, { authToken: token, publicBaseUrl: 'http://127.0.0.1:8000' })).toBe(false);
  });
});

describe('Plivo media codec (neutral events)', () => {
  const secret = 'jwt-secret-for-tests';
  const callId = '6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab';
  const token = streamToken(secret, callId);
  const startOf = (encoding: string, sampleRate: number, extra = plivoStreamExtraHeaders(callId, token)) =>
    Buffer.from(JSON.stringify({ ...real.start, start: { ...real.start.start, mediaFormat: { encoding, sampleRate } }, extra_headers: extra }));
  const mediaOf = (payload: Buffer, streamId = STREAM) => Buffer.from(JSON.stringify({ ...real.media, streamId, media: { ...real.media.media, payload: payload.toString('base64') } }));

  it('starts with the stream format and our credentials, then decodes audio once to PCM', () => {
    const codec = plivoMedia.open({ url: new URL('ws://x/media/plivo'), headers: {}, remoteAddress: '127.0.0.1' });
    expect(codec.decode(startOf('audio/x-mulaw', 8000), false)).toEqual({
      type: 'start',
      start: { streamId: STREAM, providerCallId: CALL, callId, token, format: MULAW_8K },
    });
    const audio = codec.decode(mediaOf(encodeMulaw(Int16Array.from([1000, -1000, 0]))), false);
    expect(audio.type).toBe('audio');
    if (audio.type === 'audio') expect(Array.from(audio.pcm).map((s) => Math.sign(s))).toEqual([1, -1, 0]);
    // Plivo's epoch-ms timestamps become positions from the first chunk.
    expect(audio).toMatchObject({ timestampMs: 0 });
    const later = Buffer.from(JSON.stringify({ ...real.media, media: { ...real.media.media, timestamp: String(Number(real.media.media.timestamp) + 40) } }));
    expect(codec.decode(later, false)).toMatchObject({ type: 'audio', timestampMs: 40 });
    const earlier = Buffer.from(JSON.stringify({ ...real.media, media: { ...real.media.media, timestamp: '1705312199000' } }));
    expect(codec.decode(earlier, false)).toMatchObject({ type: 'audio', timestampMs: null });
    expect(codec.decode(Buffer.from(JSON.stringify(real.playedStream)), false)).toEqual({ type: 'mark', name: 'utt-1' });
    expect(codec.decode(Buffer.from(JSON.stringify(real.clearedAudio)), false)).toEqual({ type: 'cleared' });
    expect(codec.decode(Buffer.from(JSON.stringify(real.dtmf)), false)).toEqual({ type: 'dtmf', digit: '5' });
    expect(JSON.parse(codec.media(Buffer.from([1, 2])) as string)).toEqual({ event: 'playAudio', media: { contentType: 'audio/x-mulaw', sampleRate: 8000, payload: 'AQI=' } });
    expect(JSON.parse(codec.mark('m1'))).toEqual({ event: 'checkpoint', streamId: STREAM, name: 'm1' });
    expect(JSON.parse(codec.clear())).toEqual({ event: 'clearAudio', streamId: STREAM });
  });

  it('speaks L16 at 16 kHz when the stream is L16', () => {
    const codec = plivoMedia.open({ url: new URL('ws://x/media/plivo'), headers: {}, remoteAddress: '127.0.0.1' });
    expect(codec.decode(startOf('audio/x-l16', 16000), false)).toMatchObject({ type: 'start', start: { format: PCM16_16K } });
    const samples = Int16Array.from([1234, -4321]);
    const audio = codec.decode(mediaOf(Buffer.from(samples.buffer)), false);
    expect(audio.type === 'audio' && Array.from(audio.pcm)).toEqual([1234, -4321]);
    // An odd number of bytes is not L16 audio.
    expect(codec.decode(mediaOf(Buffer.from([1, 2, 3])), false)).toMatchObject({ type: 'invalid' });
    expect(JSON.parse(codec.media(Buffer.from(samples.buffer)) as string).media).toMatchObject({ contentType: 'audio/x-l16', sampleRate: 16000 });
  });

  it('reports bad or out-of-place messages without throwing, and refuses formats it cannot play', () => {
    const codec = plivoMedia.open({ url: new URL('ws://x/media/plivo'), headers: {}, remoteAddress: '127.0.0.1' });
    expect(codec.decode(mediaOf(Buffer.alloc(160, 0xff)), false)).toMatchObject({ type: 'invalid', error: expect.stringMatching(/before start/) });
    expect(codec.decode(Buffer.from('{"event":"sendDTMF"}'), false)).toMatchObject({ type: 'ignored' });
    expect(codec.decode(Buffer.from([1, 2, 3]), true)).toMatchObject({ type: 'invalid' });
    expect(codec.decode(startOf('audio/x-mulaw', 8000, ''), false)).toMatchObject({ type: 'start', start: { callId: null, token: null } });
    expect(codec.decode(startOf('audio/x-mulaw', 8000), false)).toMatchObject({ type: 'invalid', error: 'a second start message' });
    expect(codec.decode(mediaOf(Buffer.alloc(160, 0xff), 'another-stream'), false)).toMatchObject({ type: 'invalid', error: expect.stringMatching(/another stream/) });
    expect(codec.decode(Buffer.from(JSON.stringify({ ...real.media, media: { ...real.media.media, track: 'outbound' } })), false)).toMatchObject({ type: 'ignored' });
    for (const garbage of ['', '{', 'null', '{"event":"media"}', '{"event":"playedStream","streamId":"x"}']) {
      expect(() => codec.decode(Buffer.from(garbage), false)).not.toThrow();
      expect(codec.decode(Buffer.from(garbage), false).type).toBe('invalid');
    }
    const other = plivoMedia.open({ url: new URL('ws://x/media/plivo'), headers: {}, remoteAddress: '127.0.0.1' });
    expect(other.decode(startOf('audio/x-mulaw', 16000), false)).toMatchObject({ type: 'refused' });
  });
});

describe('Plivo webhooks (neutral)', () => {
  const settings = { auth_token: 'tok' };
  it('reads an incoming call, turning Plivo’s digits into E.164', () => {
    const req = (body: Record<string, unknown>) => ({ method: 'POST', originalUrl: '/x', headers: {}, body, query: {} });
    expect(plivoVendor.webhooks.inboundCall(req({ CallUUID: CALL, From: '919876543210', To: '14155550100' }))).toEqual({
      providerCallId: CALL,
      from: '+919876543210',
      to: '+14155550100',
    });
    expect(plivoVendor.webhooks.inboundCall(req({ CallUUID: CALL, From: '', To: '14155550100' })).from).toBe('anonymous');
    expect(() => plivoVendor.webhooks.inboundCall(req({ From: '1', To: '14155550100' }))).toThrow(/CallUUID is missing/);
    expect(() => plivoVendor.webhooks.inboundCall(req({ CallUUID: CALL, From: '919876543210', To: 'x' }))).toThrow(/E.164/);
    expect(plivoVendor.webhooks.providerCallId(req({ CallUUID: CALL }))).toBe(CALL);
    // A number whose application is configured with GET: the parameters are in the query.
    const query = { CallUUID: CALL, From: '919876543210', To: '14155550100', CallStatus: 'completed', Duration: '7' };
    const get = { method: 'GET', originalUrl: `/telephony/plivo/status?${new URLSearchParams(query)}`, headers: {}, body: {}, query };
    expect(plivoVendor.webhooks.inboundCall(get)).toEqual({ providerCallId: CALL, from: '+919876543210', to: '+14155550100' });
    expect(plivoVendor.webhooks.statusUpdate(get)).toMatchObject({ providerCallId: CALL, status: 'completed', durationSecs: 7 });
    const nonce = '4242';
    const url = `https://voice.example.com${get.originalUrl}`;
    const signed = { ...get, headers: { 'x-plivo-signature-v3': plivoSignatureV3('tok', 'GET', url, {}, nonce), 'x-plivo-signature-v3-nonce': nonce } };
    expect(plivoVendor.webhooks.verify(signed, { settings, publicBaseUrl: 'https://voice.example.com' })).toEqual({ ok: true });
    expect(plivoVendor.webhooks.verify({ ...signed, query: { ...query, CallStatus: 'busy' }, originalUrl: get.originalUrl.replace('completed', 'busy') }, { settings, publicBaseUrl: 'https://voice.example.com' })).toMatchObject({ ok: false });
    expect(plivoVendor.webhooks.providerCallId(req({ CallUUID: 'nope' }))).toBeNull();
  });

  it('refuses requests without a signature, a nonce, or a stored token, saying which', () => {
    const req = (headers: Record<string, string>) => ({ method: 'POST', originalUrl: '/telephony/plivo/status', headers, body: {}, query: {} });
    const ctx = { settings, publicBaseUrl: 'https://voice.example.com' };
    expect(plivoVendor.webhooks.verify(req({}), ctx)).toEqual({ ok: false, detail: 'Missing X-Plivo-Signature-V3' });
    expect(plivoVendor.webhooks.verify(req({ 'x-plivo-signature-v3': 'abc' }), ctx)).toEqual({ ok: false, detail: 'Missing X-Plivo-Signature-V3-Nonce' });
    expect(plivoVendor.webhooks.verify(req({ 'x-plivo-signature-v3': 'abc', 'x-plivo-signature-v3-nonce': '1' }), ctx)).toMatchObject({ ok: false, detail: 'Invalid X-Plivo-Signature-V3' });
    expect(plivoVendor.webhooks.verify(req({}), { ...ctx, settings: {} })).toMatchObject({ ok: false, detail: expect.stringMatching(/not configured/) });
    const nonce = '12345';
    const good = plivoSignatureV3('tok', 'POST', 'https://voice.example.com/telephony/plivo/status', {}, nonce);
    expect(plivoVendor.webhooks.verify(req({ 'x-plivo-signature-v3': good, 'x-plivo-signature-v3-nonce': nonce }), ctx)).toEqual({ ok: true });
  });

  it('connects the stream with the credentials, and refuses or speaks in Plivo XML', () => {
    const token = streamToken('s', '6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab');
    const answer = plivoVendor.webhooks.connect({ streamUrl: 'wss://voice.example.com/media/plivo', callId: '6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab', token });
    expect(answer).toMatchObject({ status: 200, contentType: 'text/xml' });
    const stream = parseXml(answer.body).children[0];
    expect(stream.attrs).toMatchObject({ contentType: DEFAULT_PLIVO_CONTENT_TYPE, bidirectional: 'true', keepCallAlive: 'true' });
    expect(plivoStreamCredentials(parseExtraHeaders(stream.attrs.extraHeaders))).toEqual({ callId: '6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab', token });
    expect(parseXml(plivoVendor.webhooks.reject().body).children[0].name).toBe('Hangup');
    expect(parseXml(plivoVendor.webhooks.sayAndHangup('Bye.').body).children.map((c) => c.name)).toEqual(['Speak', 'Hangup']);
  });
});
