/**
 * Pure parts of the Twilio adapter: the Media Streams message parser and builders, the status
 * mapping, and the TwiML builders (read back with the fake Twilio's TwiML reader).
 */
import {
  clearMessage,
  markMessage,
  mediaMessage,
  mediaPayload,
  parseTwilioStreamMessage,
  MAX_TWILIO_MESSAGE_CHARS,
} from '../../src/providers/telephony/twilio/media-messages';
import { parseTwilioStatusCallback, twilioStatusTransition, TWILIO_CALL_STATUSES } from '../../src/providers/telephony/twilio/status';
import { connectStreamTwiml, rejectTwiml, sayAndHangupTwiml } from '../../src/providers/telephony/twilio/twiml';
import { canApplyTransition } from '../../src/providers/telephony/types';
import { parseTwiml, TwimlError } from '../fakes/twilio-twiml';

const STREAM = 'MZ18ad3ab5a668481ce02b83e7395059f0';
const CALL = 'CA2b6f4b1ffd4d3c4b91c5f4e3c8b4a6d2';
const ACCOUNT = 'AC25e16e9a716a4a1786a7c83f58e30482';

// Shapes as Twilio's documentation shows them.
const real = {
  connected: { event: 'connected', protocol: 'Call', version: '1.0.0' },
  start: {
    event: 'start',
    sequenceNumber: '1',
    start: {
      accountSid: ACCOUNT,
      streamSid: STREAM,
      callSid: CALL,
      tracks: ['inbound'],
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      customParameters: { call_id: 'c1', FirstName: 'Jane' },
    },
    streamSid: STREAM,
  },
  media: {
    event: 'media',
    sequenceNumber: '3',
    media: { track: 'inbound', chunk: '1', timestamp: '5', payload: Buffer.alloc(160, 0xff).toString('base64') },
    streamSid: STREAM,
  },
  dtmf: { event: 'dtmf', streamSid: STREAM, sequenceNumber: '5', dtmf: { track: 'inbound_track', digit: '1' } },
  mark: { event: 'mark', sequenceNumber: '4', streamSid: STREAM, mark: { name: 'my label' } },
  stop: { event: 'stop', sequenceNumber: '5', streamSid: STREAM, stop: { accountSid: ACCOUNT, callSid: CALL } },
};

