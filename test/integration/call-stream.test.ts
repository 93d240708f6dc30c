/**
 * GET /api/calls/{id}/events/stream over a real socket: a text test call running in the real
 * workflow streams its events as they are recorded, and the stream ends with the call.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { createAgent } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';

let h: Harness;
let llm: FakeOpenAI;

beforeAll(async () => {
  llm = await startFakeOpenAI();
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url }, worker: true });
  await createAgent(h.db, h.box, { name: 'streamed', greeting: 'Hello {{first_name}}.' });
});
afterAll(async () => {
  await h?.stop();
  await llm?.stop();
});

/** Opens the stream and reads its SSE messages as they arrive. */
async function openStream(callId: string, init: { query?: string; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${h.api.url}/api/calls/${callId}/events/stream${init.query ?? ''}`, {
    headers: { authorization: `Bearer ${await h.adminToken()}`, ...init.headers },
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const received: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => received.push(message) });
  let closed = false;
  const pump = (async () => {
    for (let next = await reader.read(); !next.done; next = await reader.read()) parser.feed(next.value);
    closed = true;
  })();
  const waitFor = async (predicate: (m: EventSourceMessage) => boolean, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!received.some(predicate)) {
      if (Date.now() > deadline) throw new Error(`not streamed within ${timeoutMs} ms; got ${received.map((m) => m.data).join(' | ')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return received.find(predicate)!;
  };
  const events = () => received.filter((m) => m.event === undefined).map((m) => ({ sseId: m.id, ...JSON.parse(m.data) }));
  return { received, events, waitFor, isClosed: () => closed, finished: pump, cancel: () => reader.cancel() };
}

const ofType = (type: string, text?: string) => (m: EventSourceMessage) =>
  m.event === undefined && JSON.parse(m.data).event_type === type && (text === undefined || JSON.parse(m.data).data.text === text);

describe('GET /api/calls/{call_id}/events/stream', () => {
  it('streams a running call turn by turn and ends with it', async () => {
    const started = await h.request('POST', '/api/calls/test', { body: { agent_name: 'streamed', custom_parameters: { first_name: 'Asha' } } });
    expect(started.status).toBe(201);
    const callId = started.body.call_id as string;
    const stream = await openStream(callId);

    // What happened before the stream was opened comes first.
    await stream.waitFor(ofType('agent_spoke', 'Hello Asha.'));
    expect(stream.isClosed()).toBe(false);

    // A turn taken while the stream is open arrives on it.
    llm.enqueue({ content: 'We open at nine.' });
    const turn = await h.request('POST', `/api/calls/${callId}/test/messages`, { body: { text: 'When do you open?' } });
    expect(turn.status).toBe(200);
    await stream.waitFor(ofType('user_spoke', 'When do you open?'));
    await stream.waitFor(ofType('agent_spoke', 'We open at nine.'));

    const ended = await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
    expect(ended.status).toBe(200);
    const end = await stream.waitFor((m) => m.event === 'end');
    expect(JSON.parse(end.data)).toEqual({ status: 'completed', end_reason: 'user_ended' });
    await stream.finished;
    expect(stream.isClosed()).toBe(true);

    // Exactly the recorded trace, in order, each message's SSE id being the event id.
    const streamed = stream.events();
    const recorded = (await h.request('GET', `/api/calls/${callId}/events`)).body as Array<{ id: number }>;
    expect(streamed.map((e) => e.id)).toEqual(recorded.map((e) => e.id));
    expect(streamed.every((e) => e.sseId === String(e.id))).toBe(true);
    expect(streamed[streamed.length - 1].event_type).toBe('call_ended');
    expect(stream.received[stream.received.length - 1]!.event).toBe('end');
  });

  it('replays a finished call from `after` or Last-Event-ID and closes at once', async () => {
    const started = await h.request('POST', '/api/calls/test', { body: { agent_name: 'streamed' } });
    const callId = started.body.call_id as string;
    await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
    const recorded = (await h.request('GET', `/api/calls/${callId}/events`)).body as Array<{ id: number }>;
    expect(recorded.length).toBeGreaterThan(2);

    const whole = await openStream(callId);
    await whole.finished;
    expect(whole.events().map((e) => e.id)).toEqual(recorded.map((e) => e.id));

    const after = await openStream(callId, { query: '?after=2' });
    await after.finished;
    expect(after.events().map((e) => e.id)).toEqual(recorded.filter((e) => e.id > 2).map((e) => e.id));

    const resumed = await openStream(callId, { headers: { 'last-event-id': String(recorded.length - 1) } });
    await resumed.finished;
    expect(resumed.events().map((e) => e.id)).toEqual([recorded.length]);
  });

  it('is authenticated and answers errors as JSON before streaming', async () => {
    const anonymous = await h.request('GET', '/api/calls/00000000-0000-4000-8000-000000000000/events/stream', { token: null });
    expect(anonymous.status).toBe(401);
    const unknown = await h.request('GET', '/api/calls/00000000-0000-4000-8000-000000000000/events/stream');
    expect(unknown).toMatchObject({ status: 404, body: { detail: 'Call not found' } });
    const badQuery = await h.request('GET', '/api/calls/00000000-0000-4000-8000-000000000000/events/stream?after=-1');
    expect(badQuery.status).toBe(422);
    expect(badQuery.body.detail).toMatch(/^query\.after/);
  });

  it('is in the OpenAPI document as an event stream', async () => {
    const doc = (await h.request('GET', '/api/openapi.json', { token: null })).body;
    const op = doc.paths['/api/calls/{call_id}/events/stream'].get;
    expect(Object.keys(op.responses['200'].content)).toEqual(['text/event-stream']);
    expect(op.parameters.map((p: any) => p.name)).toEqual(['call_id', 'after']);
  });
});
