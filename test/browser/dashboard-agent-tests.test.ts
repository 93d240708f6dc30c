/**
 * The agent Tests page in a real headless Chromium against the real platform: a test created from
 * a finished call, a scripted test written in the form, "Run all" with live progress, the results
 * table, an attempt's transcript with its failed expectations highlighted, and the replay diff.
 */
import type { Browser, Page } from 'playwright-core';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver';
import { BOOKING_PROMPT, bookingAgentReply, createBookingAgent, WEEKENDS_ONLY } from '../support/booking-agent';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../support/harness';
import { ensureDashboardBuilt, launchChromium, openDashboard, screenshot } from './support/chromium';

let h: Harness;
let llm: FakeOpenAI;
let hooks: WebhookReceiver;
let browser: Browser;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  ensureDashboardBuilt();
  llm = await startFakeOpenAI();
  hooks = await startWebhookReceiver();
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test' }, worker: true });
  llm.setResponder((body) => ({ ...bookingAgentReply(body), delay_ms: 150 }));
  browser = await launchChromium();
  ({ page, pageErrors } = await openDashboard(browser, h.api.url, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }, { timeoutMs: 15_000 }));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await h?.stop();
  await llm?.stop();
  await hooks?.stop();
});

afterEach(() => expect(pageErrors).toEqual([]));

it('creates tests from a call and from the form, runs them all and shows what failed', async () => {
  const agent = await createBookingAgent(h, 'web-booker', `${hooks.url}/book`);
  // A real call to replay: book Friday, then goodbye.
  hooks.respond({ body: { confirmation: 'W-1' } }, { path: '/book' });
  const call = await h.request('POST', '/api/calls/test', { body: { agent_name: 'web-booker' } });
  for (const text of ['I want to book a table', 'Friday', 'bye']) await h.request('POST', `/api/calls/${call.body.call_id}/test/messages`, { body: { text } });
  await h.request('POST', '/api/calls/end', { body: { call_id: call.body.call_id } });

  // "Create test from this call" on the call page.
  await page.goto(`${h.api.url}/calls/${call.body.call_id}`);
  await page.getByRole('button', { name: 'Create test from this call' }).click();
  await page.waitForURL(`**/agents/${agent.agentId}/tests`);
  const tests = page.getByRole('table', { name: 'Tests' });
  await tests.getByRole('row', { name: /Replay of call/ }).waitFor();

  // A scripted test through the form.
  await page.getByRole('button', { name: 'New test' }).click();
  const form = page.getByRole('dialog', { name: 'New test' });
  await form.getByRole('textbox', { name: 'Name' }).fill('says goodbye');
  await form.getByText('Scripted caller').click();
  await form.getByRole('textbox', { name: 'Script' }).fill('hello\nbye');
  await form.getByRole('textbox', { name: 'Expectations (JSON)' }).fill('[{"type": "ended_by_agent"}, {"type": "said", "phrase": "see you"}]');
  await form.getByRole('button', { name: 'Create test' }).click();
  await tests.getByRole('row', { name: /says goodbye/ }).waitFor();

  // The prompt changes; "Run all" runs both tests twice, the progress bar follows the run.
  await h.request('PATCH', `/api/agents/${agent.agentId}`, { body: { prompt: `${BOOKING_PROMPT} ${WEEKENDS_ONLY}` } });
  await page.getByRole('textbox', { name: 'Repeat each test' }).fill('2');
  await page.getByRole('button', { name: 'Run all' }).click();
  await page.getByRole('progressbar', { name: 'Run progress' }).waitFor();
  await page.getByText('4 of 4 conversations done').waitFor({ timeout: 90_000 });
  expect(await page.getByLabel('Run completed').textContent()).toBe('failed');
  const results = page.getByRole('table', { name: 'Test results' });
  await results.getByRole('cell', { name: /says goodbye v\d+/ }).getByText('0% (0/2)').waitFor();
  await results.getByRole('cell', { name: /Replay of call .* v\d+/ }).getByText('0% (0/2)').waitFor();

  // The scripted test's attempt: transcript, the failed expectation highlighted.
  await results.getByRole('row', { name: /says goodbye/ }).click();
  await page.getByRole('button', { name: /Attempt 1/ }).first().click();
  const expectations = page.getByRole('list', { name: 'Expectations' }).first();
  await expectations.locator('[data-failed="true"]').filter({ hasText: 'the agent says "see you"' }).waitFor();
  expect(await expectations.locator('[data-failed="true"]').count()).toBe(1);
  await page.getByRole('list', { name: 'Attempt transcript' }).first().getByText('Goodbye!').waitFor();

  // The replay's diff: the Friday turn now answers differently, highlighted.
  await results.getByRole('row', { name: /Replay of call/ }).click();
  await page.getByRole('button', { name: /Attempt 1/ }).first().click();
  const diff = page.getByRole('table', { name: 'Replay diff' }).first();
  const friday = diff.getByRole('row', { name: /Friday/ });
  await friday.getByText('Sorry, we only take weekend bookings.').waitFor();
  expect(await friday.getAttribute('data-changed')).toBe('true');
  expect(await diff.locator('tr[data-changed="true"]').count()).toBe(2);
  await screenshot(page, 'agent-tests');
}, 180_000);
