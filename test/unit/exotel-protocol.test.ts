/**
 * Exotel's wire formats, in isolation: the Voicebot stream messages (parser, builders, chunk size
 * rules), the codec's neutral events, the stream URL carrying our credentials, status mapping,
 * the API base guard, numbers and the webhook answers.
 */
import { PCM16_16K, PCM16_8K } from '../../src/audio/format';
import { streamToken, verifyStreamToken } from '../../src/gateway/stream/stream-token';
import { exotelVendor } from '../../src/providers/telephony/exotel/server';
import { DEFAULT_EXOTEL_API_BASE, exotelApiBase } from '../../src/providers/telephony/exotel/client';
import { exotelMedia } from '../../src/providers/telephony/exotel/media';
import {
  exotelClearMessage,
  exotelFrameMs,
  exotelMarkMessage,
  exotelMediaMessage,
  isValidExotelChunk,
  parseExotelStreamMessage,
} from '../../src/providers/telephony/exotel/media-messages';
import { exotelNeutralStatus, exotelStatusTransition, parseExotelCallback } from '../../src/providers/telephony/exotel/status';
import { exotelStreamCredentials, exotelStreamUrl } from '../../src/providers/telephony/exotel/stream-auth';
import { exotelNumberToE164 } from '../../src/providers/telephony/exotel/webhooks';
import { WebhookInputError, type WebhookRequest } from '../../src/providers/telephony/types';
import { bytesForMs } from '../../src/audio/format';

const STREAM = 'MZ18ad3ab5a668481ce02b83e7395059f0';
const CALL = 'b6cfaf5f5cef3ca0fc937749ef960e25';
const secret = 'jwt-secret-for-tests';
const callId = '6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab';
const token = streamToken(secret, callId);

// Messages as Exotel's WebSocket protocol documents them (numbers as strings).
const real = {
  connected: { event: 'connected' },
  start: {
    event: 'start',
    sequence_number: '1',
    stream_sid: STREAM,
    start: {
      stream_sid: STREAM,
      call_sid: CALL,
      account_sid: 'acme1',
      from: '+919876543210',
      to: '+918047491899',
      custom_parameters: { call_id: callId, token },
      media_format: { encoding: 'audio/x-raw', sample_rate: '8000', bit_rate: '16' },
    },
  },
  media: { event: 'media', sequence_number: '3', stream_sid: STREAM, media: { chunk: '2', timestamp: '200', payload: '' } },
  dtmf: { event: 'dtmf', sequence_number: '7', stream_sid: STREAM, dtmf: { digit: '5', duration: '100' } },
  mark: { event: 'mark', sequence_number: '15', stream_sid: STREAM, mark: { name: 'utt-1' } },
  stop: { event: 'stop', sequence_number: '20', stream_sid: STREAM, stop: { call_sid: CALL, account_sid: 'acme1', reason: 'callended' } },
};
const msg = (o: object) => Buffer.from(JSON.stringify(o));
const pcmBytes = (samples: number[]) => Buffer.from(Int16Array.from(samples).buffer);
const upgrade = (query = '') => ({ url: new URL(`ws://x/media/exotel${query}`), headers: {}, remoteAddress: '127.0.0.1' });

