/**
 * Transfer to a human in the dashboard, in a real headless Chromium against the real platform
 * (API over a socket, PostgreSQL): the agent form's transfer destinations with the API's
 * validation at the row's inputs, kept across a reload; the flow editor's transfer pre-action and
 * the API refusing a node that names a destination the agent does not have; the calls list's
 * end-reason filter.
 */
import type { Browser, Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../support/harness';
import { ensureDashboardBuilt, launchChromium, openDashboard, pick, screenshot } from './support/chromium';

let h: Harness;
let browser: Browser;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  ensureDashboardBuilt();
  h = await startHarness();
  browser = await launchChromium();
  ({ page, pageErrors } = await openDashboard(browser, h.api.url, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await h?.stop();
});

afterEach(() => expect(pageErrors).toEqual([]));

// A destination's transfer settings as the API fills them in: a cold transfer.
const COLD = { mode: 'cold', summary_prompt: null, hold_audio: 'tone', max_wait_secs: 30 };

const field = (row: number, what: string) => page.getByRole('textbox', { name: `Destination ${row} ${what}`, exact: true });

async function fillDestination(row: number, values: Record<string, string>) {
  for (const [what, value] of Object.entries(values)) await field(row, what).fill(value);
}

describe('transfer to a human in the dashboard', () => {
  it('edits an agent’s transfer destinations, with the API’s validation at the inputs, and keeps them across a reload', async () => {
    await page.goto(`${h.api.url}/agents/new`);
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('front-desk');
    await page.getByRole('textbox', { name: 'Prompt' }).fill('You are the front desk. Transfer callers who ask for a person.');
    const section = page.getByRole('group', { name: 'Transfer destinations' });
    await section.getByRole('button', { name: 'Add destination' }).click();
    await fillDestination(1, { name: 'billing', 'phone number': '4155550123', description: 'Invoices, refunds and payments', message: 'Connecting you to billing now.' });
    await section.getByRole('button', { name: 'Add destination' }).click();
    // Both a number and a SIP address: the API wants exactly one.
    await fillDestination(2, { name: 'sales', 'phone number': '+14155550199', 'SIP URI': 'sip:sales@pbx.example.com', description: 'New plans and upgrades' });
    await page.getByRole('button', { name: 'Create agent' }).click();

    await page.getByText('transfer_destinations.0.phone_number: must be an E.164 number such as +14155550100').waitFor();
    expect(await field(1, 'phone number').getAttribute('aria-invalid')).toBe('true');
    expect(await field(2, 'phone number').getAttribute('aria-invalid')).toBe('true');
    await page.getByText('transfer_destinations.1.phone_number: give exactly one of phone_number and sip_uri').waitFor();

    await field(1, 'phone number').fill('+14155550123');
    await field(2, 'phone number').fill('');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByText('Agent front-desk saved').waitFor();
    const agents = (await h.request('GET', '/api/agents')).body as Array<{ id: string; name: string; transfer_destinations: unknown }>;
    const saved = agents.find((a) => a.name === 'front-desk')!;
    expect(saved.transfer_destinations).toEqual([
      { name: 'billing', phone_number: '+14155550123', sip_uri: null, description: 'Invoices, refunds and payments', message: 'Connecting you to billing now.', ...COLD },
      { name: 'sales', phone_number: null, sip_uri: 'sip:sales@pbx.example.com', description: 'New plans and upgrades', message: '', ...COLD },
    ]);

    await page.goto(`${h.api.url}/agents/${saved.id}`);
    await field(2, 'SIP URI').waitFor();
    expect(await field(1, 'name').inputValue()).toBe('billing');
    expect(await field(1, 'phone number').inputValue()).toBe('+14155550123');
    expect(await field(1, 'message').inputValue()).toBe('Connecting you to billing now.');
    expect(await field(2, 'SIP URI').inputValue()).toBe('sip:sales@pbx.example.com');
    await page.getByRole('group', { name: 'Transfer destinations' }).scrollIntoViewIfNeeded();
    await screenshot(page, 'agent-transfer-destinations');

    // Removing one and saving sends the shorter list.
    await page.getByRole('button', { name: 'Remove destination 2' }).click();
    await page.getByRole('button', { name: /^Save/ }).click();
    await page.getByText('Agent front-desk saved').last().waitFor();
    await page.reload();
    await field(1, 'name').waitFor();
    expect(await field(2, 'name').count()).toBe(0);
    const after = (await h.request('GET', `/api/agents/${saved.id}`)).body;
    expect(after.transfer_destinations.map((d: { name: string }) => d.name)).toEqual(['billing']);

    // Warm: the briefing's settings appear with the mode and are saved with it.
    expect(await field(1, 'summary prompt').count()).toBe(0);
    await page.getByRole('group', { name: 'Destination 1' }).getByText('Warm: brief them first').click();
    await field(1, 'summary prompt').fill('the invoice number and the amount');
    await page.getByRole('button', { name: /^Save/ }).click();
    await page.getByText('Agent front-desk saved').last().waitFor();
    const warm = (await h.request('GET', `/api/agents/${saved.id}`)).body.transfer_destinations[0];
    expect(warm).toMatchObject({ name: 'billing', mode: 'warm', summary_prompt: 'the invoice number and the amount', hold_audio: 'tone', max_wait_secs: 30 });
  });

  it('adds a transfer pre-action to a flow node from the agent’s destinations', async () => {
    const agent = ((await h.request('GET', '/api/agents')).body as Array<{ id: string; name: string }>).find((a) => a.name === 'front-desk')!;
    await page.goto(`${h.api.url}/agents/${agent.id}/flow`);
    await page.getByRole('button', { name: 'Add node' }).click();
    await page.getByRole('textbox', { name: 'Node key' }).fill('handover');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByTestId('flow-node-handover').click();
    await pick(page, 'Add a transfer pre-action', 'billing');
    expect(JSON.parse(await page.getByRole('textbox', { name: 'Pre-actions' }).inputValue())).toEqual([{ type: 'transfer_call', destination: 'billing' }]);
    await page.getByRole('button', { name: 'Save node' }).click();
    await page.getByText('Node handover saved').waitFor();
    const node = (await h.request('GET', `/api/agents/${agent.id}/nodes/handover`)).body;
    expect(node.pre_actions).toEqual([{ type: 'transfer_call', destination: 'billing' }]);

    // A destination the agent does not have: the API refuses the node, the editor says why.
    await page.getByRole('textbox', { name: 'Pre-actions' }).fill('[{"type":"transfer_call","destination":"sales"}]');
    await page.getByRole('button', { name: 'Save node' }).click();
    await page.getByText('pre_actions.0.destination: unknown transfer destination "sales" (the agent has: billing)').first().waitFor();
    expect((await h.request('GET', `/api/agents/${agent.id}/nodes/handover`)).body.pre_actions).toEqual([{ type: 'transfer_call', destination: 'billing' }]);
  });

  it('filters the calls list by end reason, transferred among them', async () => {
    await page.getByRole('link', { name: 'Calls' }).click();
    await pick(page, 'End reason', 'transferred');
    await page.waitForURL(/end_reason=transferred/);
    await page.getByText('No calls match.').waitFor();
  });
});
