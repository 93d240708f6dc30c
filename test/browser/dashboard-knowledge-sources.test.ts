/**
 * Knowledge-base traceability on the call page, in a real headless Chromium against the real
 * platform (API, PostgreSQL, the Temporal worker ingesting the document and running the text
 * call, the fake LLM): under the agent reply answered from a passage, its Sources (document ›
 * heading, score); none under a reply given no passage; the `knowledge_retrieved` event of the
 * timeline with its query and passages.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { eventually } from '../support/fixtures';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../support/harness';
import { ensureDashboardBuilt, launchChromium, openDashboard, screenshot } from './support/chromium';

let h: Harness;
let llm: FakeOpenAI;
let browser: Browser;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  ensureDashboardBuilt();
  llm = await startFakeOpenAI();
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test' }, worker: true });
  browser = await launchChromium();
  ({ page, pageErrors } = await openDashboard(browser, h.api.url, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await h?.stop();
  await llm?.stop();
});

afterEach(() => expect(pageErrors).toEqual([]));

const api = async (method: string, apiPath: string, body?: unknown) => {
  const res = await h.request(method, apiPath, body === undefined ? {} : { body });
  if (res.status >= 300) throw new Error(`${method} ${apiPath} → ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

it('shows the sources under the reply answered from the knowledge base, and the retrieval in the timeline', async () => {
  const base = await api('POST', '/api/knowledge-bases', { name: 'clinic' });
  const faq = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'knowledge', 'clinic-faq.md')).toString('base64');
  const doc = await api('POST', `/api/knowledge-bases/${base.id}/documents`, { name: 'clinic-faq.md', content_base64: faq });
  await eventually(async () => (await api('GET', `/api/knowledge-bases/${base.id}/documents/${doc.id}`)).status === 'ready', 30_000);
  await api('POST', '/api/agents', { name: 'clinic-kb', prompt: 'You answer questions for Sunrise Clinic.', knowledge_base_ids: [base.id], knowledge_timeout_ms: 2000 });

  llm.setResponder((body) => ({ content: String(body.messages.at(-1).content).includes('blood') ? 'A blood test costs 25 euros.' : 'I cannot say.' }));
  const call = await api('POST', '/api/calls/test', { agent_name: 'clinic-kb' });
  await api('POST', `/api/calls/${call.call_id}/test/messages`, { text: 'How much does a blood test cost?' });
  await api('POST', `/api/calls/${call.call_id}/test/messages`, { text: 'zebra xylophone quantum nebula' });
  await api('POST', '/api/calls/end', { call_id: call.call_id });
  const detail = await api('GET', `/api/calls/${call.call_id}`);
  const top = detail.transcript[1].sources[0];

  await page.goto(`${h.api.url}/calls/${call.call_id}`);
  const lines = page.getByRole('list', { name: 'Transcript' }).getByTestId('transcript-line');
  const answered = lines.filter({ hasText: 'A blood test costs 25 euros.' });
  await answered.waitFor();
  const sources = answered.getByRole('list', { name: 'Sources' }).getByRole('listitem');
  // Every passage the reply was given, in the order the LLM had them, as the API names them.
  expect(await sources.allTextContents()).toEqual(detail.transcript[1].sources.map((s: any) => `${s.document} › ${s.heading} ${s.score.toFixed(3)}`));
  expect(await sources.first().textContent()).toBe(`clinic-faq.md › Sunrise Clinic FAQ > Prices ${top.score.toFixed(3)}`);
  // The reply given no passage, and the caller's lines, have none.
  await lines.filter({ hasText: 'I cannot say.' }).waitFor();
  expect(await lines.filter({ hasText: 'I cannot say.' }).getByTestId('reply-sources').count()).toBe(0);
  expect(await lines.getByTestId('reply-sources').count()).toBe(1);

  // The timeline's retrieval: the caller's question, the mode and the passages, readably.
  const retrieval = page.getByTestId('call-event').filter({ hasText: 'knowledge_retrieved' }).first();
  await retrieval.getByText('“How much does a blood test cost?”').waitFor();
  await retrieval.getByText(/^auto · \d+ ms$/).waitFor();
  const passages = retrieval.getByRole('list', { name: 'Passages retrieved' }).getByRole('listitem');
  expect(await passages.first().textContent()).toBe(`clinic-faq.md › Sunrise Clinic FAQ > Prices ${top.score.toFixed(3)}`);
  await screenshot(page, 'call-knowledge-sources');
});