describe('Exotel stream messages', () => {
  it('parses every documented message, snake_case and camelCase stream ids alike', () => {
    expect(parseExotelStreamMessage(msg(real.connected))).toEqual({ ok: true, message: { event: 'connected' } });
    const start = parseExotelStreamMessage(msg(real.start));
    expect(start).toMatchObject({ ok: true, message: { event: 'start', streamSid: STREAM, callSid: CALL, format: PCM16_8K, customParameters: { call_id: callId, token } } });
    expect(parseExotelStreamMessage(msg({ ...real.media, media: { ...real.media.media, payload: 'AAAA' } }))).toEqual({
      ok: true,
      message: { event: 'media', streamSid: STREAM, chunk: 2, timestamp: 200, payload: 'AAAA' },
    });
    expect(parseExotelStreamMessage(msg(real.dtmf))).toMatchObject({ ok: true, message: { event: 'dtmf', digit: '5' } });
    expect(parseExotelStreamMessage(msg(real.mark))).toMatchObject({ ok: true, message: { event: 'mark', name: 'utt-1' } });
    expect(parseExotelStreamMessage(msg(real.stop))).toMatchObject({ ok: true, message: { event: 'stop', reason: 'callended' } });
    const camel = { event: 'mark', streamSid: STREAM, mark: { name: 'x' } };
    expect(parseExotelStreamMessage(msg(camel))).toMatchObject({ ok: true, message: { streamSid: STREAM } });
  });

  it('reads the format from media_format: 16-bit PCM at 8 or 16 kHz, anything else unsupported', () => {
    const withFormat = (mf: object) => parseExotelStreamMessage(msg({ ...real.start, start: { ...real.start.start, media_format: mf } }));
    expect(withFormat({ encoding: 'audio/x-raw', sample_rate: '16000', bit_rate: '16' })).toMatchObject({ ok: true, message: { format: PCM16_16K } });
    expect(withFormat({ encoding: 'audio/x-raw', sample_rate: '24000', bit_rate: '16' })).toMatchObject({ ok: true, message: { format: null } });
    expect(withFormat({ encoding: 'audio/x-mulaw', sample_rate: '8000', bit_rate: '8' })).toMatchObject({ ok: true, message: { format: null } });
  });

  it('reports malformed input as typed errors, never throwing', () => {
    expect(parseExotelStreamMessage(Buffer.from('{nope'))).toMatchObject({ ok: false, code: 'invalid_json' });
    expect(parseExotelStreamMessage(msg([1, 2]))).toMatchObject({ ok: false, code: 'invalid_message' });
    expect(parseExotelStreamMessage(msg({ event: 'media', stream_sid: STREAM, media: { payload: '%%%' } }))).toMatchObject({ ok: false, code: 'invalid_message' });
    expect(parseExotelStreamMessage(msg({ event: 'media', media: { payload: 'AAAA' } }))).toMatchObject({ ok: false, code: 'invalid_message' });
    expect(parseExotelStreamMessage(msg({ event: 'dtmf', stream_sid: STREAM, dtmf: { digit: '55' } }))).toMatchObject({ ok: false, code: 'invalid_message' });
    expect(parseExotelStreamMessage(msg({ event: 'wobble' }))).toMatchObject({ ok: false, code: 'unknown_event' });
    expect(parseExotelStreamMessage(Buffer.from(`"${'a'.repeat(300_000)}"`))).toMatchObject({ ok: false, code: 'too_large' });
  });

  it('sends media in chunks that respect Exotel’s size rules (≥ 3.2 KB, ≤ 100 KB, multiples of 320 bytes)', () => {
    expect(exotelFrameMs(8000)).toBe(200);
    expect(exotelFrameMs(16000)).toBe(100);
    for (const format of [PCM16_8K, PCM16_16K]) {
      const bytes = bytesForMs(format, exotelFrameMs(format.sampleRate));
      expect(bytes).toBe(3200);
      expect(isValidExotelChunk(bytes)).toBe(true);
    }
    expect(isValidExotelChunk(1600)).toBe(false);
    expect(isValidExotelChunk(4096)).toBe(false);
    expect(isValidExotelChunk(100_160)).toBe(false);
    const m = JSON.parse(exotelMediaMessage(STREAM, Buffer.alloc(3200, 1)));
    expect(m).toEqual({ event: 'media', stream_sid: STREAM, media: { payload: Buffer.alloc(3200, 1).toString('base64') } });
    // A short chunk (never sent by the gateway) is padded with silence rather than played with a gap.
    const padded = Buffer.from(JSON.parse(exotelMediaMessage(STREAM, Buffer.alloc(1000, 1))).media.payload, 'base64');
    expect(padded.length).toBe(3200);
    expect(padded.subarray(1000).every((b) => b === 0)).toBe(true);
    expect(JSON.parse(exotelMarkMessage(STREAM, 'utt-1'))).toEqual({ event: 'mark', stream_sid: STREAM, mark: { name: 'utt-1' } });
    expect(JSON.parse(exotelClearMessage(STREAM))).toEqual({ event: 'clear', stream_sid: STREAM });
  });
});

