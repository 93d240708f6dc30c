/**
 * The Plivo adapter (official SDK for REST, XML and signatures; the stream codec) against the
 * fake Plivo, over real sockets. A small stand-in for the platform — an Express app for the
 * callbacks and a WebSocket server for the stream — uses the adapter modules the way the API and
 * the media gateway do.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { WebSocketServer, type WebSocket } from 'ws';
import { fromPcm16, PCM16_16K, MULAW_8K, type AudioFormat } from '../../src/audio/format';
import { createPlivoCall, hangupPlivoCall, toProviderError, type PlivoCredentials } from '../../src/providers/telephony/plivo/client';
import {
  checkpointMessage,
  clearAudioMessage,
  formatOfMediaFormat,
  parsePlivoStreamMessage,
  playAudioMessage,
  type PlivoContentType,
  type PlivoStreamMessage,
} from '../../src/providers/telephony/plivo/media-messages';
import { validatePlivoHttpRequest } from '../../src/providers/telephony/plivo/signature';
import { parsePlivoCallback } from '../../src/providers/telephony/plivo/status';
import { plivoStreamCredentials, plivoStreamExtraHeaders } from '../../src/providers/telephony/plivo/stream-auth';
import { rejectXml, speakAndHangupXml, streamXml } from '../../src/providers/telephony/plivo/xml';
import { TelephonyProviderError, type StatusUpdate } from '../../src/providers/telephony/types';
import { startFakePlivo, type FakePlivo } from '../fakes/plivo-server';

const AUTH_ID = 'MAODUZYTQ0Y2FMYJBLOW';
const AUTH_TOKEN = 'fake-plivo-auth-token-0123456789';
const OUR_NUMBER = '+14155550100';
const CALL_ID = '6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab';

interface StandIn {
  publicBaseUrl: string;
  gatewayUrl: string;
  updates: Map<string, StatusUpdate[]>;
  rejected: string[];
  streams: Array<{ messages: PlivoStreamMessage[]; parseErrors: string[]; closedAtMs?: number; ws: WebSocket }>;
  contentType: PlivoContentType;
  gatewayMode: 'greet' | 'hold' | 'clear';
  inbound: 'stream' | 'reject' | 'busy';
  stop(): Promise<void>;
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function startStandIn(): Promise<StandIn> {
  const app = express();
  const apiServer = http.createServer(app);
  const gatewayServer = http.createServer();
  const [apiPort, gatewayPort] = [await listen(apiServer), await listen(gatewayServer)];
  const wss = new WebSocketServer({ server: gatewayServer });
  const site: StandIn = {
    publicBaseUrl: `http://127.0.0.1:${apiPort}`,
    gatewayUrl: `ws://127.0.0.1:${gatewayPort}/media/plivo`,
    updates: new Map(),
    rejected: [],
    streams: [],
    contentType: 'audio/x-mulaw;rate=8000',
    gatewayMode: 'greet',
    inbound: 'stream',
    stop: async () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
      for (const s of [apiServer, gatewayServer]) {
        s.closeAllConnections();
        await new Promise((r) => s.close(r));
      }
    },
  };
  const xmlFor = () => streamXml({ streamUrl: site.gatewayUrl, contentType: site.contentType, extraHeaders: plivoStreamExtraHeaders(CALL_ID, 'dG9rZW4') });
  app.use('/telephony/plivo', express.urlencoded({ extended: false }));
  app.use('/telephony/plivo', (req, res, next) => {
    if (validatePlivoHttpRequest(req, { authToken: AUTH_TOKEN, publicBaseUrl: site.publicBaseUrl })) return next();
    site.rejected.push(req.originalUrl);
    res.status(403).json({ detail: 'Invalid X-Plivo-Signature-V3' });
  });
  const record = (req: express.Request) => {
    const update = parsePlivoCallback(req.body);
    if (update) site.updates.set(req.params.id as string, [...(site.updates.get(req.params.id as string) ?? []), update]);
  };
  app.post('/telephony/plivo/answer/:id', (req, res) => {
    record(req);
    res.type('text/xml').send(xmlFor());
  });
  app.post('/telephony/plivo/status/:id', (req, res) => {
    record(req);
    res.status(204).end();
  });
  app.post('/telephony/plivo/inbound/:id', (req, res) => {
    record(req);
    if (site.inbound === 'reject') return void res.type('text/xml').send(rejectXml());
    if (site.inbound === 'busy') return void res.type('text/xml').send(speakAndHangupXml('All our agents are busy. Goodbye.'));
    res.type('text/xml').send(xmlFor());
  });
  wss.on('connection', (ws) => {
    const stream = { messages: [] as PlivoStreamMessage[], parseErrors: [] as string[], closedAtMs: undefined as number | undefined, ws };
    site.streams.push(stream);
    let format: AudioFormat | null = null;
    let streamId = '';
    ws.on('close', () => (stream.closedAtMs = Date.now()));
    ws.on('message', (data) => {
      const parsed = parsePlivoStreamMessage(data);
      if (!parsed.ok) return void stream.parseErrors.push(parsed.error);
      const m = parsed.message;
      stream.messages.push(m);
      if (m.event === 'start') {
        format = formatOfMediaFormat(m.start.mediaFormat);
        streamId = m.start.streamId;
        if (!format || site.gatewayMode === 'hold') return;
        // 400 ms of tone in 20 ms chunks, then a checkpoint.
        const audio = fromPcm16(toneAt(format, 400), format);
        const chunk = audio.length / 20;
        for (let i = 0; i < audio.length; i += chunk) ws.send(playAudioMessage(format, audio.subarray(i, i + chunk)));
        ws.send(checkpointMessage(streamId, 'greeting-end'));
        if (site.gatewayMode === 'clear') setTimeout(() => ws.send(clearAudioMessage(streamId)), 100);
      }
      if (m.event === 'playedStream' && m.name === 'greeting-end') ws.close(1000);
      if (m.event === 'clearedAudio') setTimeout(() => ws.close(1000), 100);
    });
  });
  return site;
}

/** A 440 Hz tone of `ms` at the format's rate. */
function toneAt(format: AudioFormat, ms: number): Int16Array {
  const n = (format.sampleRate * ms) / 1000;
  return Int16Array.from({ length: n }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / format.sampleRate)));
}

