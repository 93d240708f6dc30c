/**
 * The Twilio adapter (official SDK, signature checks, TwiML, status mapping, Media Streams parser)
 * against the fake Twilio, over real sockets. A small stand-in for the platform
 * (test/support/twilio-stand-in.ts) uses the adapter modules the way the API and the media gateway
 * do.
 */
import http from 'node:http';
import { createTwilioCall, hangupTwilioCall, type TwilioCredentials } from '../../src/providers/telephony/twilio/client';
import { twilioVendor } from '../../src/providers/telephony/twilio/server';
import { computeTwilioSignature, validateTwilioSignature, validateTwilioWebSocketUpgrade } from '../../src/providers/telephony/twilio/signature';
import { connectStreamTwiml } from '../../src/providers/telephony/twilio/twiml';
import { TelephonyProviderError } from '../../src/providers/telephony/types';
import { publicRequestUrl } from '../../src/providers/telephony/public-url';
import { connectTwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { listen, startStandIn, type StandIn } from '../support/twilio-stand-in';

const ACCOUNT_SID = `AC${'a1'.repeat(16)}`;
const AUTH_TOKEN = 'fake-auth-token-0123456789abcdef';
const OUR_NUMBER = '+15005550006';

let fake: FakeTwilio;
let site: StandIn;
let creds: TwilioCredentials;

beforeAll(async () => {
  fake = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, ringMs: 50 });
  site = await startStandIn(AUTH_TOKEN);
  creds = { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: fake.apiBaseUrl };
});

afterAll(async () => {
  await fake.stop();
  await site.stop();
});

beforeEach(() => {
  site.gatewayMode = 'greet';
  site.inboundAnswer = 'stream';
  fake.setOutcome('answer');
});

function outboundRequest(callId: string, to = '+15558675310') {
  return {
    to,
    from: OUR_NUMBER,
    twimlUrl: `${site.publicBaseUrl}/telephony/twilio/twiml/${callId}`,
    statusCallbackUrl: `${site.publicBaseUrl}/telephony/twilio/status/${callId}`,
    timeoutSecs: 30,
    timeLimitSecs: 600,
  };
}

async function providerError(promise: Promise<unknown>): Promise<TelephonyProviderError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(TelephonyProviderError);
    return err as TelephonyProviderError;
  }
  throw new Error('expected the provider call to fail');
}

describe('createTwilioCall through the SDK', () => {
  it('creates the call: 201 with a CA sid and status queued; the fake received the form fields and Basic auth', async () => {
    const before = fake.requests.length;
    const ref = await createTwilioCall(creds, outboundRequest('c-create'));
    expect(ref.sid).toMatch(/^CA[0-9a-f]{32}$/);
    expect(ref.status).toBe('queued');

    const req = fake.requests[before];
    expect(req).toMatchObject({ method: 'POST', path: `/2010-04-01/Accounts/${ACCOUNT_SID}/Calls.json`, status: 201 });
    expect(req.authorization).toBe(`Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`);
    expect(req.params).toEqual({
      To: '+15558675310',
      From: OUR_NUMBER,
      Url: `${site.publicBaseUrl}/telephony/twilio/twiml/c-create`,
      Method: 'POST',
      StatusCallback: `${site.publicBaseUrl}/telephony/twilio/status/c-create`,
      StatusCallbackMethod: 'POST',
      StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
      Timeout: '30',
      TimeLimit: '600',
    });
    await fake.call(ref.sid)!.ended;
  });

  it('reports wrong credentials as a typed auth error carrying Twilio code 20003', async () => {
    const err = await providerError(createTwilioCall({ ...creds, authToken: 'wrong-token' }, outboundRequest('c-auth')));
    expect(err).toMatchObject({ provider: 'twilio', kind: 'auth', code: 20003, httpStatus: 401 });
    expect(err.message).toMatch(/Account SID or Auth Token is incorrect/);
  });

  it("reports an invalid 'To' number with Twilio's message and code 21211", async () => {
    const err = await providerError(createTwilioCall(creds, outboundRequest('c-bad', '12345')));
    expect(err).toMatchObject({ kind: 'rejected', code: 21211, httpStatus: 400, message: "Invalid 'To' Phone Number: 12345" });
    expect(err.moreInfo).toBe('https://www.twilio.com/docs/errors/21211');
  });

  it('reports an unreachable API as unavailable', async () => {
    const closed = http.createServer();
    const port = await listen(closed);
    await new Promise((r) => closed.close(r));
    const err = await providerError(createTwilioCall({ ...creds, apiBaseUrl: `http://127.0.0.1:${port}` }, outboundRequest('c-down')));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toMatch(/could not be reached/);
  });
});

