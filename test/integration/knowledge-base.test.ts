/**
 * Knowledge bases end to end (docs/knowledge-base.md): the API (ownership, errors), ingestion of
 * a Markdown file, a PDF, a DOCX and a URL served on loopback by the real Temporal workflow and
 * worker into PostgreSQL, a corrupt PDF and refused URLs failing with their reason, searching
 * (English and Hindi), re-ingestion and deletion; text calls in `auto` mode (the LLM fake sees the
 * passages in its request) and `tool` mode, with their `knowledge_retrieved` events.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { eventually } from '../support/fixtures';
import { createSession } from '../support/users';
import { events, h, hangUp, lastMessage, llm, say, startText, toolNames, useTextCallStack } from '../support/text-call-stack';

useTextCallStack();

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'knowledge');
const base64 = (name: string) => fs.readFileSync(path.join(FIXTURES, name)).toString('base64');

const PAGE = `<!doctype html><html><head><title>Delivery</title><script>track()</script></head><body>
<nav>Home | Shop</nav><h1>Delivery times</h1><p>Orders placed before noon are delivered the next working day in Pune and Mumbai.</p>
<h2>Courier</h2><p>Parcels travel with BlueDart; the tracking number arrives by SMS.</p></body></html>`;
let site: http.Server;
let siteUrl: string;

beforeAll(async () => {
  site = http.createServer((req, res) => {
    if (req.url === '/delivery') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => site?.close(resolve));
});

async function createBase(body: Record<string, unknown>, token?: string) {
  const res = await h.request('POST', '/api/knowledge-bases', { body, ...(token ? { token } : {}) });
  expect(res.status).toBe(201);
  return res.body as { id: string; text_search_config: string };
}

async function addDocument(baseId: string, body: Record<string, unknown>) {
  const res = await h.request('POST', `/api/knowledge-bases/${baseId}/documents`, { body });
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 202, body: { status: 'processing' } });
  return res.body as { id: string };
}

/** The document once its ingestion has ended, and every progress figure seen on the way. */
async function settled(baseId: string, documentId: string) {
  const seen = new Set<string>();
  const doc = await eventually(
    async () => {
      const res = await h.request('GET', `/api/knowledge-bases/${baseId}/documents/${documentId}`);
      seen.add(`${res.body.status} ${res.body.progress}`);
      return res.body.status !== 'processing' && res.body;
    },
    20_000,
    20,
  );
  return { doc, seen };
}

async function search(baseId: string, query: string, extra: Record<string, unknown> = {}) {
  const res = await h.request('POST', `/api/knowledge-bases/${baseId}/search`, { body: { query, top_k: 3, ...extra } });
  expect(res.status).toBe(200);
  return res.body as { passages: Array<{ chunk_id: string; document: string; heading: string; content: string; score: number }>; ms: number };
}