describe('Exotel media codec (neutral events)', () => {
  it('starts with the format, 3200-byte frames and our credentials, then decodes little-endian PCM', () => {
    const codec = exotelMedia.open(upgrade());
    expect(codec.decode(msg(real.connected), false)).toEqual({ type: 'connected' });
    expect(codec.decode(msg(real.start), false)).toEqual({
      type: 'start',
      start: { streamId: STREAM, providerCallId: CALL, callId, token, format: PCM16_8K, frameMs: 200 },
    });
    const audio = codec.decode(msg({ ...real.media, media: { ...real.media.media, payload: pcmBytes([1000, -1000, 0, 32767]).toString('base64') } }), false);
    expect(audio.type).toBe('audio');
    if (audio.type === 'audio') expect(Array.from(audio.pcm)).toEqual([1000, -1000, 0, 32767]);
    expect(audio).toMatchObject({ timestampMs: 0 });
    const later = codec.decode(msg({ ...real.media, media: { chunk: '3', timestamp: '300', payload: 'AAAAAA==' } }), false);
    expect(later).toMatchObject({ type: 'audio', timestampMs: 100 });
    expect(codec.decode(msg(real.mark), false)).toEqual({ type: 'mark', name: 'utt-1' });
    expect(codec.decode(msg(real.dtmf), false)).toEqual({ type: 'dtmf', digit: '5' });
    expect(codec.decode(msg(real.stop), false)).toEqual({ type: 'stop' });
    expect(JSON.parse(codec.media(Buffer.alloc(3200)) as string)).toMatchObject({ event: 'media', stream_sid: STREAM });
    expect(JSON.parse(codec.clear())).toEqual({ event: 'clear', stream_sid: STREAM });
  });

  it('takes the credentials from the upgrade query when custom_parameters lack them', () => {
    const codec = exotelMedia.open(upgrade(`?call_id=${callId}&token=${token}&sample-rate=8000`));
    const start = codec.decode(msg({ ...real.start, start: { ...real.start.start, custom_parameters: {} } }), false);
    expect(start).toMatchObject({ type: 'start', start: { callId, token } });
  });

  it('marks bad or out-of-place messages invalid (the gateway ignores them) and refuses unsupported formats', () => {
    const codec = exotelMedia.open(upgrade());
    expect(codec.decode(msg(real.mark), false)).toMatchObject({ type: 'invalid' }); // before start
    codec.decode(msg(real.start), false);
    expect(codec.decode(msg(real.start), false)).toMatchObject({ type: 'invalid' });
    expect(codec.decode(msg({ ...real.mark, stream_sid: 'MZother' }), false)).toMatchObject({ type: 'invalid' });
    expect(codec.decode(msg({ ...real.media, media: { payload: 'AAAA' } }), false)).toMatchObject({ type: 'invalid' }); // 3 bytes: not whole samples
    expect(codec.decode(Buffer.from([0, 1, 2]), true)).toMatchObject({ type: 'invalid' });
    expect(codec.decode(msg({ event: 'wobble' }), false)).toMatchObject({ type: 'ignored' });
    const hd = exotelMedia.open(upgrade());
    const refused = hd.decode(msg({ ...real.start, start: { ...real.start.start, media_format: { encoding: 'audio/x-raw', sample_rate: '24000', bit_rate: '16' } } }), false);
    expect(refused).toMatchObject({ type: 'refused', reason: expect.stringContaining('24000') });
  });
});

describe('Exotel stream URL', () => {
  it('carries the call id, the token and the sample rate, and gives them back', () => {
    const url = new URL(exotelStreamUrl('wss://voice.example.com/media/exotel', callId, token, 16000));
    expect(url.pathname).toBe('/media/exotel');
    expect(Object.fromEntries(url.searchParams)).toEqual({ call_id: callId, token, 'sample-rate': '16000' });
    // Exotel passes at most 3 custom parameters, 256 characters in all.
    expect(url.search.length).toBeLessThanOrEqual(256);
    const back = exotelStreamCredentials({ call_id: callId, token }, null);
    expect(verifyStreamToken(secret, back.callId!, back.token)).toBe(true);
    expect(exotelStreamCredentials({ call_id: 'not-a-uuid', token: 'x y' }, null)).toEqual({ callId: null, token: null });
    expect(() => exotelStreamUrl('https://voice.example.com/media/exotel', callId, token, 8000)).toThrow(/wss/);
    expect(() => exotelStreamUrl('wss://voice.example.com/media/exotel', callId, token, 24000)).toThrow(/sample rate/);
  });
});

describe('Exotel statuses and callbacks', () => {
  it.each([
    ['queued', 'ringing', 'ringing'],
    ['ringing', 'ringing', 'ringing'],
    ['in-progress', 'answered', 'in_progress'],
    ['completed', 'completed', 'completed'],
    ['busy', 'busy', 'no_answer'],
    ['no-answer', 'no_answer', 'no_answer'],
    ['canceled', 'canceled', 'no_answer'],
    ['failed', 'failed', 'failed'],
  ])('%s → %s → call %s', (word, neutral, call) => {
    expect(exotelNeutralStatus(word)).toBe(neutral);
    expect(exotelStatusTransition(word)).toBe(call);
  });

  it('decodes a StatusCallback (form fields, or JSON with a call object) and ignores unknown words', () => {
    expect(parseExotelCallback({ CallSid: CALL, Status: 'completed', EventType: 'terminal', ConversationDuration: '42', DateUpdated: '2026-11-23 10:00:00' })).toEqual({
      providerCallId: CALL,
      providerStatus: 'completed',
      status: 'completed',
      durationSecs: 42,
      detail: { exotel_event: 'terminal', date_updated: '2026-11-23 10:00:00' },
    });
    expect(parseExotelCallback({ call: { sid: CALL, status: 'no-answer' } })).toMatchObject({ providerCallId: CALL, status: 'no_answer' });
    expect(parseExotelCallback({ CallSid: CALL, Status: 'on-hold' })).toMatchObject({ status: null });
    expect(parseExotelCallback({ Status: 'completed' })).toBeNull();
  });
});

