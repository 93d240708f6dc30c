/**
 * Post-call analysis in the dashboard, in a real headless Chromium against the real platform (API
 * over a socket, PostgreSQL, Temporal worker, the OpenAI-compatible fake): the agent form's
 * Analysis section with the API's validation at the fields, a call page showing the summary,
 * fields and verdict and re-running the analysis, and the calls list's outcome column and filter.
 */
import type { Browser, Page } from 'playwright-core';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../support/harness';
import { ensureDashboardBuilt, launchChromium, openDashboard, pick, screenshot } from './support/chromium';

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

const BOOKED = { summary: 'The caller booked a checkup on December 3rd.', fields: { booked: true, date: '2026-12-03', service: 'checkup' }, success: true, success_reason: 'An appointment was booked.' };

/** A finished text call of `agent`, its analysis answered with `answer`. */
async function analysedCall(agent: string, answer: unknown): Promise<string> {
  llm.setResponder(() => ({ content: 'You are booked. Goodbye!' }));
  llm.enqueueStructured({ object: answer });
  const started = await h.request('POST', '/api/calls/test', { body: { agent_name: agent } });
  const callId = started.body.call_id as string;
  await h.request('POST', `/api/calls/${callId}/test/messages`, { body: { text: 'A checkup on the third, please.' } });
  await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
  return callId;
}

describe('post-call analysis in the dashboard', () => {
  it('sets up an agent’s analysis in its form, with the API’s validation at the fields', async () => {
    await page.goto(`${h.api.url}/agents/new`);
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('dental-desk');
    await page.getByRole('textbox', { name: 'Prompt' }).fill('You book dental appointments.');
    await page.getByRole('textbox', { name: 'Greeting' }).fill('Hello, dental clinic.');
    await page.getByRole('switch', { name: /Analyse every call/ }).check();
    await page.getByRole('textbox', { name: 'Success criteria' }).fill('The caller ends the call with an appointment booked.');
    const fields = page.getByRole('group', { name: 'Outcome fields' });
    for (const [i, name, type, description] of [
      [1, 'booked', 'boolean', 'an appointment was booked'],
      [2, 'date', 'date', 'the day of the appointment'],
      [3, 'service', 'enum', 'what it is for'],
    ] as const) {
      await fields.getByRole('button', { name: 'Add field' }).click();
      await page.getByRole('textbox', { name: `Field ${i} name` }).fill(name);
      await pick(page, `Field ${i} type`, type);
      await page.getByRole('textbox', { name: `Field ${i} description` }).fill(description);
    }
    await page.getByRole('checkbox', { name: 'Field 1 required' }).check();
    // An enum field without values: the API refuses it, and the form says why, at the fields.
    await page.getByRole('button', { name: 'Create agent' }).click();
    await fields.getByRole('alert').filter({ hasText: 'analysis.fields.service.enum: an enum field needs its values' }).waitFor();

    await page.getByRole('textbox', { name: 'Field 3 values' }).fill('checkup, cleaning');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByText('Agent dental-desk saved').waitFor();
    const agents = (await h.request('GET', '/api/agents')).body as Array<{ name: string; analysis: any }>;
    const saved = agents.find((a) => a.name === 'dental-desk')!;
    expect(saved.analysis).toEqual({
      enabled: true,
      summary_prompt: null,
      success_criteria: 'The caller ends the call with an appointment booked.',
      llm_provider: null,
      llm_model: null,
      fields: {
        booked: { type: 'boolean', description: 'an appointment was booked' },
        date: { type: 'date', description: 'the day of the appointment' },
        service: { type: 'enum', description: 'what it is for', enum: ['checkup', 'cleaning'] },
      },
      required: ['booked'],
    });
    // Reloaded, the form shows the setting as saved.
    await page.reload();
    await page.getByRole('textbox', { name: 'Field 3 values' }).waitFor();
    expect(await page.getByRole('textbox', { name: 'Field 3 values' }).inputValue()).toBe('checkup, cleaning');
    expect(await page.getByRole('checkbox', { name: 'Field 1 required' }).isChecked()).toBe(true);
  });

  it('shows a call’s summary, fields and verdict, and re-runs the analysis from the call page', async () => {
    const callId = await analysedCall('dental-desk', BOOKED);
    await page.goto(`${h.api.url}/calls/${callId}`);
    const panel = page.getByRole('region', { name: 'Call analysis' });
    await panel.getByLabel('Analysis done').waitFor();
    await panel.getByLabel('Call successful').waitFor();
    await panel.getByText('An appointment was booked.').waitFor();
    expect(await panel.getByTestId('analysis-summary').textContent()).toBe(BOOKED.summary);
    const rows = panel.getByRole('table', { name: 'Analysis fields' }).getByRole('row');
    expect(await rows.allTextContents()).toEqual(['bookedyes', 'date2026-12-03', 'servicecheckup']);
    await screenshot(page, 'call-analysis');

    // The re-run's answer differs: the page follows it until it is there.
    llm.enqueueStructured({ object: { ...BOOKED, fields: { booked: false, date: null, service: null }, success: false, success_reason: 'Nothing was booked.' } });
    await panel.getByRole('button', { name: 'Re-run analysis' }).click();
    await panel.getByLabel('Call not successful').waitFor({ timeout: 20_000 });
    await panel.getByText('Nothing was booked.').waitFor();
    expect(await rows.allTextContents()).toEqual(['bookedno', 'date—', 'service—']);
  });

  it('lists calls with their outcome and filters them by it', async () => {
    const good = await analysedCall('dental-desk', BOOKED);
    await page.getByRole('link', { name: 'Calls' }).click();
    const table = page.getByRole('table', { name: 'Calls' });
    const row = (id: string) => table.getByRole('row').filter({ has: page.locator(`a[href="/calls/${id}"]`) });
    await row(good).getByText('successful', { exact: true }).waitFor({ timeout: 20_000 });
    expect(await table.getByRole('row').filter({ hasText: 'not successful' }).count()).toBe(1);

    await pick(page, 'Outcome', 'successful');
    await page.waitForURL(/success=true/);
    await table.getByRole('row').filter({ hasText: 'not successful' }).waitFor({ state: 'detached' });
    expect(await table.getByRole('row').count()).toBe(2); // header + the successful call
    await row(good).waitFor();

    await pick(page, 'Outcome', 'not successful');
    await page.waitForURL(/success=false/);
    await row(good).waitFor({ state: 'detached' });
    expect(await table.getByRole('row').count()).toBe(2);
  });
});
