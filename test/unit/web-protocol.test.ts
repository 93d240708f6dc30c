/**
 * The browser's media stream codec (/media/web) and its tokens (docs/web-calls.md): what a browser
 * sends is decoded into the neutral events the phone pipeline takes, audio captured at 48 kHz is
 * resampled once to 16 kHz, agent audio goes back as binary frames, and a token is good for one
 * call, until its expiry, from the origin it was minted for.
 */
import { webMedia } from '../../src/providers/channels/web/media';
import { verifyWebCallToken, webCallToken } from '../../src/providers/channels/web/token';
import { mediaProtocol } from '../../src/providers/telephony/media-registry';
import type { StreamEvent } from '../../src/providers/telephony/stream';

const upgrade = (origin?: string) => ({ url: new URL('http://gateway/media/web'), headers: origin ? { origin } : {}, remoteAddress: '127.0.0.1' });
const text = (msg: unknown) => Buffer.from(JSON.stringify(msg));
const SECRET = 'a-secret-of-at-least-sixteen-chars';

/** A 1 kHz tone at `rate`, as the little-endian bytes a browser sends. */
function tone(rate: number, ms: number): Buffer {
  const n = (rate * ms) / 1000;
  const buf = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) buf.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 1000 * i) / rate)), i * 2);
  return buf;
}

describe('the web media codec', () => {
  it('is served by the gateway at /media/web, beside the telephony vendors', () => {
    expect(mediaProtocol('web')).toBe(webMedia);
    expect(mediaProtocol('twilio')?.name).toBe('twilio');
  });

  it('starts 16-bit PCM 16 kHz streams with the call id and token of the start message', () => {
    const codec = webMedia.open(upgrade());
    const start = codec.decode(text({ event: 'start', call_id: 'c1', token: 't1', sample_rate: 16000 }), false);
    expect(start).toEqual({ type: 'start', start: expect.objectContaining({ callId: 'c1', token: 't1', providerCallId: null, format: { encoding: 'pcm16', sampleRate: 16000 } }) });
    const audio = codec.decode(tone(16000, 20), true) as Extract<StreamEvent, { type: 'audio' }>;
    expect(audio.type).toBe('audio');
    expect(audio.pcm.length).toBe(320);
    expect(audio.pcm[4]).toBe(tone(16000, 20).readInt16LE(8));
  });

  it('resamples 48 kHz capture to 16 kHz once, keeping the tone', () => {
    const codec = webMedia.open(upgrade());
    codec.decode(text({ event: 'start', call_id: 'c1', token: 't1', sample_rate: 48000 }), false);
    let samples = 0;
    let peak = 0;
    for (let i = 0; i < 10; i++) {
      const e = codec.decode(tone(48000, 20), true) as Extract<StreamEvent, { type: 'audio' }>;
      samples += e.pcm.length;
      if (i > 2) for (const s of e.pcm) peak = Math.max(peak, Math.abs(s));
    }
    // 200 ms at 16 kHz, less the resampler's few samples of lookahead.
    expect(samples).toBeGreaterThan(3150);
    expect(samples).toBeLessThanOrEqual(3200);
    expect(peak).toBeGreaterThan(7000);
    expect(peak).toBeLessThan(9000);
  });

  it('refuses other rates, and reads marks, stop, and what it cannot use without throwing', () => {
    const refused = webMedia.open(upgrade()).decode(text({ event: 'start', call_id: 'c1', token: 't', sample_rate: 44100 }), false);
    expect(refused).toEqual({ type: 'refused', reason: expect.stringMatching(/unsupported sample_rate 44100/) });
    const codec = webMedia.open(upgrade());
    expect(codec.decode(tone(16000, 20), true)).toEqual({ type: 'invalid', error: 'audio before start' });
    expect(codec.decode(Buffer.from('{nope'), false).type).toBe('invalid');
    codec.decode(text({ event: 'start', call_id: 'c1', token: 't' }), false);
    expect(codec.decode(text({ event: 'start', call_id: 'c1', token: 't' }), false).type).toBe('invalid');
    expect(codec.decode(Buffer.alloc(3), true)).toEqual({ type: 'invalid', error: 'audio frame of 3 bytes (16-bit samples)' });
    expect(codec.decode(text({ event: 'mark', name: 'm7' }), false)).toEqual({ type: 'mark', name: 'm7' });
    expect(codec.decode(text({ event: 'stop' }), false)).toEqual({ type: 'stop' });
    expect(codec.decode(text({ event: 'ping' }), false).type).toBe('ignored');
  });

  it('sends agent audio as binary frames, marks and clears as JSON', () => {
    const codec = webMedia.open(upgrade());
    const frame = Buffer.from([1, 2, 3, 4]);
    expect(codec.media(frame)).toBe(frame);
    expect(JSON.parse(codec.mark('m1'))).toEqual({ event: 'mark', name: 'm1' });
    expect(JSON.parse(codec.clear())).toEqual({ event: 'clear' });
  });
});

describe('web call tokens', () => {
  const now = Date.now();
  const exp = Math.floor(now / 1000) + 60;

  it('are good for their call, until their expiry, from their origin', () => {
    const any = webCallToken(SECRET, { callId: 'c1', expiresAtSecs: exp, origin: null });
    expect(verifyWebCallToken(SECRET, any, 'c1', undefined, now)).toEqual({ ok: true });
    expect(verifyWebCallToken(SECRET, any, 'c1', 'https://anywhere.example', now)).toEqual({ ok: true });
    expect(verifyWebCallToken(SECRET, any, 'c2', undefined, now)).toEqual({ ok: false, reason: 'invalid stream token' });
    expect(verifyWebCallToken('another-secret-sixteen+', any, 'c1', undefined, now)).toEqual({ ok: false, reason: 'invalid stream token' });
    expect(verifyWebCallToken(SECRET, any, 'c1', undefined, exp * 1000)).toEqual({ ok: false, reason: 'stream token expired' });

    const bound = webCallToken(SECRET, { callId: 'c1', expiresAtSecs: exp, origin: 'https://shop.example' });
    expect(verifyWebCallToken(SECRET, bound, 'c1', 'https://shop.example', now)).toEqual({ ok: true });
    expect(verifyWebCallToken(SECRET, bound, 'c1', 'https://evil.example', now).ok).toBe(false);
    expect(verifyWebCallToken(SECRET, bound, 'c1', undefined, now).ok).toBe(false);
  });

  it('cannot be altered: a later expiry or another origin breaks the MAC', () => {
    const [, origin, mac] = webCallToken(SECRET, { callId: 'c1', expiresAtSecs: exp, origin: 'https://shop.example' }).split('.');
    expect(verifyWebCallToken(SECRET, `${exp + 3600}.${origin}.${mac}`, 'c1', 'https://shop.example', now)).toEqual({ ok: false, reason: 'invalid stream token' });
    expect(verifyWebCallToken(SECRET, `${exp}..${mac}`, 'c1', undefined, now)).toEqual({ ok: false, reason: 'invalid stream token' });
    for (const junk of [null, 42, '', 'a.b', 'x'.repeat(600)]) expect(verifyWebCallToken(SECRET, junk, 'c1', undefined, now).ok).toBe(false);
  });
});