describe('Exotel settings, numbers and webhook answers', () => {
  it('accepts only Exotel HTTPS hosts as api_base, in Exotel’s own notations', () => {
    expect(exotelApiBase(null)).toBe(DEFAULT_EXOTEL_API_BASE);
    expect(exotelApiBase('api.in.exotel.com')).toBe('https://api.in.exotel.com');
    expect(exotelApiBase('@api.exotel.com')).toBe('https://api.exotel.com');
    expect(exotelApiBase('https://api.in.exotel.com/')).toBe('https://api.in.exotel.com');
    for (const bad of ['http://api.exotel.com', 'https://evil.example.com', 'https://api.exotel.com.evil.io', 'https://user:pw@api.exotel.com', 'https://api.exotel.com:8443', 'https://127.0.0.1', 'https://api.exotel.com/v1']) {
      expect(exotelApiBase(bad)).toBeNull();
    }
  });

  it('names missing or unusable credentials', () => {
    const settings = (exotel: Record<string, unknown>) => ({ account_sid: null, api_key: null, api_token: null, api_base: null, ...exotel }) as any;
    expect(() => exotelVendor.credentials(settings({}), { EXOTEL_SAMPLE_RATE: 8000 } as any)).toThrow(/exotel_account_sid, exotel_api_key, exotel_api_token are not set/);
    expect(() => exotelVendor.credentials(settings({ account_sid: 'a', api_key: 'k', api_token: 't', api_base: 'https://evil.example.com' }), { EXOTEL_SAMPLE_RATE: 8000 } as any)).toThrow(/exotel_api_base/);
    expect(exotelVendor.credentials(settings({ account_sid: 'a', api_key: 'k', api_token: 't', api_base: 'api.in.exotel.com' }), { EXOTEL_SAMPLE_RATE: 16000 } as any)).toEqual({
      accountSid: 'a',
      apiKey: 'k',
      apiToken: 't',
      apiBaseUrl: 'https://api.in.exotel.com',
      sampleRate: 16000,
    });
  });

  it('turns Exotel’s national numbers into E.164', () => {
    expect(exotelNumberToE164('09876543210')).toBe('+919876543210');
    expect(exotelNumberToE164('+14155550100')).toBe('+14155550100');
    expect(exotelNumberToE164('4155550100')).toBe('4155550100');
  });

  it('reads the applet’s request and answers it with the stream URL, or an error the flow acts on', () => {
    const req = (query: Record<string, string>): WebhookRequest => ({ method: 'GET', originalUrl: '/telephony/exotel/inbound/a', headers: {}, body: {}, query });
    const w = exotelVendor.webhooks;
    expect(w.inboundCall(req({ CallSid: CALL, CallFrom: '09812345678', CallTo: '08047491899', Direction: 'incoming' }))).toEqual({
      providerCallId: CALL,
      from: '+919812345678',
      to: '+918047491899',
    });
    expect(() => w.inboundCall(req({ CallFrom: '09812345678', CallTo: '08047491899' }))).toThrow(WebhookInputError);
    expect(w.providerCallId(req({ CallSid: CALL }))).toBe(CALL);
    const connect = w.connect({ streamUrl: 'wss://v.example.com/media/exotel', callId, token }, { config: { EXOTEL_SAMPLE_RATE: 8000 } as any });
    expect(connect).toMatchObject({ status: 200, contentType: 'application/json' });
    expect(JSON.parse(connect.body)).toEqual({ url: `wss://v.example.com/media/exotel?call_id=${callId}&token=${token}&sample-rate=8000` });
    expect(w.reject()).toMatchObject({ status: 404 });
    expect(JSON.parse(w.sayAndHangup('Busy.').body)).toEqual({ detail: 'Busy.' });
    expect(w.verify(req({}), { settings: {} as any, publicBaseUrl: 'https://v.example.com' })).toEqual({ ok: true });
  });
});
