/**
 * The Exotel adapter (src/providers/telephony/exotel: the code that runs in production) against
 * the local fake Exotel: the REST requests it sends, how Exotel's answers and errors come back
 * (credentials, refusals, an unreachable Exotel), and hang-ups of live, ringing and ended calls.
 */
import { exotelVendor } from '../../src/providers/telephony/exotel/server';
import type { ExotelCredentials } from '../../src/providers/telephony/exotel/client';
import { TelephonyProviderError, type DialRequest } from '../../src/providers/telephony/types';
import { startFakeExotel, type FakeExotel } from '../fakes/exotel-server';
import { eventually } from '../support/fixtures';

const ACCOUNT = { accountSid: 'exoteladapter1', apiKey: 'adapter-key', apiToken: 'adapter-token-0123456789' };
let exotel: FakeExotel;
let creds: ExotelCredentials;

beforeAll(async () => {
  exotel = await startFakeExotel({ ...ACCOUNT, ringMs: 30_000 });
  creds = { ...ACCOUNT, apiBaseUrl: exotel.apiBaseUrl, sampleRate: 8000 };
});
afterAll(() => exotel?.stop());

const callId = '6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab';
const dialRequest = (to = '+919876543210'): DialRequest => ({
  callId,
  to,
  from: '+918047491899',
  answerUrl: `https://voice.example.com/telephony/exotel/answer/${callId}`,
  statusUrl: `https://voice.example.com/telephony/exotel/status/${callId}`,
  stream: { streamUrl: 'ws://127.0.0.1:9/media/exotel', callId, token: 'tok_en-123' },
  ringTimeoutSecs: 30,
  timeLimitSecs: 600,
});

async function rejection(p: Promise<unknown>): Promise<TelephonyProviderError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TelephonyProviderError);
    return err as TelephonyProviderError;
  }
  throw new Error('expected a rejection');
}

describe('Exotel adapter against the fake Exotel', () => {
  it('places a call with the AgentStream parameters and Basic auth, and returns Exotel’s sid', async () => {
    const result = await exotelVendor.dial(creds, dialRequest());
    expect(result).toEqual({ providerCallId: expect.stringMatching(/^[0-9a-f]{32}$/), response: { sid: result.providerCallId, status: 'queued' } });
    const sent = exotel.requests.find((r) => r.path.endsWith('/Calls/connect.json'))!;
    expect(sent.path).toBe(`/v1/Accounts/${ACCOUNT.accountSid}/Calls/connect.json`);
    expect(sent.params).toEqual({
      from: '+919876543210',
      callerid: '+918047491899',
      streamurl: `ws://127.0.0.1:9/media/exotel?call_id=${callId}&token=tok_en-123&sample-rate=8000`,
      streamtype: 'bidirectional',
      statuscallback: `https://voice.example.com/telephony/exotel/status/${callId}`,
      customfield: callId,
      'statuscallbackevents[]': ['answered', 'terminal'],
      timelimit: '600',
    });
  });

  it('hangs up a ringing call (Exotel cancels it) and treats an ended or unknown call as hung up', async () => {
    const { providerCallId } = await exotelVendor.dial(creds, dialRequest('+919876500001'));
    await exotelVendor.hangup(creds, providerCallId);
    const call = await exotel.call(providerCallId)!.ended;
    expect(call).toMatchObject({ status: 'canceled', endedBy: 'api' });
    await expect(exotelVendor.hangup(creds, providerCallId)).resolves.toBeUndefined();
    await expect(exotelVendor.hangup(creds, 'ffffffffffffffffffffffffffffffff')).resolves.toBeUndefined();
    const last = exotel.requests[exotel.requests.length - 1]!;
    expect(last).toMatchObject({ method: 'POST', path: `/v1/Accounts/${ACCOUNT.accountSid}/Calls/ffffffffffffffffffffffffffffffff.json`, params: { Status: 'completed' }, status: 404 });
  });

  it('says the credentials are wrong (auth), Exotel refused the call (rejected), or Exotel is unreachable (unavailable)', async () => {
    const auth = await rejection(exotelVendor.dial({ ...creds, apiToken: 'wrong' }, dialRequest()));
    expect(auth).toMatchObject({ provider: 'exotel', kind: 'auth', httpStatus: 401 });
    expect(auth.message).toMatch(/^Exotel rejected the credentials: the API key or API token is incorrect/);
    const refused = await rejection(exotelVendor.dial(creds, dialRequest('12345')));
    expect(refused).toMatchObject({ kind: 'rejected', httpStatus: 400, code: 13224 });
    expect(refused.message).toMatch(/Invalid 'from' number/);
    const offline = await rejection(exotelVendor.dial({ ...creds, apiBaseUrl: 'http://127.0.0.1:9' }, dialRequest()));
    expect(offline).toMatchObject({ kind: 'unavailable' });
    expect(offline.message).toMatch(/^Exotel could not be reached/);
    const hangupOffline = await rejection(exotelVendor.hangup({ ...creds, apiBaseUrl: 'http://127.0.0.1:9' }, 'abc'));
    expect(hangupOffline.kind).toBe('unavailable');
  });

  it('reports the outcome through the status callback URL it was given', async () => {
    exotel.setOutcome({ outcome: 'busy', ringMs: 10 }, '+919876500002');
    const received: Array<Record<string, string>> = [];
    const http = await import('node:http');
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push(Object.fromEntries(new URLSearchParams(body)));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      const { providerCallId } = await exotelVendor.dial(creds, { ...dialRequest('+919876500002'), statusUrl: `http://127.0.0.1:${port}/status` });
      await exotel.call(providerCallId)!.ended;
      await eventually(async () => received.length > 0, 5000);
      const update = exotelVendor.webhooks.statusUpdate({ method: 'POST', originalUrl: '/status', headers: {}, body: received[0]!, query: {} });
      expect(update).toMatchObject({ providerCallId, providerStatus: 'busy', status: 'busy', detail: { exotel_event: 'terminal' } });
    } finally {
      server.close();
    }
  });
});