let fake: FakePlivo;
let site: StandIn;
let creds: PlivoCredentials;

beforeAll(async () => {
  fake = await startFakePlivo({ authId: AUTH_ID, authToken: AUTH_TOKEN, ringMs: 50 });
  site = await startStandIn();
  creds = { authId: AUTH_ID, authToken: AUTH_TOKEN, apiBaseUrl: fake.apiBaseUrl };
});

afterAll(async () => {
  await fake.stop();
  await site.stop();
});

beforeEach(() => {
  fake.setOutcome('answer');
  site.gatewayMode = 'greet';
  site.contentType = 'audio/x-mulaw;rate=8000';
});

const urls = (id: string) => ({
  answerUrl: `${site.publicBaseUrl}/telephony/plivo/answer/${id}`,
  hangupUrl: `${site.publicBaseUrl}/telephony/plivo/status/${id}`,
  ringUrl: `${site.publicBaseUrl}/telephony/plivo/status/${id}`,
});

async function place(id: string, to = '+14155550123') {
  return createPlivoCall(creds, { to, from: OUR_NUMBER, ...urls(id), ringTimeoutSecs: 30, timeLimitSecs: 600 });
}

describe('Plivo REST through the SDK', () => {
  it('creates a call with Plivo’s parameters and follows it to the end', async () => {
    const ref = await place('out-1');
    expect(ref).toEqual({ sid: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'call fired' });
    const request = fake.requests.find((r) => r.method === 'POST')!;
    expect(request.path).toBe(`/v1/Account/${AUTH_ID}/Call/`);
    expect(request.authorization).toBe(`Basic ${Buffer.from(`${AUTH_ID}:${AUTH_TOKEN}`).toString('base64')}`);
    expect(request.body).toMatchObject({
      from: OUR_NUMBER,
      to: '+14155550123',
      answer_url: urls('out-1').answerUrl,
      answer_method: 'POST',
      hangup_url: urls('out-1').hangupUrl,
      ring_url: urls('out-1').ringUrl,
      ring_timeout: 30,
      time_limit: 600,
    });
    const call = fake.callByRequest(ref.sid)!;
    await call.ended;
    expect(call.errors).toEqual([]);
    expect(site.rejected).toEqual([]);
    // The callbacks carry the call's own UUID, which differs from the request's.
    const updates = site.updates.get('out-1')!;
    expect(updates.map((u) => [u.providerStatus, u.status])).toEqual([
      ['ringing', 'ringing'],
      ['in-progress', 'answered'],
      ['completed', 'completed'],
    ]);
    expect(new Set(updates.map((u) => u.providerCallId))).toEqual(new Set([call.callUuid]));
    expect(call.callUuid).not.toBe(ref.sid);
    expect(updates[2]).toMatchObject({ durationSecs: expect.any(Number), detail: { request_uuid: ref.sid, hangup_cause: 'NORMAL_CLEARING' } });
  });

  it.each([
    ['busy', 'busy', 'USER_BUSY', 'busy'],
    ['no-answer', 'no-answer', 'NO_ANSWER', 'no_answer'],
    ['failed', 'failed', 'UNALLOCATED_NUMBER', 'failed'],
  ] as const)('reports a %s outcome on the hangup URL', async (outcome, providerStatus, cause, status) => {
    fake.setOutcome(outcome);
    const id = `out-${outcome}`;
    const ref = await place(id);
    await fake.callByRequest(ref.sid)!.ended;
    expect(site.updates.get(id)!.at(-1)).toMatchObject({ providerStatus, status, detail: { hangup_cause: cause } });
  });

  it('cancels a ringing call by its request and hangs up a live call by its UUID', async () => {
    fake.setOutcome({ outcome: 'answer', ringMs: 5000 });
    const ringing = await place('out-cancel');
    await hangupPlivoCall(creds, ringing.sid);
    await fake.callByRequest(ringing.sid)!.ended;
    expect(site.updates.get('out-cancel')!.at(-1)).toMatchObject({ providerStatus: 'cancel', status: 'canceled', detail: { hangup_cause: 'ORIGINATOR_CANCEL' } });
    expect(fake.requests.filter((r) => r.method === 'DELETE').map((r) => [r.path, r.status])).toEqual([
      [`/v1/Account/${AUTH_ID}/Call/${ringing.sid}/`, 404],
      [`/v1/Account/${AUTH_ID}/Request/${ringing.sid}/`, 204],
    ]);

    fake.setOutcome('answer');
    site.gatewayMode = 'hold';
    const next = fake.nextCaller();
    const live = await place('out-hangup');
    const caller = await next;
    const call = fake.callByRequest(live.sid)!;
    await hangupPlivoCall(creds, call.callUuid);
    expect((await caller.closed).by).toBe('caller');
    await call.ended;
    expect(call).toMatchObject({ status: 'completed', hangupSource: 'API Request' });
    // Hanging up a call that has ended already is success (404 on both paths).
    await expect(hangupPlivoCall(creds, call.callUuid)).resolves.toBeUndefined();
  });

  it('maps Plivo’s errors to clear provider errors', async () => {
    const bad = await createPlivoCall({ ...creds, authToken: 'wrong' }, { to: '+14155550123', from: OUR_NUMBER, ...urls('x'), ringTimeoutSecs: 30 }).catch((e) => e);
    expect(bad).toBeInstanceOf(TelephonyProviderError);
    expect(bad).toMatchObject({ provider: 'plivo', kind: 'auth', httpStatus: 401 });
    expect(bad.message).toMatch(/Plivo rejected the credentials/);

    const invalid = await place('x', '12').catch((e) => e);
    expect(invalid).toMatchObject({ kind: 'rejected', httpStatus: 400, message: 'invalid destination number 12' });

    const down = await createPlivoCall({ ...creds, apiBaseUrl: 'http://127.0.0.1:1' }, { to: '+14155550123', from: OUR_NUMBER, ...urls('x'), ringTimeoutSecs: 30 }).catch((e) => e);
    expect(down).toMatchObject({ kind: 'unavailable' });
    expect(down.message).toMatch(/^Plivo could not be reached: .*ECONNREFUSED/);

    expect(toProviderError({ status: 503, message: 'maintenance' })).toMatchObject({ kind: 'unavailable', message: 'maintenance' });
    expect(toProviderError({ status: 404, message: 'not found' })).toMatchObject({ kind: 'not_found' });
  });
});

