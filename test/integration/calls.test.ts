import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startHarness, type Harness } from '../support/harness';
import type { CallRow } from '../../src/db/models';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

const BASE_TIME = Date.parse('2024-05-01T12:00:00Z');
const minutes = (n: number) => new Date(BASE_TIME + n * 60_000);

async function insertCall(overrides: Partial<CallRow> = {}): Promise<CallRow> {
  const id = overrides.id ?? crypto.randomUUID();
  const row = await h.db.models.Call.create({
    id,
    agent_name: 'support-bot',
    phone_number: '+14155550123',
    direction: 'inbound',
    status: 'completed',
    workflow_id: `call-${id}`,
    ...overrides,
  });
  return row.get({ plain: true }) as CallRow;
}

describe('GET /api/calls', () => {
  // 25 calls a minute apart: every 5th outbound for sales-bot, statuses cycling.
  const statuses = ['completed', 'failed', 'no_answer', 'in_progress', 'ringing'] as const;
  const ids: string[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 25; i++) {
      const call = await insertCall({
        created_at: minutes(i),
        status: statuses[i % 5],
        direction: i % 5 === 0 ? 'outbound' : 'inbound',
        agent_name: i % 5 === 0 ? 'sales-bot' : 'support-bot',
        // Every other completed call was handed to a human.
        ...(i % 5 === 0 ? { end_reason: i % 10 === 0 ? ('transferred' as const) : ('user_ended' as const) } : {}),
      });
      ids.push(call.id);
    }
  });

  it('returns the newest 20 by default with the total', async () => {
    const res = await h.request('GET', '/api/calls');
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(25);
    expect(res.body.calls).toHaveLength(20);
    expect(res.body.calls.map((c: any) => c.id)).toEqual([...ids].reverse().slice(0, 20));
    expect(res.body.calls[0]).toMatchObject({ created_at: '2024-05-01T12:24:00', agent_name: 'support-bot', recording_path: null, recording_url: null });
  });

  it('paginates with page and page_size', async () => {
    const page2 = await h.request('GET', '/api/calls?page=2&page_size=10');
    expect(page2.status).toBe(200);
    expect(page2.body.total).toBe(25);
    expect(page2.body.calls.map((c: any) => c.id)).toEqual([...ids].reverse().slice(10, 20));
    const last = await h.request('GET', '/api/calls?page=3&page_size=10');
    expect(last.body.calls).toHaveLength(5);
    const beyond = await h.request('GET', '/api/calls?page=9&page_size=10');
    expect(beyond.body).toEqual({ calls: [], total: 25, total_exact: true });
    const max = await h.request('GET', '/api/calls?page_size=100');
    expect(max.body.calls).toHaveLength(25);
  });

  it('filters by status, agent_name, direction, end_reason and created time range, combined', async () => {
    const failed = await h.request('GET', '/api/calls?status=failed');
    expect(failed.body.total).toBe(5);
    expect(failed.body.calls.every((c: any) => c.status === 'failed')).toBe(true);

    const sales = await h.request('GET', '/api/calls?agent_name=sales-bot');
    expect(sales.body.total).toBe(5);
    const outbound = await h.request('GET', '/api/calls?direction=outbound');
    expect(outbound.body.calls.map((c: any) => c.id)).toEqual(sales.body.calls.map((c: any) => c.id));

    // Half-open range [12:05, 12:10): calls 5..9.
    const range = await h.request('GET', '/api/calls?created_after=2024-05-01T12:05:00&created_before=2024-05-01T12:10:00');
    expect(range.body.total).toBe(5);
    expect(range.body.calls.map((c: any) => c.id)).toEqual(ids.slice(5, 10).reverse());
    // An explicit offset is honoured: 14:05+02:00 is 12:05 UTC.
    const offset = await h.request('GET', `/api/calls?created_after=${encodeURIComponent('2024-05-01T14:05:00+02:00')}`);
    expect(offset.body.total).toBe(20);

    const combined = await h.request('GET', '/api/calls?status=completed&direction=outbound&created_after=2024-05-01T12:01:00');
    expect(combined.body.total).toBe(4);
    const transferred = await h.request('GET', '/api/calls?end_reason=transferred');
    expect(transferred.body.calls.map((c: any) => c.id)).toEqual([ids[20], ids[10], ids[0]]);
    expect(transferred.body.calls.every((c: any) => c.end_reason === 'transferred')).toBe(true);
    const none = await h.request('GET', '/api/calls?agent_name=nobody');
    expect(none.body).toEqual({ calls: [], total: 0, total_exact: true });
  });

  it('stops counting at 10,000 unless asked for the exact total, and still serves every page', async () => {
    // 10,001 calls of one agent, written in one statement (the API would take minutes to make them).
    await h.db.sequelize.query(`
      INSERT INTO calls (id, agent_name, phone_number, direction, status, workflow_id, created_at, updated_at)
      SELECT gen_random_uuid(), 'bulk-bot', '+14155550100', 'outbound', 'completed', 'call-bulk-' || n,
             TIMESTAMP '2023-01-01' + n * INTERVAL '1 second', now()
      FROM generate_series(1, 10001) AS n`);
    try {
      const capped = await h.request('GET', '/api/calls?agent_name=bulk-bot&page_size=1&include_transcript=false');
      expect(capped.status).toBe(200);
      expect(capped.body).toMatchObject({ total: 10_000, total_exact: false });
      const exact = await h.request('GET', '/api/calls?agent_name=bulk-bot&page_size=1&exact_total=true');
      expect(exact.body).toMatchObject({ total: 10_001, total_exact: true });
      // Past the cap pages still work: the oldest call is on the last page.
      const last = await h.request('GET', '/api/calls?agent_name=bulk-bot&page_size=1&page=10001&include_transcript=false');
      expect(last.body.calls.map((c: any) => c.created_at)).toEqual(['2023-01-01T00:00:01']);
      const bad = await h.request('GET', '/api/calls?exact_total=maybe');
      expect(bad.status).toBe(422);
      expect(bad.body.detail).toMatch(/exact_total/);
    } finally {
      await h.db.sequelize.query(`DELETE FROM calls WHERE agent_name = 'bulk-bot'`);
    }
  });

  it.each([
    ['page=0', /^query\.page: /],
    ['page=abc', /^query\.page: /],
    ['page_size=0', /^query\.page_size: /],
    ['page_size=101', /^query\.page_size: Too big/],
    ['page_size=2.5', /^query\.page_size: /],
    ['status=done', /^query\.status: /],
    ['direction=sideways', /^query\.direction: /],
    ['end_reason=hung_up', /^query\.end_reason: /],
    ['created_after=yesterday', /^query\.created_after: must be an ISO 8601 timestamp/],
    ['created_before=2024-13-45T00:00:00', /^query\.created_before: is not a valid date/],
    ['created_after=2024-05-02&created_before=2024-05-01', /^query\.created_before: must be later than created_after/],
  ])('rejects %s with 422 naming the query field', async (qs, detail) => {
    const res = await h.request('GET', `/api/calls?${qs}`);
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(detail);
  });

  it('requires credentials', async () => {
    expect((await h.request('GET', '/api/calls', { token: null })).status).toBe(401);
    expect((await h.request('GET', `/api/calls/${ids[0]}`, { token: null })).status).toBe(401);
    expect((await h.request('GET', `/api/recordings/${ids[0]}`, { token: null })).status).toBe(401);
  });
});