describe('an outbound call end to end', () => {
  it('rings, answers, streams with the TwiML parameters, plays the greeting, and completes with a duration', async () => {
    const caller = fake.nextCaller();
    const ref = await createTwilioCall(creds, outboundRequest('c-flow'));
    const heard = await caller;
    const call = await fake.call(ref.sid)!.ended;

    // Every webhook was signed the way our validator accepts: none rejected, all 2xx.
    expect(site.rejectedWebhooks).toEqual([]);
    expect(call.errors).toEqual([]);
    expect(call.callbacks.map((c) => [c.kind, c.status])).toEqual([
      ['status', 204],
      ['status', 204],
      ['status', 204],
      ['twiml', 200],
      ['status', 204],
    ]);
    const twimlFetch = call.callbacks.find((c) => c.kind === 'twiml')!;
    expect(twimlFetch.params).toMatchObject({ CallSid: ref.sid, AccountSid: ACCOUNT_SID, From: OUR_NUMBER, To: '+15558675310', CallStatus: 'in-progress', Direction: 'outbound-api' });

    const updates = site.statusUpdates.get('c-flow')!;
    expect(updates.map((u) => [u.providerStatus, u.transition])).toEqual([
      ['initiated', 'ringing'],
      ['ringing', 'ringing'],
      ['in-progress', 'in_progress'],
      ['completed', 'completed'],
    ]);
    expect(updates.map((u) => u.sequenceNumber)).toEqual([0, 1, 2, 3]);
    expect(updates[3].durationSecs).toBe(call.durationSecs);
    expect(updates.every((u) => u.providerCallId === ref.sid)).toBe(true);

    // The stream: the gateway parsed connected + start with the <Parameter>s, then media frames.
    const stream = site.streams.find((s) => s.messages.some((m) => m.event === 'start' && m.start.callSid === ref.sid))!;
    expect(stream.parseErrors).toEqual([]);
    expect(stream.messages[0]).toEqual({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    const start = stream.messages[1];
    expect(start.event === 'start' && start.start).toMatchObject({
      accountSid: ACCOUNT_SID,
      callSid: ref.sid,
      tracks: ['inbound'],
      customParameters: { call_id: 'c-flow', stream_token: 'tok-c-flow' },
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    });
    expect(stream.messages.some((m) => m.event === 'media')).toBe(true);

    // The caller heard the greeting as sound, and its mark came back after it played.
    expect(heard.speechFrames().length).toBeGreaterThanOrEqual(9);
    expect(heard.marksEchoed).toMatchObject([{ name: 'greeting-end', cleared: false }]);
    expect((await heard.closed).by).toBe('gateway');
    expect(call.status).toBe('completed');
    expect(call.stream?.parameters).toEqual({ call_id: 'c-flow', stream_token: 'tok-c-flow' });
  });

  it.each([
    ['busy', 'no_answer'],
    ['no-answer', 'no_answer'],
    ['failed', 'failed'],
  ] as const)('maps the %s outcome to %s without fetching TwiML', async (outcome, transition) => {
    fake.setOutcome(outcome, '+15558670001');
    const ref = await createTwilioCall(creds, outboundRequest(`c-${outcome}`, '+15558670001'));
    const call = await fake.call(ref.sid)!.ended;
    expect(call.status).toBe(outcome);
    expect(call.callbacks.some((c) => c.kind === 'twiml')).toBe(false);
    const last = site.statusUpdates.get(`c-${outcome}`)!.at(-1)!;
    expect(last).toMatchObject({ providerStatus: outcome, transition, durationSecs: 0 });
  });

  it('hangs up a live call through the SDK (Status=completed): the caller gets stop + close, the call completes', async () => {
    site.gatewayMode = 'hold';
    const caller = fake.nextCaller();
    const ref = await createTwilioCall(creds, outboundRequest('c-hangup'));
    const heard = await caller;
    const result = await hangupTwilioCall(creds, ref.sid);
    expect(result.sid).toBe(ref.sid);
    expect((await heard.closed).by).toBe('caller');
    const call = await fake.call(ref.sid)!.ended;
    expect(call.status).toBe('completed');
    const stream = site.streams.find((s) => s.messages.some((m) => m.event === 'start' && m.start.callSid === ref.sid))!;
    await new Promise((r) => setTimeout(r, 50));
    expect(stream.messages.at(-1)).toMatchObject({ event: 'stop', stop: { callSid: ref.sid, accountSid: ACCOUNT_SID } });
    expect(site.statusUpdates.get('c-hangup')!.at(-1)).toMatchObject({ providerStatus: 'completed', transition: 'completed' });

    // Hanging up a call that has already ended is not an error.
    await expect(hangupTwilioCall(creds, ref.sid)).resolves.toEqual({ sid: ref.sid, status: 'completed' });
  });

  it('cancels a call that is still ringing (through the provider-neutral vendor): it ends canceled → no_answer', async () => {
    fake.setOutcome({ outcome: 'answer', ringMs: 5000 }, '+15558670002');
    const { twimlUrl, statusCallbackUrl, to, from, timeoutSecs } = outboundRequest('c-cancel', '+15558670002');
    const stream = { streamUrl: `${site.gatewayUrl}/media/twilio`, callId: 'c-cancel', token: 'tok' };
    const dialed = await twilioVendor.dial(creds, { callId: 'c-cancel', to, from, answerUrl: twimlUrl!, statusUrl: statusCallbackUrl, stream, ringTimeoutSecs: timeoutSecs });
    const ref = dialed.response;
    expect(ref.status).toBe('queued');
    expect(dialed.providerCallId).toBe(ref.sid);
    await new Promise((r) => setTimeout(r, 100));
    await twilioVendor.hangup(creds, ref.sid);
    const call = await fake.call(ref.sid)!.ended;
    expect(call.status).toBe('canceled');
    expect(site.statusUpdates.get('c-cancel')!.at(-1)).toMatchObject({ providerStatus: 'canceled', transition: 'no_answer' });
  });

  it('runs inline TwiML (Twiml instead of Url) without fetching anything', async () => {
    const { twimlUrl: _unused, ...rest } = outboundRequest('c-inline');
    const twiml = connectStreamTwiml({ streamUrl: `${site.gatewayUrl}/media/twilio/c-inline`, parameters: { call_id: 'c-inline' } });
    const ref = await createTwilioCall(creds, { ...rest, twiml });
    const call = await fake.call(ref.sid)!.ended;
    expect(fake.requests.find((r) => r.params.Twiml === twiml)).toBeDefined();
    expect(call.callbacks.some((c) => c.kind === 'twiml')).toBe(false);
    expect(call.stream?.parameters).toEqual({ call_id: 'c-inline' });
    expect(call.status).toBe('completed');
  });

  it('reports hanging up an unknown call as not_found', async () => {
    const err = await providerError(hangupTwilioCall(creds, `CA${'0'.repeat(32)}`));
    expect(err).toMatchObject({ kind: 'not_found', code: 20404, httpStatus: 404 });
  });
});

describe('inbound calls', () => {
  it('posts the signed voice webhook, follows the <Connect><Stream> TwiML and completes when the gateway closes', async () => {
    const call = await fake.simulateInbound({
      webhookUrl: `${site.publicBaseUrl}/telephony/twilio/inbound/support`,
      from: '+15558671111',
      to: OUR_NUMBER,
    });
    expect(site.rejectedWebhooks).toEqual([]);
    const webhook = call.callbacks[0];
    expect(webhook).toMatchObject({ kind: 'inbound', status: 200 });
    expect(webhook.params).toMatchObject({ CallSid: call.sid, From: '+15558671111', To: OUR_NUMBER, CallStatus: 'ringing', Direction: 'inbound' });
    expect(call.caller).toBeDefined();
    expect(call.stream?.parameters.call_id).toBe(`inbound-support-${call.sid}`);
    await call.ended;
    expect(call.status).toBe('completed');
    expect(call.caller!.speechFrames().length).toBeGreaterThan(0);
  });

  it('rejects with <Reject reason="busy">: never answered, status busy, no stream', async () => {
    site.inboundAnswer = 'busy';
    const call = await fake.simulateInbound({ webhookUrl: `${site.publicBaseUrl}/telephony/twilio/inbound/support`, from: '+15558671112', to: OUR_NUMBER });
    await call.ended;
    expect(call.status).toBe('busy');
    expect(call.answeredAtMs).toBeUndefined();
    expect(call.caller).toBeUndefined();
  });

  it('answers, says the message and hangs up with sayAndHangupTwiml', async () => {
    site.inboundAnswer = 'say';
    const call = await fake.simulateInbound({ webhookUrl: `${site.publicBaseUrl}/telephony/twilio/inbound/support`, from: '+15558671113', to: OUR_NUMBER });
    await call.ended;
    expect(call.said).toEqual(['All our agents are busy. Goodbye.']);
    expect(call.status).toBe('completed');
  });

  it('is refused by the signature check when signed with another token, and Twilio records the failure', async () => {
    const call = await fake.simulateInbound({
      webhookUrl: `${site.publicBaseUrl}/telephony/twilio/inbound/support`,
      from: '+15558671114',
      to: OUR_NUMBER,
      authToken: 'someone-elses-token',
    });
    await call.ended;
    expect(call.callbacks[0].status).toBe(403);
    expect(site.rejectedWebhooks).toContain('/telephony/twilio/inbound/support');
    expect(call.caller).toBeUndefined();
    expect(call.errors[0]).toMatch(/^11200/);
  });
});

describe('signature validation', () => {
  it("accepts the fake's signed callbacks and rejects a tampered parameter, a wrong token or a missing header", async () => {
    const ref = await createTwilioCall(creds, outboundRequest('c-sig'));
    const call = await fake.call(ref.sid)!.ended;
    const delivered = call.callbacks.find((c) => c.kind === 'status' && c.params.CallStatus === 'completed')!;
    expect(validateTwilioSignature(AUTH_TOKEN, delivered.signature, delivered.url, delivered.params)).toBe(true);
    expect(validateTwilioSignature(AUTH_TOKEN, delivered.signature, delivered.url, { ...delivered.params, CallDuration: '999' })).toBe(false);
    expect(validateTwilioSignature('another-token', delivered.signature, delivered.url, delivered.params)).toBe(false);
    expect(validateTwilioSignature(AUTH_TOKEN, undefined, delivered.url, delivered.params)).toBe(false);
    expect(validateTwilioSignature(AUTH_TOKEN, delivered.signature, 'not a url', delivered.params)).toBe(false);
  });

  it('treats https URLs with and without :443 alike, and wss upgrade URLs likewise', () => {
    const params = { CallSid: 'CA1', From: '+15550001111' };
    const sig = computeTwilioSignature(AUTH_TOKEN, 'https://voice.example.com/telephony/twilio/status/1', params);
    expect(validateTwilioSignature(AUTH_TOKEN, sig, 'https://voice.example.com:443/telephony/twilio/status/1', params)).toBe(true);
    const wsSig = computeTwilioSignature(AUTH_TOKEN, 'wss://gw.example.com/media/twilio/abc', {});
    expect(validateTwilioWebSocketUpgrade(AUTH_TOKEN, { 'x-twilio-signature': wsSig }, 'wss://gw.example.com/media/twilio/abc')).toBe(true);
    expect(validateTwilioWebSocketUpgrade(AUTH_TOKEN, { 'x-twilio-signature': wsSig }, 'wss://gw.example.com:443/media/twilio/abc')).toBe(true);
    expect(validateTwilioWebSocketUpgrade(AUTH_TOKEN, { 'x-twilio-signature': wsSig }, 'wss://gw.example.com/media/twilio/other')).toBe(false);
  });

  it('rebuilds the URL Twilio called from the public base URL, not from the proxied request', () => {
    expect(publicRequestUrl('https://voice.example.com', '/telephony/twilio/status/1?x=1')).toBe('https://voice.example.com/telephony/twilio/status/1?x=1');
    expect(publicRequestUrl('https://voice.example.com/', '/telephony/twilio/status/1')).toBe('https://voice.example.com/telephony/twilio/status/1');
    // Behind a proxy that strips a path prefix, and one that keeps it.
    expect(publicRequestUrl('https://example.com/voice', '/telephony/x')).toBe('https://example.com/voice/telephony/x');
    expect(publicRequestUrl('https://example.com/voice/', '/voice/telephony/x')).toBe('https://example.com/voice/telephony/x');
  });

  it('makes the gateway refuse a stream upgrade signed with the wrong token (HTTP 403)', async () => {
    await expect(
      connectTwilioCaller({ url: `${site.gatewayUrl}/media/twilio/x`, authToken: 'wrong-token' }),
    ).rejects.toThrow(/HTTP 403/);
    await expect(connectTwilioCaller({ url: `${site.gatewayUrl}/media/twilio/x` })).rejects.toThrow(/HTTP 403/);
  });
});
