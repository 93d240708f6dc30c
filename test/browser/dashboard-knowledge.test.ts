/**
 * Knowledge bases in the dashboard, in a real headless Chromium against the real platform (API
 * over a socket, PostgreSQL, the Temporal worker running each document's ingestion workflow):
 * creating a base, uploading by the drop zone and the file input until the documents are `ready`
 * (or `failed` with their reason), a URL document, the search tester, and attaching the base to an
 * agent and to a flow node; what a member may do with an administrator's base.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../support/harness';
import { ensureDashboardBuilt, launchChromium, openDashboard, screenshot } from './support/chromium';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'knowledge');
const PAGE = `<!doctype html><html><head><title>Delivery</title></head><body>
<h1>Delivery times</h1><p>Orders placed before noon are delivered the next working day in Pune and Mumbai.</p></body></html>`;

let h: Harness;
let site: http.Server;
let siteUrl: string;
let browser: Browser;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  ensureDashboardBuilt();
  site = http.createServer((req, res) => {
    if (req.url === '/delivery') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  h = await startHarness({ worker: true });
  browser = await launchChromium();
  ({ page, pageErrors } = await openDashboard(browser, h.api.url, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await h?.stop();
  await new Promise((resolve) => site?.close(resolve));
});

afterEach(() => expect(pageErrors).toEqual([]));

const api = async (method: string, apiPath: string, body?: unknown) => {
  const res = await h.request(method, apiPath, body === undefined ? {} : { body });
  if (res.status >= 300) throw new Error(`${method} ${apiPath} → ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

/** Drops a file on the element as a user dragging it from the desktop would (a DataTransfer holding a File). */
async function dropFile(target: Locator, name: string, content: Buffer, type: string) {
  const dataTransfer = await target.page().evaluateHandle(
    ({ name, base64, type }) => {
      // Runs in the page (this project's tsconfig has no DOM types: the one class needed, typed here).
      const { DataTransfer } = globalThis as unknown as { DataTransfer: new () => { items: { add(file: File): void } } };
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], name, { type }));
      return dt;
    },
    { name, base64: content.toString('base64'), type },
  );
  await target.dispatchEvent('dragenter', { dataTransfer });
  await target.dispatchEvent('dragover', { dataTransfer });
  await target.dispatchEvent('drop', { dataTransfer });
}

const documentRow = (name: string) => page.getByRole('table', { name: 'Documents' }).getByRole('row').filter({ hasText: name });