describe('parseTwilioStreamMessage', () => {
  it.each(Object.entries(real))('accepts a real-looking %s message', (_name, msg) => {
    const result = parseTwilioStreamMessage(JSON.stringify(msg));
    expect(result).toEqual({ ok: true, message: msg });
  });

  it('accepts Buffer and Buffer[] frames as ws delivers them', () => {
    const text = JSON.stringify(real.mark);
    expect(parseTwilioStreamMessage(Buffer.from(text)).ok).toBe(true);
    expect(parseTwilioStreamMessage([Buffer.from(text.slice(0, 10)), Buffer.from(text.slice(10))]).ok).toBe(true);
  });

  it('decodes the media payload to mu-law bytes', () => {
    const result = parseTwilioStreamMessage(JSON.stringify(real.media));
    if (!result.ok || result.message.event !== 'media') throw new Error('expected media');
    expect(mediaPayload(result.message)).toEqual(Buffer.alloc(160, 0xff));
  });

  it('defaults an absent customParameters to {}', () => {
    const start = structuredClone(real.start) as any;
    delete start.start.customParameters;
    const result = parseTwilioStreamMessage(JSON.stringify(start));
    expect(result.ok && result.message.event === 'start' && result.message.start.customParameters).toEqual({});
  });

  const garbage: Array<[string, unknown, string]> = [
    ['not JSON', '{"event":', 'invalid_json'],
    ['a JSON array', '[1,2]', 'invalid_message'],
    ['JSON null', 'null', 'invalid_message'],
    ['a number', 42, 'invalid_message'],
    ['no event', '{}', 'invalid_message'],
    ['an unknown event', '{"event":"transcript"}', 'unknown_event'],
    ['media without payload', JSON.stringify({ ...real.media, media: { track: 'inbound', chunk: '1', timestamp: '0' } }), 'invalid_message'],
    ['media with non-base64 payload', JSON.stringify({ ...real.media, media: { ...real.media.media, payload: 'not base64!' } }), 'invalid_message'],
    ['media with a numeric chunk', JSON.stringify({ ...real.media, media: { ...real.media.media, chunk: 1 } }), 'invalid_message'],
    ['media with a numeric sequenceNumber', JSON.stringify({ ...real.media, sequenceNumber: 3 }), 'invalid_message'],
    ['start without callSid', JSON.stringify({ ...real.start, start: { ...real.start.start, callSid: undefined } }), 'invalid_message'],
    ['start with a number parameter', JSON.stringify({ ...real.start, start: { ...real.start.start, customParameters: { n: 1 } } }), 'invalid_message'],
    ['start with bad tracks', JSON.stringify({ ...real.start, start: { ...real.start.start, tracks: 'inbound' } }), 'invalid_message'],
    ['start with sampleRate 0', JSON.stringify({ ...real.start, start: { ...real.start.start, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 0, channels: 1 } } }), 'invalid_message'],
    ['dtmf with two digits', JSON.stringify({ ...real.dtmf, dtmf: { digit: '12' } }), 'invalid_message'],
    ['mark without name', JSON.stringify({ ...real.mark, mark: {} }), 'invalid_message'],
    ['stop without body', JSON.stringify({ ...real.stop, stop: null }), 'invalid_message'],
    ['an oversized message', 'x'.repeat(MAX_TWILIO_MESSAGE_CHARS + 1), 'too_large'],
    ['binary junk', Buffer.from([0xff, 0xfe, 0x00, 0x7b]), 'invalid_json'],
    ['a non-text value', { toString: () => { throw new Error('boom'); } }, 'invalid_message'],
  ];
  it.each(garbage)('rejects %s with a typed error and never throws', (_name, input, code) => {
    const result = parseTwilioStreamMessage(input);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.code).toBe(code);
      expect(typeof result.error).toBe('string');
    }
  });
});

describe('messages to Twilio', () => {
  it('builds media, mark and clear in the shapes Twilio expects', () => {
    const audio = Buffer.from([1, 2, 3, 250]);
    expect(JSON.parse(mediaMessage(STREAM, audio))).toEqual({ event: 'media', streamSid: STREAM, media: { payload: audio.toString('base64') } });
    // A view into a larger buffer encodes only its own bytes.
    const big = Buffer.from([9, 9, 1, 2, 3, 250, 9]);
    expect(JSON.parse(mediaMessage(STREAM, big.subarray(2, 6))).media.payload).toBe(audio.toString('base64'));
    expect(JSON.parse(markMessage(STREAM, 'seg-1'))).toEqual({ event: 'mark', streamSid: STREAM, mark: { name: 'seg-1' } });
    expect(JSON.parse(clearMessage(STREAM))).toEqual({ event: 'clear', streamSid: STREAM });
  });
});

