/**
 * The media gateway when things go wrong, end to end over real sockets (the stack of
 * gateway.test.ts, test/support/gateway-probe-stack.ts): the caller hangs up or the line drops,
 * sockets that are unauthenticated, flooding or malformed, a vendor outage (STT, TTS, LLM), and the
 * gateway process dying under a live call.
 */
import fs from 'node:fs';
import WebSocket from 'ws';
import { readWavFile, channelOf } from '../../src/audio/wav';
import { streamToken } from '../../src/gateway/stream/stream-token';
import { maxMediaMessageBytes } from '../../src/providers/telephony/media-registry';
import { FRAME_MS } from '../fakes/twilio-caller';
import {
  cartesia,
  connect,
  deepgram,
  eventsOf,
  eventually,
  gateway,
  h,
  health,
  HELLO_WAV,
  MS_PER_CHAR,
  newCall,
  openai,
  probeState,
  rawStream,
  speak,
  startMessage,
  startProbe,
  useGatewayProbe,
  voiceTurn,
} from '../support/gateway-probe-stack';
import { sleep } from '../support/speech';
import { speechFakesEnv } from '../support/voice-stack';
import { killHard, spawnGatewayProcess } from '../support/worker-process-control';

useGatewayProbe();

describe('media gateway, when things go wrong', () => {
  it('reports a caller hang-up to the media session', async () => {
    const call = await newCall();
    await sleep(200);
    await call.caller.hangup();
    const state = await eventually(async () => {
      const s = await call.state();
      return s.session && s;
    });
    expect(state.session!.result!.reason).toBe('hangup');
    expect(gateway.calls.get(call.callId)).toBeUndefined();
    // Speech requested after the hang-up is simply not heard (the call is over, not the gateway lost).
    await expect(speak(call, 'late', 'Are you still there?')).resolves.toMatchObject({ heardText: '', interrupted: true });
    // A stream for the finished call is refused.
    const again = await connect(call.callId);
    expect((await again.closed).code).toBe(1008);
  });

  it('finishes a valid recording when the connection drops without a stop', async () => {
    const call = await newCall();
    await speak(call, 'g', 'Hello there.');
    call.caller.drop();
    const state = await eventually(async () => {
      const s = await call.state();
      return s.session && s;
    });
    expect(state.session!.result!.reason).toBe('hangup');
    const wav = readWavFile(state.connected!.recordingPath!);
    expect(wav).toMatchObject({ channels: 2, sampleRate: 8000 });
    expect(channelOf(wav, 1).some((s) => Math.abs(s) > 1000)).toBe(true);
    // Finalised: the header's sizes match the file (not just readable by a tolerant parser).
    const bytes = fs.readFileSync(state.connected!.recordingPath!);
    expect(bytes.readUInt32LE(40)).toBe(bytes.length - 44);
    expect(bytes.readUInt32LE(4)).toBe(bytes.length - 8);
  });

  it('closes only unauthenticated, flooding or unknown-call sockets; a live call ignores bad messages and goes on', async () => {
    const good = await newCall();
    const live = await newCall();

    const cases: Array<[string, (ws: WebSocket) => void, number]> = [
      ['malformed JSON before start', (ws) => ws.send('{"event": "media", oops'), 1008],
      ['binary frame before start', (ws) => ws.send(Buffer.from([1, 2, 3])), 1008],
      ['media before start', (ws) => ws.send(JSON.stringify({ event: 'media', sequenceNumber: '2', streamSid: 'MZ1', media: { track: 'inbound', chunk: '1', timestamp: '0', payload: '' } })), 1008],
      ['bad token', (ws) => ws.send(startMessage(good.callId, 'not-the-token')), 1008],
      ['unknown call', (ws) => ws.send(startMessage('no-such-call', streamToken(h.config.JWT_SECRET!, 'no-such-call'))), 1008],
      ['call already streaming', (ws) => ws.send(startMessage(good.callId, streamToken(h.config.JWT_SECRET!, good.callId))), 1008],
      ['oversized message', (ws) => ws.send(JSON.stringify({ event: 'media', pad: 'x'.repeat(maxMediaMessageBytes() + 1) })), 1009],
      ['flood', (ws) => { for (let i = 0; i < 1000; i++) ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' })); }, 1008],
    ];
    for (const [name, abuse, code] of cases) {
      const raw = await rawStream();
      abuse(raw.ws);
      await expect(raw.closed.then((c) => `${name}: ${c}`)).resolves.toBe(`${name}: ${code}`);
    }

    // On an authenticated, live call every kind of bad message is logged, counted and ignored.
    const before = (await health()).streams.twilio;
    const liveWs = (live.caller as unknown as { ws: WebSocket }).ws;
    const sid = live.caller.streamSid;
    const junk = [
      JSON.stringify({ event: 'someFutureEvent', streamSid: sid }),
      'not json at all',
      Buffer.from([1, 2, 3]),
      JSON.stringify({ event: 'mark', streamSid: sid, mark: { name: 'u1:end' } }), // a mark echo without sequenceNumber
      JSON.stringify({ event: 'mark', streamSid: sid, mark: {} }),
      JSON.stringify({ event: 'media', streamSid: 'MZ-another-stream', media: { track: 'inbound', chunk: '1', timestamp: '0', payload: 'AAAA' } }),
      JSON.stringify({ event: 'media', streamSid: sid, media: { track: 'inbound', chunk: '1', timestamp: '0', payload: 'not base64!' } }),
      startMessage(live.callId, 'a second start'),
    ];
    for (const message of junk) liveWs.send(message);
    await sleep(200);
    expect(live.caller.isOpen).toBe(true);
    const after = (await health()).streams.twilio;
    expect(after.invalid_messages - before.invalid_messages).toBe(6);
    expect(after.ignored_messages - before.ignored_messages).toBe(1);
    expect(after.rejected.unauthenticated).toBeGreaterThanOrEqual(4);
    expect(after.rejected.flood).toBeGreaterThanOrEqual(1);
    expect(after.rejected.unknown_or_finished_call).toBeGreaterThanOrEqual(2);
    // The live call still hears the agent and is heard.
    const heard = await speak(live, 'after-junk', 'Still talking to you.');
    expect(heard.interrupted).toBe(false);
    expect(live.caller.speechFrames().length).toBeGreaterThan(0);
    expect(live.caller.isOpen).toBe(true);

    const outcome = await speak(good, 'still-here', 'Still here.');
    expect(outcome.interrupted).toBe(false);
    expect(good.caller.speechFrames().length).toBeGreaterThan(0);
    expect(good.caller.isOpen).toBe(true);
  });

  it('reports an STT outage as an error event and keeps hearing the caller', async () => {
    const call = await newCall();
    deepgram.dropConnections(1011, 'simulated outage');
    await sleep(300);
    deepgram.script(['I would like to book an appointment for tomorrow.']);
    await call.caller.say(HELLO_WAV);
    const state = await eventually(async () => {
      const s = await call.state();
      return s.utterances.length > 0 && s;
    });
    expect(state.utterances[0]!.text).toBe('I would like to book an appointment for tomorrow.');
    const errors = eventsOf(state.utterances[0]!.events ?? [], 'error');
    expect(errors[0]!.data).toMatchObject({ context: 'stt', message: expect.stringContaining('Deepgram') });
  });

  it('reports a TTS connection drop as an error event and speaks again afterwards', async () => {
    const call = await newCall();
    const text = 'This sentence plays while the TTS connection drops underneath it.';
    const outcome = speak(call, 'cut', text);
    await eventually(async () => cartesia.received.contexts.get('cut'));
    cartesia.dropConnections(1011, 'simulated outage');
    const first = await outcome;
    expect(first.interrupted).toBe(false);
    const later = await speak(call, 'after', 'I am back.');
    expect(later).toMatchObject({ heardText: 'I am back.', interrupted: false });
    const errors = eventsOf([...first.events, ...later.events], 'error');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]!.data).toMatchObject({ context: 'tts', message: expect.stringContaining('Cartesia') });
  });

  it('fails a voice turn whose LLM fails, for the workflow to retry, and reports it', async () => {
    const call = await newCall();
    openai.failNext(1, 503);
    const failed = await voiceTurn(call, 'llm-down').then(
      () => null,
      (err: Error & { cause?: { cause?: { type?: string; nonRetryable?: boolean } } }) => err.cause?.cause,
    );
    expect(failed).toMatchObject({ type: 'LlmUnavailable', nonRetryable: false });
    openai.enqueue({ status: 400, error_message: 'bad request' });
    const rejected = await voiceTurn(call, 'llm-bad').then(
      () => null,
      (err: Error & { cause?: { cause?: { type?: string; nonRetryable?: boolean } } }) => err.cause?.cause,
    );
    expect(rejected).toMatchObject({ type: 'LlmRequestRejected', nonRetryable: true });
    // The retry of a turn gets the same utterance id: it still speaks.
    openai.enqueue({ content: 'Here you go.' });
    const retried = await voiceTurn(call, 'llm-down');
    expect(retried).toMatchObject({ heardText: 'Here you go.', interrupted: false });
    const errors = eventsOf(retried.events, 'error').map((e) => e.data.context);
    expect(errors).toEqual(['llm', 'llm']);
    expect(call.caller.speechFrames().length * FRAME_MS).toBeLessThan(('Here you go.'.length + 2) * MS_PER_CHAR);
  });

  it('fails the media session by heartbeat timeout when the gateway process dies', async () => {
    const { child, ...ready } = await spawnGatewayProcess(h, speechFakesEnv(deepgram, cartesia, openai));
    try {
      const { callId, handle } = await startProbe();
      const caller = await connect(callId, `${ready.url}/media/twilio`);
      await eventually(async () => (await probeState(handle)).connected, 10_000, 'mediaConnected');
      expect((await probeState(handle)).connected!.gatewayTaskQueue).toBe(ready.taskQueue);
      await sleep(1500); // the media session is running and heartbeating
      expect((await probeState(handle)).session).toBeNull();
      const killedAt = Date.now();
      await killHard(child);
      await caller.closed;
      const state = await eventually(async () => {
        const s = await probeState(handle);
        return s.session && s;
      }, 20_000, 'media session failure');
      expect(state.session!.error).toMatchObject({ cause: 'TimeoutFailure', timeoutType: 'HEARTBEAT' });
      const noticedAfterMs = Date.now() - killedAt;
      expect(noticedAfterMs).toBeLessThan(12_000);
    } finally {
      await killHard(child);
    }
  }, 90_000);
});