describe('knowledge bases in the dashboard', () => {
  let baseId: string;

  it('creates a knowledge base and ingests a Markdown file dropped on the page until it is ready', async () => {
    await page.getByRole('link', { name: 'Knowledge bases' }).click();
    await page.getByRole('heading', { name: 'Knowledge bases' }).waitFor();
    await page.getByText('No knowledge bases yet').waitFor();
    await page.getByRole('button', { name: 'New knowledge base' }).click();
    await page.getByRole('textbox', { name: 'Name' }).fill('clinic');
    await page.getByRole('textbox', { name: 'Language' }).fill('en');
    await page.getByRole('textbox', { name: 'Description' }).fill('Sunrise Clinic: hours, prices, policies');
    await page.getByRole('button', { name: 'Create' }).click();
    // The new base's own page.
    await page.getByRole('heading', { name: 'clinic' }).waitFor();
    const [base] = await api('GET', '/api/knowledge-bases');
    expect(base).toMatchObject({ name: 'clinic', language: 'en', text_search_config: 'english', description: 'Sunrise Clinic: hours, prices, policies' });
    baseId = base.id;
    expect(page.url()).toBe(`${h.api.url}/knowledge-bases/${baseId}`);
    await page.getByText('language en (english)').waitFor();

    await dropFile(page.getByTestId('document-drop-zone'), 'clinic-faq.md', fs.readFileSync(path.join(FIXTURES, 'clinic-faq.md')), 'text/markdown');
    const row = documentRow('clinic-faq.md');
    await row.waitFor();
    // Processing (with its percentage) while the worker ingests it, then ready.
    expect(await row.getByTestId('document-status').textContent()).toMatch(/^(processing \d+ %.*|ready)$/);
    await row.getByTestId('document-status').filter({ hasText: /^ready$/ }).waitFor({ timeout: 30_000 });
    const [doc] = await api('GET', `/api/knowledge-bases/${baseId}/documents`);
    expect(doc).toMatchObject({ name: 'clinic-faq.md', source: 'upload', kind: 'markdown', status: 'ready', progress: 100 });
    expect(doc.chunk_count).toBeGreaterThan(0);
    await row.getByRole('cell', { name: String(doc.chunk_count), exact: true }).waitFor();
    // The base's counts follow once the document is in.
    await page.getByTestId('base-counts').filter({ hasText: `1 document, ${doc.chunk_count} chunks` }).waitFor();
  });

  it('says why a file was refused or failed, and deletes a document', async () => {
    const input = page.getByLabel('Upload documents');
    // An unsupported kind: the API's 422, under the drop zone.
    await input.setInputFiles({ name: 'notes.xyz', mimeType: 'application/octet-stream', buffer: Buffer.from('hello') });
    const refused = page.getByRole('alert').filter({ hasText: 'notes.xyz was not uploaded' });
    await refused.getByText(/name: must end in one of/).waitFor();
    await page.getByRole('button', { name: 'Dismiss notes.xyz' }).click();
    await refused.waitFor({ state: 'detached' });

    // A corrupt PDF is accepted, then fails with its reason.
    await input.setInputFiles(path.join(FIXTURES, 'corrupt.pdf'));
    const failed = documentRow('corrupt.pdf').getByTestId('document-status');
    await failed.filter({ hasText: /^failed: the PDF could not be read/ }).waitFor({ timeout: 30_000 });
    const docs = await api('GET', `/api/knowledge-bases/${baseId}/documents`);
    expect(await failed.textContent()).toBe(`failed: ${docs.find((d: any) => d.name === 'corrupt.pdf').error}`);

    await page.getByRole('button', { name: 'Delete corrupt.pdf' }).click();
    await page.getByRole('dialog', { name: 'Delete document' }).getByRole('button', { name: 'Delete' }).click();
    await documentRow('corrupt.pdf').waitFor({ state: 'detached' });
    expect((await api('GET', `/api/knowledge-bases/${baseId}/documents`)).map((d: any) => d.name)).toEqual(['clinic-faq.md']);
  });

  it('adds a URL re-fetched on a schedule', async () => {
    await page.getByRole('button', { name: 'Add a URL' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a URL' });
    await dialog.getByRole('textbox', { name: 'URL' }).fill(`${siteUrl}/delivery`);
    await dialog.getByRole('textbox', { name: 'Name' }).fill('delivery page');
    await dialog.getByRole('textbox', { name: 'Refresh every (hours)' }).fill('24');
    await dialog.getByRole('button', { name: 'Add' }).click();
    const row = documentRow('delivery page');
    await row.getByTestId('document-status').filter({ hasText: /^ready$/ }).waitFor({ timeout: 30_000 });
    await row.getByText('html, refreshed every 24 h').waitFor();
    const doc = (await api('GET', `/api/knowledge-bases/${baseId}/documents`)).find((d: any) => d.name === 'delivery page');
    expect(doc).toMatchObject({ source: 'url', url: `${siteUrl}/delivery`, kind: 'html', refresh_hours: 24, status: 'ready' });
  });

  it('answers a question in the search tester with the passage that answers it first, scored', async () => {
    await page.getByRole('textbox', { name: 'Question' }).fill('How much is a blood test?');
    await page.getByRole('button', { name: 'Search' }).click();
    const first = page.getByRole('list', { name: 'Passages' }).getByTestId('search-passage').first();
    await first.waitFor();
    const answer = (await api('POST', `/api/knowledge-bases/${baseId}/search`, { query: 'How much is a blood test?', top_k: 5 })).passages;
    const expected = answer[0];
    expect(expected).toMatchObject({ document: 'clinic-faq.md', heading: 'Sunrise Clinic FAQ > Prices' });
    // The tester shows the API's passages, in its order.
    const shown = await page.getByTestId('search-passage').allTextContents();
    expect(shown).toHaveLength(answer.length);
    answer.forEach((p: any, i: number) => expect(shown[i]).toContain(`${i + 1}${p.document}${p.heading}score ${p.score.toFixed(3)}`));
    expect(await first.textContent()).toContain('Blood test');
    await first.getByText('clinic-faq.md', { exact: true }).waitFor();
    await first.getByText('Sunrise Clinic FAQ > Prices', { exact: true }).waitFor();
    await first.getByText(`score ${expected.score.toFixed(3)}`, { exact: true }).waitFor();
    expect(expected.score).toBeGreaterThan(0);
    await page.getByRole('status').filter({ hasText: /\d+ passages? in [\d.]+ ms/ }).waitFor();
    await screenshot(page, 'knowledge-base');

    // A question nothing answers says so.
    await page.getByRole('textbox', { name: 'Question' }).fill('zebra xylophone quantum');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No passage matches').waitFor();
  });

  it('attaches the knowledge base to an agent in the agent form, in tool mode', async () => {
    const agent = await api('POST', '/api/agents', { name: 'clinic-desk', prompt: 'You answer questions about the clinic.' });
    expect(agent.knowledge_base_ids).toEqual([]);
    await page.goto(`${h.api.url}/agents/${agent.id}`);
    await page.getByRole('group', { name: 'Knowledge', exact: true }).waitFor();
    await page.getByRole('combobox', { name: 'Knowledge bases' }).click();
    await page.getByRole('option', { name: 'clinic', exact: true }).click();
    await page.keyboard.press('Escape');
    await page.getByText('Tool: the LLM searches').click();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('v2', { exact: true }).waitFor();
    const saved = await api('GET', `/api/agents/${agent.id}`);
    expect(saved).toMatchObject({ knowledge_base_ids: [baseId], knowledge_mode: 'tool' });

    // Kept across a reload: the form shows what the agent has.
    await page.reload();
    await page.getByRole('group', { name: 'Knowledge', exact: true }).getByText('clinic', { exact: true }).waitFor();
    expect(await page.getByRole('radio', { name: 'Tool: the LLM searches' }).isChecked()).toBe(true);
  });

  it('gives a flow node knowledge bases of its own', async () => {
    const agent = await api('POST', '/api/agents', { name: 'clinic-flow', prompt: 'You route callers.' });
    await api('POST', `/api/agents/${agent.id}/nodes`, { node_key: 'prices', is_initial: true, task_messages: [{ role: 'system', content: 'Answer price questions.' }] });
    await page.goto(`${h.api.url}/agents/${agent.id}/flow`);
    await page.locator('.react-flow__node[data-id="prices"]').click();
    const editor = page.getByRole('form', { name: 'Node prices' });
    await editor.getByRole('combobox', { name: 'Knowledge bases' }).click();
    await page.getByRole('option', { name: 'clinic', exact: true }).click();
    await page.keyboard.press('Escape');
    await editor.getByText('Tool: the LLM searches').click();
    await editor.getByRole('button', { name: 'Save node' }).click();
    await page.getByText('Node prices saved').waitFor();
    const node = (await api('GET', `/api/agents/${agent.id}/flow`)).nodes.find((n: any) => n.node_key === 'prices');
    expect(node).toMatchObject({ knowledge_base_ids: [baseId], knowledge_mode: 'tool' });
  });

  it("lets a member search an administrator's base but not change it, saying so", async () => {
    await api('POST', '/api/users', { email: 'member@example.com', password: 'member-password', role: 'member' });
    const member = await openDashboard(browser, h.api.url, { email: 'member@example.com', password: 'member-password' });
    try {
      await member.page.goto(`${h.api.url}/knowledge-bases/${baseId}`);
      await member.page.getByRole('textbox', { name: 'Question' }).fill('Where do patients park?');
      await member.page.getByRole('button', { name: 'Search' }).click();
      await member.page.getByTestId('search-passage').first().getByText('Sunrise Clinic FAQ > Parking', { exact: true }).waitFor();
      await member.page.getByRole('button', { name: 'Delete clinic-faq.md' }).click();
      await member.page.getByRole('dialog', { name: 'Delete document' }).getByRole('button', { name: 'Delete' }).click();
      await member.page.getByRole('alert').filter({ hasText: 'Not allowed' }).waitFor();
      expect((await api('GET', `/api/knowledge-bases/${baseId}/documents`)).map((d: any) => d.name)).toContain('clinic-faq.md');
      expect(member.pageErrors).toEqual([]);
    } finally {
      await member.page.context().close();
    }
  });

  it('deletes the knowledge base from the list, and the agents lose it', async () => {
    await page.getByRole('link', { name: 'Knowledge bases' }).click();
    const row = page.getByRole('table', { name: 'Knowledge bases' }).getByRole('row').filter({ hasText: 'clinic' });
    await row.getByRole('cell', { name: '2', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Delete clinic' }).click();
    await page.getByRole('dialog', { name: 'Delete knowledge base' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No knowledge bases yet').waitFor();
    expect(await api('GET', '/api/knowledge-bases')).toEqual([]);
    const agent = (await api('GET', '/api/agents')).find((a: any) => a.name === 'clinic-desk');
    expect((await api('GET', `/api/agents/${agent.id}`)).knowledge_base_ids).toEqual([]);
  });
});