describe('status mapping', () => {
  it.each([
    ['queued', 'ringing'],
    ['initiated', 'ringing'],
    ['ringing', 'ringing'],
    ['in-progress', 'in_progress'],
    ['completed', 'completed'],
    ['busy', 'no_answer'],
    ['no-answer', 'no_answer'],
    ['canceled', 'no_answer'],
    ['failed', 'failed'],
  ])('maps Twilio %s to %s', (twilio, platform) => {
    expect(twilioStatusTransition(twilio)).toBe(platform);
  });

  it('covers every Twilio status and maps unknown ones to null', () => {
    expect(TWILIO_CALL_STATUSES.every((s) => twilioStatusTransition(s) !== null)).toBe(true);
    expect(twilioStatusTransition('answered')).toBeNull();
    expect(twilioStatusTransition('toString')).toBeNull();
  });

  it('decodes a status callback and refuses one without CallSid or CallStatus', () => {
    expect(parseTwilioStatusCallback({ CallSid: CALL, CallStatus: 'completed', CallDuration: '42', SequenceNumber: '3', Duration: '1' })).toEqual({
      providerCallId: CALL,
      providerStatus: 'completed',
      status: 'completed',
      durationSecs: 42,
      sequenceNumber: 3,
    });
    expect(parseTwilioStatusCallback({ CallSid: CALL, CallStatus: 'ringing', CallDuration: '-1' })).toEqual({
      providerCallId: CALL,
      providerStatus: 'ringing',
      status: 'ringing',
    });
    expect(parseTwilioStatusCallback({ CallSid: CALL, CallStatus: 'busy', SipResponseCode: '486' })).toMatchObject({
      status: 'busy',
      detail: { sip_response_code: '486' },
    });
    expect(parseTwilioStatusCallback({ CallStatus: 'completed' })).toBeNull();
    expect(parseTwilioStatusCallback({ CallSid: CALL, CallStatus: ['a', 'b'] })).toBeNull();
  });

  it('never moves a call backwards or out of a terminal status (callbacks arrive out of order)', () => {
    expect(canApplyTransition('ringing', 'in_progress')).toBe(true);
    expect(canApplyTransition('ringing', 'no_answer')).toBe(true);
    expect(canApplyTransition('in_progress', 'completed')).toBe(true);
    expect(canApplyTransition('in_progress', 'ringing')).toBe(false);
    expect(canApplyTransition('ringing', 'ringing')).toBe(false);
    expect(canApplyTransition('completed', 'in_progress')).toBe(false);
    expect(canApplyTransition('no_answer', 'completed')).toBe(false);
    expect(canApplyTransition('failed', 'completed')).toBe(false);
  });
});

describe('TwiML builders', () => {
  it('connects a stream with <Parameter>s (escaped) and no query string', () => {
    const xml = connectStreamTwiml({
      streamUrl: 'wss://gw.example.com/media/twilio/c1',
      parameters: { call_id: 'c1', note: 'a & b <c> "d"' },
      statusCallbackUrl: 'https://api.example.com/telephony/twilio/stream-status/c1',
    });
    expect(parseTwiml(xml)).toEqual([
      {
        verb: 'Connect',
        stream: {
          url: 'wss://gw.example.com/media/twilio/c1',
          parameters: { call_id: 'c1', note: 'a & b <c> "d"' },
          statusCallback: 'https://api.example.com/telephony/twilio/stream-status/c1',
          statusCallbackMethod: 'POST',
          name: undefined,
        },
      },
    ]);
  });

  it('refuses a stream URL with a query string or a non-WebSocket scheme', () => {
    expect(() => connectStreamTwiml({ streamUrl: 'wss://gw.example.com/m?call=1', parameters: {} })).toThrow(/query string/);
    expect(() => connectStreamTwiml({ streamUrl: 'https://gw.example.com/m', parameters: {} })).toThrow(/wss/);
  });

  it('builds reject and say-and-hangup documents', () => {
    expect(parseTwiml(rejectTwiml('busy'))).toEqual([{ verb: 'Reject', reason: 'busy' }]);
    expect(parseTwiml(rejectTwiml('rejected'))).toEqual([{ verb: 'Reject', reason: 'rejected' }]);
    expect(parseTwiml(sayAndHangupTwiml('Sorry, all lines are busy.', 'en-IN'))).toEqual([
      { verb: 'Say', text: 'Sorry, all lines are busy.', language: 'en-IN' },
      { verb: 'Hangup' },
    ]);
  });

  it("the fake's TwiML reader refuses malformed or unsupported documents", () => {
    expect(() => parseTwiml('<Response><Connect></Response>')).toThrow(TwimlError);
    expect(() => parseTwiml('<Response><Dial>+1555</Dial></Response>')).toThrow(/exactly one <Number>, <Sip> or <Conference>/);
    expect(() => parseTwiml('<Foo/>')).toThrow(/Response/);
    expect(() => parseTwiml('<Response><Say>a & b</Say></Response>')).toThrow(/&/);
  });
});