describe('Plivo callbacks and stream', () => {
  it.each(['audio/x-mulaw;rate=8000', 'audio/x-l16;rate=16000'] as const)('streams in %s with the credentials in extra_headers', async (contentType) => {
    site.contentType = contentType;
    const next = fake.nextCaller();
    const ref = await place(`out-${contentType.replace(/\W/g, '')}`);
    const caller = await next;
    const call = fake.callByRequest(ref.sid)!;
    await call.ended;
    const stream = site.streams.at(-1)!;
    expect(stream.parseErrors).toEqual([]);
    const start = stream.messages[0];
    expect(start.event).toBe('start');
    if (start.event !== 'start') return;
    expect(formatOfMediaFormat(start.start.mediaFormat)).toEqual(contentType.includes('mulaw') ? MULAW_8K : PCM16_16K);
    expect(plivoStreamCredentials(start.extraHeaders)).toEqual({ callId: CALL_ID, token: 'dG9rZW4' });
    expect(stream.messages.filter((m) => m.event === 'media').length).toBeGreaterThan(10);
    // The greeting played in real time, and the checkpoint was answered once it had.
    expect(caller.protocolErrors).toEqual([]);
    expect(caller.speechFrames().length).toBe(20);
    const played = caller.played.at(-1)!.playedAtMs;
    expect(caller.marksEchoed).toEqual([{ name: 'greeting-end', atMs: expect.any(Number), cleared: false }]);
    expect(caller.marksEchoed[0].atMs).toBeGreaterThanOrEqual(played);
    // At most one 20 ms frame plays per 20 ms slot: 20 frames take 380 ms after the first arrived.
    expect(played - caller.played[0].receivedAtMs).toBeGreaterThanOrEqual(360);
    expect(call).toMatchObject({ status: 'completed', stream: { bidirectional: true, keepCallAlive: true, contentType } });
  });

  it('clearAudio drops the buffer and the pending checkpoint, and is confirmed', async () => {
    site.gatewayMode = 'clear';
    const next = fake.nextCaller();
    const ref = await place('out-clear');
    const caller = await next;
    await fake.callByRequest(ref.sid)!.ended;
    expect(caller.clears).toHaveLength(1);
    expect(caller.clears[0].droppedBytes).toBeGreaterThan(0);
    // The checkpoint behind the cleared audio is never answered.
    expect(caller.marksEchoed).toEqual([]);
    expect(site.streams.at(-1)!.messages.some((m) => m.event === 'clearedAudio')).toBe(true);
    expect(caller.played.length).toBeLessThan(20);
  });

  it('refuses forged and unsigned callbacks, and follows reject / speak answers', async () => {
    const answerUrl = `${site.publicBaseUrl}/telephony/plivo/inbound/forged`;
    const forged = await fake.simulateInbound({ answerUrl, from: '+919876543210', to: OUR_NUMBER, authToken: 'not-the-token' });
    const unsigned = await fake.simulateInbound({ answerUrl, from: '+919876543210', to: OUR_NUMBER, unsigned: true });
    await Promise.all([forged.ended, unsigned.ended]);
    expect(forged.callbacks[0].status).toBe(403);
    expect(unsigned.callbacks[0].status).toBe(403);
    expect(site.rejected).toEqual([
      '/telephony/plivo/inbound/forged',
      '/telephony/plivo/inbound/forged',
    ]);

    site.inbound = 'reject';
    const rejected = await fake.simulateInbound({ answerUrl: `${site.publicBaseUrl}/telephony/plivo/inbound/r`, from: '+919876543210', to: OUR_NUMBER });
    await rejected.ended;
    expect(rejected).toMatchObject({ hangupCause: 'CALL_REJECTED', errors: [] });
    expect(rejected.answeredAtMs).toBeUndefined();

    site.inbound = 'busy';
    const busy = await fake.simulateInbound({ answerUrl: `${site.publicBaseUrl}/telephony/plivo/inbound/b`, from: '+919876543210', to: OUR_NUMBER });
    await busy.ended;
    expect(busy.said).toEqual(['All our agents are busy. Goodbye.']);
    site.inbound = 'stream';
  });
});