describe('GET /api/calls/{call_id} and its events', () => {
  let call: CallRow;
  beforeAll(async () => {
    call = await insertCall({
      agent_name: 'flow-bot',
      agent_version: 3,
      phone_number: '+919876543210',
      direction: 'outbound',
      status: 'completed',
      provider: 'twilio',
      provider_call_sid: 'CA123',
      start_time: new Date('2024-06-01T10:00:05.250Z'),
      end_time: new Date('2024-06-01T10:01:05.750Z'),
      duration: 60.5,
      end_reason: 'agent_ended',
      current_node_key: 'wrap_up',
      llm_prompt_tokens: 1200,
      llm_completion_tokens: 300,
      tts_characters: 845,
      metadata: { campaign: 'renewals' },
      context: { customer_name: 'Asha', due_amount: 1200 },
    });
    const at = (ms: number) => new Date(Date.parse('2024-06-01T10:00:05Z') + ms);
    // Inserted out of order on purpose: the API orders by seq.
    const events = [
      { seq: 4, event_type: 'agent_spoke', timestamp: at(3200), data: { text: 'Your payment is due Friday.' } },
      { seq: 1, event_type: 'call_started', timestamp: at(0), data: {} },
      { seq: 2, event_type: 'agent_spoke', timestamp: at(120), data: { text: 'Hello Asha!' } },
      { seq: 3, event_type: 'user_spoke', timestamp: at(2500), data: { text: 'Hi, when is my payment due?' } },
      { seq: 5, event_type: 'tool_called', timestamp: at(3300), data: { function: 'lookup', args: { id: 1 } } },
      { seq: 6, event_type: 'call_ended', timestamp: at(60500), data: { reason: 'agent_ended' } },
    ];
    for (const e of events) await h.db.models.CallEvent.create({ call_id: call.id, ...e });
  });

  it('returns every call field, the context, provider details and the transcript', async () => {
    const res = await h.request('GET', `/api/calls/${call.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: call.id,
      agent_name: 'flow-bot',
      agent_version: 3,
      phone_number: '+919876543210',
      direction: 'outbound',
      status: 'completed',
      provider: 'twilio',
      provider_call_sid: 'CA123',
      start_time: '2024-06-01T10:00:05',
      end_time: '2024-06-01T10:01:05',
      duration: 60.5,
      end_reason: 'agent_ended',
      current_node_key: 'wrap_up',
      llm_prompt_tokens: 1200,
      llm_completion_tokens: 300,
      tts_characters: 845,
      metadata: { campaign: 'renewals' },
      context: { customer_name: 'Asha', due_amount: 1200 },
      recording_path: null,
    });
    expect(res.body.transcript).toEqual([
      { role: 'assistant', text: 'Hello Asha!', timestamp: '2024-06-01T10:00:05.120' },
      { role: 'user', text: 'Hi, when is my payment due?', timestamp: '2024-06-01T10:00:07.500' },
      { role: 'assistant', text: 'Your payment is due Friday.', timestamp: '2024-06-01T10:00:08.200' },
    ]);
  });

  it('returns the events ordered by seq with precise timestamps', async () => {
    const res = await h.request('GET', `/api/calls/${call.id}/events`);
    expect(res.status).toBe(200);
    expect(res.body.map((e: any) => e.id)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(res.body[0]).toEqual({ id: 1, call_id: call.id, event_type: 'call_started', timestamp: '2024-06-01T10:00:05.000', data: {} });
    expect(res.body[4]).toMatchObject({ event_type: 'tool_called', data: { function: 'lookup', args: { id: 1 } } });
  });

  it('has an empty transcript and event list for a call without events', async () => {
    const quiet = await insertCall({ status: 'ringing' });
    expect((await h.request('GET', `/api/calls/${quiet.id}`)).body.transcript).toEqual([]);
    expect((await h.request('GET', `/api/calls/${quiet.id}/events`)).body).toEqual([]);
  });

  it('answers 404 {detail} for unknown ids and 422 for malformed ones', async () => {
    const unknown = crypto.randomUUID();
    for (const p of [`/api/calls/${unknown}`, `/api/calls/${unknown}/events`]) {
      const res = await h.request('GET', p);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Call not found' });
    }
    const bad = await h.request('GET', '/api/calls/12345/events');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^path\.call_id: /);
  });
});

describe('GET /api/recordings/{call_id}', () => {
  // A 1-second 8 kHz mono 16-bit WAV: 44-byte header + 16000 bytes of a ramp.
  const wav = (() => {
    const data = Buffer.alloc(16000);
    for (let i = 0; i < data.length; i++) data[i] = i % 251;
    const header = Buffer.alloc(44);
    header.write('RIFF', 0);
    header.writeUInt32LE(36 + data.length, 4);
    header.write('WAVEfmt ', 8);
    header.writeUInt32LE(16, 16);
    header.writeUInt16LE(1, 20);
    header.writeUInt16LE(1, 22);
    header.writeUInt32LE(8000, 24);
    header.writeUInt32LE(16000, 28);
    header.writeUInt16LE(2, 32);
    header.writeUInt16LE(16, 34);
    header.write('data', 36);
    header.writeUInt32LE(data.length, 40);
    return Buffer.concat([header, data]);
  })();
  let relativeCall: CallRow;
  let absoluteCall: CallRow;
  let elsewhereCall: CallRow;

  // Recordings are served from DATA_DIR/recordings/<call id>.wav, whatever recording_path says.
  beforeAll(async () => {
    fs.mkdirSync(path.join(h.config.dataDir, 'recordings'), { recursive: true });
    const relativeId = crypto.randomUUID();
    const absoluteId = crypto.randomUUID();
    fs.writeFileSync(path.join(h.config.dataDir, 'recordings', `${relativeId}.wav`), wav);
    fs.writeFileSync(path.join(h.config.dataDir, 'recordings', `${absoluteId}.wav`), wav);
    relativeCall = await insertCall({ id: relativeId, recording_path: `recordings/${relativeId}.wav` });
    absoluteCall = await insertCall({ id: absoluteId, recording_path: path.join(h.config.dataDir, 'recordings', `${absoluteId}.wav`) });
    const elsewhere = path.join(h.config.dataDir, 'abs.wav');
    fs.writeFileSync(elsewhere, wav);
    elsewhereCall = await insertCall({ recording_path: elsewhere });
  });

  const fetchRecording = (id: string, headers: Record<string, string> = {}) =>
    h.adminToken().then((token) => fetch(`${h.api.url}/api/recordings/${id}`, { headers: { authorization: `Bearer ${token}`, ...headers } }));

  it('streams the whole WAV of the call from the recordings directory', async () => {
    for (const call of [relativeCall, absoluteCall]) {
      const res = await fetchRecording(call.id);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('audio/wav');
      expect(res.headers.get('accept-ranges')).toBe('bytes');
      expect(res.headers.get('content-length')).toBe(String(wav.length));
      expect(Buffer.from(await res.arrayBuffer()).equals(wav)).toBe(true);
    }
    const detail = await h.request('GET', `/api/calls/${relativeCall.id}`);
    expect(detail.body).toMatchObject({ recording_path: `recordings/${relativeCall.id}.wav`, recording_url: `/api/recordings/${relativeCall.id}` });
  });

  it('never serves a file outside the recordings directory, whatever recording_path holds', async () => {
    const res = await h.request('GET', `/api/recordings/${elsewhereCall.id}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Recording not found' });
  });

  it('answers byte ranges with 206 and Content-Range', async () => {
    const cases: Array<[string, number, number]> = [
      ['bytes=0-43', 0, 43],
      ['bytes=100-199', 100, 199],
      ['bytes=16000-', 16000, wav.length - 1],
      ['bytes=-10', wav.length - 10, wav.length - 1],
      ['bytes=16000-999999', 16000, wav.length - 1],
    ];
    for (const [range, start, end] of cases) {
      const res = await fetchRecording(relativeCall.id, { range });
      expect(res.status).toBe(206);
      expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/${wav.length}`);
      expect(res.headers.get('content-length')).toBe(String(end - start + 1));
      expect(Buffer.from(await res.arrayBuffer()).equals(wav.subarray(start, end + 1))).toBe(true);
    }
  });

  it('answers 416 {detail} for a range beyond the file and ignores malformed ranges', async () => {
    const res = await fetchRecording(relativeCall.id, { range: `bytes=${wav.length}-` });
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe(`bytes */${wav.length}`);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/Range not satisfiable/);

    const malformed = await fetchRecording(relativeCall.id, { range: 'pages=1-2' });
    expect(malformed.status).toBe(200);
    expect((await malformed.arrayBuffer()).byteLength).toBe(wav.length);
  });

  it('joins the parts of a call that came back after a failed transfer (<id>-2.wav …) into one WAV, ranges included', async () => {
    const id = crypto.randomUUID();
    const dir = path.join(h.config.dataDir, 'recordings');
    // Part 2: half a second more in the same format; part 3: another format, left out.
    const second = Buffer.from(wav.subarray(0, 44 + 8000));
    second.writeUInt32LE(36 + 8000, 4);
    second.writeUInt32LE(8000, 40);
    second.fill(7, 44);
    const otherFormat = Buffer.from(second);
    otherFormat.writeUInt32LE(16000, 24);
    fs.writeFileSync(path.join(dir, `${id}.wav`), wav);
    fs.writeFileSync(path.join(dir, `${id}-2.wav`), second);
    fs.writeFileSync(path.join(dir, `${id}-3.wav`), otherFormat);
    await insertCall({ id, recording_path: `recordings/${id}.wav` });

    const res = await fetchRecording(id);
    expect(res.status).toBe(200);
    const body = Buffer.from(await res.arrayBuffer());
    const data = Buffer.concat([wav.subarray(44), second.subarray(44)]);
    expect(body.length).toBe(44 + data.length);
    expect(res.headers.get('content-length')).toBe(String(body.length));
    // The first part's header, with the joined sizes.
    expect(body.toString('ascii', 0, 4)).toBe('RIFF');
    expect(body.subarray(8, 40).equals(wav.subarray(8, 40))).toBe(true);
    expect(body.readUInt32LE(4)).toBe(36 + data.length);
    expect(body.readUInt32LE(40)).toBe(data.length);
    expect(body.subarray(44).equals(data)).toBe(true);

    // A range across the end of the first part.
    const start = wav.length - 10;
    const ranged = await fetchRecording(id, { range: `bytes=${start}-${start + 19}` });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(`bytes ${start}-${start + 19}/${body.length}`);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(body.subarray(start, start + 20))).toBe(true);
  });

  it('answers 404 {detail} when the call, its recording path or the file is missing', async () => {
    const noPath = await insertCall({});
    const goneFile = await insertCall({ recording_path: 'recordings/deleted.wav' });
    const expectations: Array<[string, string]> = [
      [crypto.randomUUID(), 'Call not found'],
      [noPath.id, 'Recording not found'],
      [goneFile.id, 'Recording not found'],
    ];
    for (const [id, detail] of expectations) {
      const res = await h.request('GET', `/api/recordings/${id}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail });
    }
  });
});