describe('a knowledge base of four documents', () => {
  let baseId: string;
  const docs: Record<string, string> = {};

  beforeAll(async () => {
    const base = await createBase({ name: 'support', language: 'en-IN', description: 'clinic and shop' });
    baseId = base.id;
    expect(base.text_search_config).toBe('english');
    docs.md = (await addDocument(baseId, { name: 'clinic-faq.md', content_base64: base64('clinic-faq.md') })).id;
    docs.pdf = (await addDocument(baseId, { name: 'telecom-prices.pdf', content_base64: base64('telecom-prices.pdf') })).id;
    docs.docx = (await addDocument(baseId, { name: 'returns-policy.docx', content_base64: base64('returns-policy.docx') })).id;
    docs.url = (await addDocument(baseId, { url: `${siteUrl}/delivery` })).id;
  });

  it('ingests each through its workflow until it is ready, with progress on the way', async () => {
    for (const [key, id] of Object.entries(docs)) {
      const { doc, seen } = await settled(baseId, id);
      expect({ key, status: doc.status, progress: doc.progress, error: doc.error }).toEqual({ key, status: 'ready', progress: 100, error: null });
      expect(doc.chunk_count).toBeGreaterThan(0);
      expect(doc.ingested_at).toEqual(expect.any(String));
      for (const figure of seen) expect(figure).toMatch(/^(processing (0|5|20|30|60|80)|ready 100)$/);
    }
    const url = (await h.request('GET', `/api/knowledge-bases/${baseId}/documents/${docs.url}`)).body;
    expect(url).toMatchObject({ source: 'url', kind: 'html', name: `${siteUrl}/delivery` });
    const base = (await h.request('GET', `/api/knowledge-bases/${baseId}`)).body;
    expect(base.document_count).toBe(4);
    // Chunks carry their document, heading path and position.
    const rows = (await h.db.sequelize.query(`SELECT heading, position FROM knowledge_chunks WHERE document_id = '${docs.md}' ORDER BY position`))[0] as any[];
    expect(rows.map((r) => r.heading)).toEqual(['Sunrise Clinic FAQ', 'Sunrise Clinic FAQ > Opening hours', 'Sunrise Clinic FAQ > Parking', 'Sunrise Clinic FAQ > Prices', 'Sunrise Clinic FAQ > Cancellation policy']);
    expect(rows.map((r) => r.position)).toEqual([0, 1, 2, 3, 4]);
  });

  it('finds the passage that answers each question first, from every kind of document', async () => {
    const cases = [
      { query: 'How much does a blood test cost?', document: 'clinic-faq.md', heading: 'Sunrise Clinic FAQ > Prices' },
      { query: 'Are you open on Saturday?', document: 'clinic-faq.md', heading: 'Sunrise Clinic FAQ > Opening hours' },
      { query: 'what does roaming in the emirates cost', document: 'telecom-prices.pdf', heading: 'Page 2' },
      { query: 'when will my refund be paid', document: 'returns-policy.docx', heading: 'Returns policy > Refunds' },
      { query: 'which courier delivers parcels', document: `${siteUrl}/delivery`, heading: 'Delivery times > Courier' },
      // A misspelt name: no stem matches, trigrams do.
      { query: 'Bluedartt tracking', document: `${siteUrl}/delivery`, heading: 'Delivery times > Courier' },
    ];
    for (const c of cases) {
      const { passages, ms } = await search(baseId, c.query);
      expect({ query: c.query, top: passages[0] && { document: passages[0].document, heading: passages[0].heading } }).toEqual({ query: c.query, top: { document: c.document, heading: c.heading } });
      expect(passages[0]!.score).toBeGreaterThan(0);
      expect(ms).toBeLessThan(1000);
    }
    // The threshold leaves out the weaker passages.
    const all = (await search(baseId, 'blood test on Saturday')).passages;
    const scores = all.map((p) => p.score);
    const threshold = (Math.max(...scores) + Math.min(...scores)) / 2;
    expect(Math.max(...scores)).toBeGreaterThan(Math.min(...scores));
    const strict = (await search(baseId, 'blood test on Saturday', { threshold })).passages;
    expect(strict.length).toBeGreaterThan(0);
    expect(strict.length).toBeLessThan(all.length);
    expect(strict.every((p) => p.score >= threshold)).toBe(true);
    expect((await search(baseId, 'zebra xylophone quantum')).passages).toEqual([]);
  });

  it('re-ingests a document by replacing its chunks, and a deleted document is no longer found', async () => {
    const before = (await h.db.sequelize.query(`SELECT id FROM knowledge_chunks WHERE document_id = '${docs.docx}'`))[0] as any[];
    const refreshed = await h.request('POST', `/api/knowledge-bases/${baseId}/documents/${docs.docx}/refresh`);
    expect(refreshed.status).toBe(202);
    const { doc } = await settled(baseId, docs.docx!);
    expect(doc.status).toBe('ready');
    const after = (await h.db.sequelize.query(`SELECT id FROM knowledge_chunks WHERE document_id = '${docs.docx}'`))[0] as any[];
    expect(after).toHaveLength(before.length);
    expect(after.map((r) => r.id)).not.toEqual(expect.arrayContaining(before.map((r) => r.id)));

    expect((await h.request('DELETE', `/api/knowledge-bases/${baseId}/documents/${docs.docx}`)).status).toBe(204);
    expect((await search(baseId, 'when will my refund be paid')).passages.map((p) => p.document)).not.toContain('returns-policy.docx');
    expect((await h.request('GET', `/api/knowledge-bases/${baseId}/documents/${docs.docx}`)).status).toBe(404);
  });
});

