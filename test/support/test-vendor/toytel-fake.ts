/**
 * Toytel's side of the wire (protocol: ./toytel-wire.ts): its REST API, the signed webhooks it
 * sends, and a phone caller on its media stream (the suite's vendor-neutral PhoneCaller with
 * Toytel's wire).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PCM16_8K } from '../../../src/audio/format';
import { PhoneCaller, type CallerWire, type WireAction } from '../../fakes/phone-caller';
import { toytelSignature, SIGNATURE_HEADER } from './toytel-wire';

const E164 = /^\+[1-9]\d{6,14}$/;

class ToytelWire implements CallerWire {
  readonly format = PCM16_8K;
  readonly frameMs = 20;
  readonly echoMarksOnClear = false;
  readonly streamId = `st-${crypto.randomBytes(6).toString('hex')}`;

  constructor(
    private readonly providerCallId: string,
    private readonly params: Record<string, string>,
  ) {}

  headers = () => ({});
  opening = () => [{ type: 'start', stream_id: this.streamId, call_id: this.providerCallId, params: this.params }];
  media = (audio: Buffer) => ({ type: 'audio', pcm: audio.toString('base64') });
  dtmf = (digit: string) => ({ type: 'dtmf', digit });
  stop = () => ({ type: 'stop' });
  markPlayed = (name: string) => ({ type: 'played', name });
  cleared = () => null;

  read(message: any): WireAction {
    switch (message?.type) {
      case 'audio':
        return typeof message.pcm === 'string' ? { kind: 'media', audio: Buffer.from(message.pcm, 'base64') } : { kind: 'error', error: 'audio without pcm' };
      case 'mark':
        return typeof message.name === 'string' ? { kind: 'mark', name: message.name } : { kind: 'error', error: 'mark without name' };
      case 'clear':
        return { kind: 'clear' };
      default:
        return { kind: 'error', error: `unknown type ${JSON.stringify(message?.type)}` };
    }
  }
}

export interface ToytelCall {
  id: string;
  to: string;
  from: string;
  status: string;
  caller?: PhoneCaller;
  /** The document the platform answered (inbound webhook or the answer URL). */
  answer?: { status: number; body: any };
  statusUrl?: string;
  /** Why the vendor could not go on with the call (the platform unreachable…). */
  error?: string;
}

export interface FakeToytel {
  apiBaseUrl: string;
  calls: Map<string, ToytelCall>;
  /** An incoming call: the signed webhook, then (when the answer is a stream) the caller on it. */
  simulateInbound(opts: { webhookUrl: string; from: string; to: string }): Promise<ToytelCall>;
  /** The next call placed through the REST API, once its stream is up (or it was refused). */
  nextDialed(timeoutMs?: number): Promise<ToytelCall>;
  /** Reports a status of a call to its status URL, signed. */
  reportStatus(call: ToytelCall, status: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startFakeToytel(account: { accountId: string; apiSecret: string }): Promise<FakeToytel> {
  const calls = new Map<string, ToytelCall>();
  const dialed: ToytelCall[] = [];
  const waiting: Array<(call: ToytelCall) => void> = [];

  async function signedPost(url: string, body: object): Promise<{ status: number; body: any }> {
    const text = JSON.stringify(body);
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: toytelSignature(account.apiSecret, url, text) }, body: text });
    const raw = await res.text();
    return { status: res.status, body: raw && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(raw) : raw };
  }

  /** Acts on the platform's document: a stream answer connects the caller. */
  async function follow(call: ToytelCall, answer: { status: number; body: any }): Promise<void> {
    call.answer = answer;
    if (answer.status !== 200 || answer.body?.action !== 'stream') return;
    call.status = 'answered';
    call.caller = new PhoneCaller(answer.body.url, new ToytelWire(call.id, answer.body.params));
    await call.caller.open();
  }

  async function placeCall(call: ToytelCall, answerUrl: string): Promise<void> {
    try {
      await reportStatus(call, 'ringing');
      await follow(call, await signedPost(answerUrl, { call_id: call.id }));
      if (call.caller) await reportStatus(call, 'answered');
    } catch (err) {
      call.status = 'failed';
      call.error = (err as Error).message;
    } finally {
      dialed.push(call);
      while (waiting.length && dialed.length) waiting.shift()!(dialed.shift()!);
    }
  }

  async function reportStatus(call: ToytelCall, status: string): Promise<number> {
    if (!call.statusUrl) return 0;
    return (await signedPost(call.statusUrl, { call_id: call.id, status })).status;
  }

  const expectedAuth = `Basic ${Buffer.from(`${account.accountId}:${account.apiSecret}`).toString('base64')}`;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const send = (status: number, body?: object) => void res.writeHead(status, body ? { 'content-type': 'application/json' } : {}).end(body ? JSON.stringify(body) : undefined);
    const prefix = `/v1/accounts/${account.accountId}/calls`;
    if (req.headers.authorization !== expectedAuth || !req.url?.startsWith(prefix)) return send(401, { error: 'authentication failed' });
    if (req.method === 'POST' && req.url === prefix) {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const field of ['to', 'from']) if (!E164.test(body[field] ?? '')) return send(422, { error: `${field}: "${body[field]}" is not a phone number` });
      const call: ToytelCall = { id: `tt-${crypto.randomBytes(8).toString('hex')}`, to: body.to, from: body.from, status: 'queued', statusUrl: body.status_url };
      calls.set(call.id, call);
      send(201, { id: call.id, status: call.status });
      void placeCall(call, body.answer_url);
      return;
    }
    const id = decodeURIComponent(req.url.slice(prefix.length + 1));
    const call = calls.get(id);
    if (req.method === 'DELETE' && call) {
      if (call.status === 'completed') return send(404, { error: 'the call is over' });
      call.status = 'completed';
      send(204);
      if (call.caller?.isOpen) await call.caller.hangup();
      await reportStatus(call, 'completed');
      return;
    }
    send(404, { error: 'no such call' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    apiBaseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    async simulateInbound({ webhookUrl, from, to }) {
      const call: ToytelCall = { id: `tt-${crypto.randomBytes(8).toString('hex')}`, to, from, status: 'ringing' };
      calls.set(call.id, call);
      await follow(call, await signedPost(webhookUrl, { call_id: call.id, from, to }));
      return call;
    },
    nextDialed: (timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        if (dialed.length) return resolve(dialed.shift()!);
        const timer = setTimeout(() => reject(new Error('no call was dialed')), timeoutMs);
        waiting.push((call) => {
          clearTimeout(timer);
          resolve(call);
        });
      }),
    reportStatus,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