describe('documents that cannot be ingested', () => {
  let baseId: string;
  beforeAll(async () => {
    baseId = (await createBase({ name: 'broken' })).id;
  });

  it('fails a corrupt PDF, a URL that answers 404 and a blocked address with their reasons, indexing nothing', async () => {
    const corrupt = await addDocument(baseId, { name: 'corrupt.pdf', content_base64: base64('corrupt.pdf') });
    const missing = await addDocument(baseId, { url: `${siteUrl}/gone` });
    const blocked = await addDocument(baseId, { url: 'http://10.1.2.3/faq.html' });
    const reasons = await Promise.all([corrupt, missing, blocked].map(async (d) => (await settled(baseId, d.id)).doc));
    expect(reasons.map((d) => ({ status: d.status, chunks: d.chunk_count }))).toEqual(Array(3).fill({ status: 'failed', chunks: 0 }));
    expect(reasons[0].error).toMatch(/^the PDF could not be read: ./);
    expect(reasons[1].error).toBe(`${siteUrl}/gone answered HTTP 404`);
    expect(reasons[2].error).toMatch(/^blocked: 10\.1\.2\.3 is a private address/);
    const [{ n }] = (await h.db.sequelize.query(`SELECT count(*)::int AS n FROM knowledge_chunks WHERE knowledge_base_id = '${baseId}'`))[0] as any[];
    expect(n).toBe(0);
  });

  it('answers 4xx with a detail for what it cannot take', async () => {
    const post = (body: unknown) => h.request('POST', `/api/knowledge-bases/${baseId}/documents`, { body });
    expect(await post({ name: 'a.md' })).toMatchObject({ status: 422, body: { detail: 'give either content_base64 (with name) or url' } });
    expect(await post({ name: 'a.md', content_base64: 'aGk=', url: 'https://example.com/' })).toMatchObject({ status: 422 });
    expect(await post({ name: 'photo.png', content_base64: 'aGk=' })).toMatchObject({ status: 422, body: { detail: expect.stringMatching(/^name: must end in one of \.pdf/) } });
    expect(await post({ name: 'a.md', content_base64: 'not base64!' })).toMatchObject({ status: 422, body: { detail: 'content_base64: must be base64' } });
    expect(await post({ url: 'ftp://example.com/x' })).toMatchObject({ status: 422 });
    expect(await post({ name: 'a.md', content_base64: 'aGk=', refresh_hours: 24 })).toMatchObject({ status: 422, body: { detail: 'refresh_hours: only URL documents are refreshed' } });
    expect((await h.request('POST', '/api/knowledge-bases', { body: { name: 'broken' } })).status).toBe(409);
    expect((await h.request('POST', '/api/knowledge-bases', { body: { name: 'x', language: 'english please' } })).status).toBe(422);
    expect((await h.request('PATCH', `/api/knowledge-bases/${baseId}`, { body: { language: 'fr' } })).body.detail).toMatch(/^language: cannot be changed/);
    expect((await h.request('GET', '/api/knowledge-bases/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('lets a member search any base but change only their own', async () => {
    const member = await createSession(h);
    expect((await h.request('POST', `/api/knowledge-bases/${baseId}/search`, { body: { query: 'x' }, token: member.token })).status).toBe(200);
    const denied = await h.request('POST', `/api/knowledge-bases/${baseId}/documents`, { body: { url: `${siteUrl}/delivery` }, token: member.token });
    expect(denied).toMatchObject({ status: 403, body: { detail: 'Only the owner of this knowledge base or an administrator may change it' } });
    expect((await h.request('DELETE', `/api/knowledge-bases/${baseId}`, { token: member.token })).status).toBe(403);
    const own = await createBase({ name: `member-${member.id}` }, member.token);
    expect((await h.request('DELETE', `/api/knowledge-bases/${own.id}`, { token: member.token })).status).toBe(204);
  });
});

it('searches a Hindi knowledge base, trigrams finding an inflected word', async () => {
  const base = await createBase({ name: 'clinic-hi', language: 'hi' });
  const text = '# क्लिनिक\n\n## समय\n\nक्लिनिक सोमवार से शुक्रवार तक सुबह आठ बजे से शाम छह बजे तक खुला रहता है।\n\n## फीस\n\nडॉक्टर से परामर्श की फीस पाँच सौ रुपये है।\n';
  const doc = await addDocument(base.id, { name: 'clinic.md', content_base64: Buffer.from(text).toString('base64') });
  expect((await settled(base.id, doc.id)).doc.status).toBe('ready');
  expect((await search(base.id, 'परामर्श की फीस कितनी है')).passages[0]?.heading).toBe('क्लिनिक > फीस');
  expect((await search(base.id, 'क्लिनिक कब खुलता है')).passages[0]?.heading).toBe('क्लिनिक > समय');
});

describe('text calls answering from a knowledge base', () => {
  let baseId: string;
  beforeAll(async () => {
    baseId = (await createBase({ name: 'calls-kb' })).id;
    const md = await addDocument(baseId, { name: 'clinic-faq.md', content_base64: base64('clinic-faq.md') });
    const pdf = await addDocument(baseId, { name: 'telecom-prices.pdf', content_base64: base64('telecom-prices.pdf') });
    for (const doc of [md, pdf]) expect((await settled(baseId, doc.id)).doc.status).toBe('ready');
  });

  async function agentWith(name: string, knowledge: Record<string, unknown>) {
    const res = await h.request('POST', '/api/agents', { body: { name, prompt: 'You answer questions for Sunrise Clinic.', ...knowledge } });
    expect(res.status).toBe(201);
    return res.body;
  }

  it('auto: every LLM request of a turn carries the passages for the caller\'s question, and the event names them', async () => {
    const agent = await agentWith('kb-auto', { knowledge_base_ids: [baseId], knowledge_mode: 'auto', knowledge_timeout_ms: 2000 });
    expect(agent).toMatchObject({ knowledge_base_ids: [baseId], knowledge_mode: 'auto', knowledge_timeout_ms: 2000 });
    llm.setResponder(() => ({ content: 'It costs 25 euros.' }));
    const call = await startText('kb-auto');
    await say(call.call_id, 'How much does a blood test cost?');
    await say(call.call_id, 'And what does roaming in the emirates cost?');
    const [first, second] = llm.requests.map((r) => r.body as any);
    const context = (body: any) => body.messages.find((m: any) => m.role === 'system' && m.content.includes('<knowledge>'))?.content as string;
    expect(context(first)).toContain('Service: Blood test; Price: 25 euros');
    expect(context(second)).toContain('Roaming in the United Arab Emirates costs 599 rupees');
    // The passages come just before the caller's words.
    expect(first.messages[first.messages.length - 2].content).toBe(context(first));
    expect(lastMessage(first)).toEqual({ role: 'user', content: 'How much does a blood test cost?' });
    const retrieved = (await events(call.call_id)).filter((e) => e.event_type === 'knowledge_retrieved');
    expect(retrieved).toHaveLength(2);
    expect(retrieved[0]!.data).toMatchObject({ knowledge_base_ids: [baseId], mode: 'auto', query: 'How much does a blood test cost?', ms: expect.any(Number) });
    expect(retrieved[0]!.data.chunks[0]).toMatchObject({ document: 'clinic-faq.md', heading: 'Sunrise Clinic FAQ > Prices', knowledge_base_id: baseId, chunk_id: expect.any(String), score: expect.any(Number) });
    expect(retrieved[1]!.data.chunks[0]).toMatchObject({ document: 'telecom-prices.pdf', heading: 'Page 2' });
    await hangUp(call.call_id);
  });

  it('tool: the LLM calls search_knowledge_base and gets the passages as its result', async () => {
    await agentWith('kb-tool', { knowledge_base_ids: [baseId], knowledge_mode: 'tool' });
    llm.enqueue({ tool_calls: [{ name: 'search_knowledge_base', arguments: { query: 'parking garage' } }] }, { content: 'Two hours are free.' });
    const call = await startText('kb-tool');
    const reply = await say(call.call_id, 'Where can I park?');
    expect(reply.replies).toEqual(['Two hours are free.']);
    const [first, second] = llm.requests.map((r) => r.body as any);
    expect(toolNames(first)).toContain('search_knowledge_base');
    expect(first.messages.some((m: any) => String(m.content ?? '').includes('<knowledge>'))).toBe(false);
    expect(lastMessage(second)).toMatchObject({ role: 'tool', content: expect.stringContaining('Elm Street garage') });
    const retrieved = (await events(call.call_id)).filter((e) => e.event_type === 'knowledge_retrieved');
    expect(retrieved.map((e) => ({ mode: e.data.mode, query: e.data.query, top: e.data.chunks[0].heading }))).toEqual([{ mode: 'tool', query: 'parking garage', top: 'Sunrise Clinic FAQ > Parking' }]);
    await hangUp(call.call_id);
  });

  it('refuses an unknown knowledge base, and deleting a base removes it from its agents', async () => {
    const bad = await h.request('POST', '/api/agents', { body: { name: 'kb-bad', prompt: 'x', knowledge_base_ids: ['00000000-0000-4000-8000-000000000000'] } });
    expect(bad).toMatchObject({ status: 422, body: { detail: 'knowledge_base_ids.0: no knowledge base 00000000-0000-4000-8000-000000000000' } });
    const temp = await createBase({ name: 'temporary' });
    const agent = await agentWith('kb-temp', { knowledge_base_ids: [temp.id] });
    expect((await h.request('DELETE', `/api/knowledge-bases/${temp.id}`)).status).toBe(204);
    const after = (await h.request('GET', `/api/agents/${agent.id}`)).body;
    expect(after).toMatchObject({ knowledge_base_ids: [], version: agent.version + 1 });
  });
});
