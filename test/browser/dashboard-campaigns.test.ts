/**
 * Campaigns in the dashboard, in a real headless Chromium against the real platform: a campaign
 * created from a CSV file through the column-mapping step (one bad row, named with its line), the
 * list, the campaign's page following its calls live while the campaign workflow dials them on a
 * real Temporal worker through the Twilio fake, pause and resume (checked through the API too),
 * and the do-not-call page.
 */
import type { Browser, Page } from 'playwright-core';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { createAgent, eventually } from '../support/fixtures';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../support/harness';
import { hangUpAnsweredAfter, startMediaStandIn, STAND_IN_ENV, type MediaStandIn } from '../support/media-stand-in';
import { defaultProviderEnv, FakePool } from '../support/speech-vendors';
import { configureTwilio } from '../support/telephony';
import { ensureDashboardBuilt, launchChromium, openDashboard, pick, screenshot } from './support/chromium';

const ACCOUNT_SID = `AC${'0d'.repeat(16)}`;
const AUTH_TOKEN = 'campaign-dashboard-auth-token-0123456789';
const ANSWER = ['+14155551001', '+14155551002', '+14155551003'];
const NO_ANSWER = '+14155552001';

// `cell` and `zone` are names the API would not take as the phone and the time zone by
// themselves: the mapping step says which they are. Line 4 cannot be called.
const CSV = [
  'Name,Cell,Zone,Amount',
  `Asha,${ANSWER[0]},America/New_York,10`,
  `Bob,${ANSWER[1]},,20`,
  'Bad,not-a-number,,0',
  `Cy,${ANSWER[2]},Europe/Paris,30`,
  `Dee,${NO_ANSWER},,40`,
  '',
].join('\n');

let h: Harness;
let twilio: FakeTwilio;
let gateway: MediaStandIn;
const speechFakes = new FakePool();
let hangups: NodeJS.Timeout;
let browser: Browser;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  ensureDashboardBuilt();
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, ringMs: 150 });
  gateway = await startMediaStandIn();
  h = await startHarness({
    env: { ...(await defaultProviderEnv(speechFakes)), ...STAND_IN_ENV, TWILIO_API_BASE_URL: twilio.apiBaseUrl, GATEWAY_PUBLIC_URL: gateway.url, CAMPAIGN_POLL_MS: '200' },
    worker: true,
  });
  await createAgent(h.db, h.box, { name: 'reminder-bot' });
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: '+15005550006' });
  twilio.setOutcome('no-answer', NO_ANSWER);
  // Each callee who answers talks for two seconds: long enough to watch the page count them.
  hangups = hangUpAnsweredAfter(gateway, 2000);
  browser = await launchChromium();
  ({ page, pageErrors } = await openDashboard(browser, h.api.url, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }, { timeoutMs: 15_000 }));
}, 180_000);

afterAll(async () => {
  clearInterval(hangups);
  await browser?.close();
  await h?.stop();
  await twilio?.stop();
  await gateway?.stop();
  await speechFakes.stopAll();
});

afterEach(() => expect(pageErrors).toEqual([]));

const figure = (label: string) => page.getByRole('list', { name: 'Progress' }).getByRole('listitem', { name: label, exact: true }).locator('p').last();
const apiStatus = async (id: string) => (await h.request('GET', `/api/campaigns/${id}`)).body.status;

describe('campaigns in the dashboard', () => {
  it('creates a campaign from a CSV with a column mapping, names the rejected row by its line, follows its calls, pauses and resumes it', async () => {
    await page.getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('heading', { name: 'Campaigns' }).waitFor();
    await page.getByRole('button', { name: 'New campaign' }).click();
    const form = page.getByRole('dialog', { name: 'New campaign' });
    await form.getByRole('textbox', { name: 'Name' }).fill('December reminders');
    await pick(page, 'Agent', 'reminder-bot');
    await form.getByRole('combobox', { name: 'Time zone', exact: true }).fill('Asia/Kolk');
    await page.getByRole('option', { name: 'Asia/Kolkata', exact: true }).click();

    // The file, then the mapping: nothing is guessed from these names, the user picks the columns.
    await form.locator('input[type="file"]').setInputFiles({ name: 'december.csv', mimeType: 'text/csv', buffer: Buffer.from(CSV) });
    await form.getByText('december.csv: 5 rows').waitFor();
    await form.getByText('Choose the column that holds the phone numbers.').waitFor();
    await pick(page, 'Phone column', 'cell');
    await pick(page, 'Time-zone column', 'zone');
    const params = form.getByRole('group', { name: 'Call parameters' });
    expect(await params.textContent()).toBe('Call parameters:nameamount');
    const preview = form.getByRole('table', { name: 'Contacts preview' });
    await preview.getByRole('row', { name: `2 ${ANSWER[0]} America/New_York name=Asha, amount=10` }).waitFor();
    await preview.getByRole('row', { name: /^3 .* campaign's name=Bob, amount=20$/ }).waitFor();
    await screenshot(page, 'campaign-mapping');

    // Any time of day (no calling window), two attempts an hour apart for the unanswered.
    await form.getByRole('button', { name: 'Remove window 1' }).click();
    await form.getByRole('textbox', { name: 'Calls at once' }).fill('1');
    await form.getByRole('textbox', { name: 'Attempts per contact' }).fill('2');
    await form.getByRole('button', { name: 'Create campaign' }).click();

    const done = page.getByRole('dialog', { name: 'Campaign created' });
    const result = done.getByRole('region', { name: 'Upload result' });
    await result.getByText('4 contacts to call').waitFor();
    await result.getByText('1 rejected').waitFor();
    const rejected = result.getByRole('table', { name: 'Rejected rows' });
    expect(await rejected.getByRole('row').allInnerTexts()).toEqual(['Line\tPhone\tWhy', '4\tnot-a-number\tnot a valid phone number (a national number needs default_country)']);
    await screenshot(page, 'campaign-created');
    await done.getByRole('button', { name: 'Close' }).click();

    // The list, then the campaign's page.
    const list = page.getByRole('table', { name: 'Campaigns' });
    const row = list.getByRole('row', { name: /December reminders/ });
    await row.getByText('reminder-bot').waitFor();
    await row.getByRole('link', { name: 'December reminders' }).click();
    await page.getByRole('heading', { name: /December reminders/ }).waitFor();
    const id = page.url().split('/campaigns/')[1]!;
    const campaign = (await h.request('GET', `/api/campaigns/${id}`)).body;
    expect(campaign).toMatchObject({ name: 'December reminders', agent_name: 'reminder-bot', timezone: 'Asia/Kolkata', schedule: { windows: [] }, pacing: { max_concurrent: 1 }, retry: { max_attempts: 2 } });
    // The mapping reached the API: the chosen columns as phone and zone, the others as parameters.
    const contacts = (await h.request('GET', `/api/campaigns/${id}/contacts?page_size=10`)).body.contacts;
    expect(contacts.map((c: { line: number; phone_number: string; timezone: string; custom_parameters: object }) => [c.line, c.phone_number, c.timezone, c.custom_parameters])).toEqual([
      [2, ANSWER[0], 'America/New_York', { name: 'Asha', amount: '10' }],
      [3, ANSWER[1], 'Asia/Kolkata', { name: 'Bob', amount: '20' }],
      [4, 'not-a-number', 'Asia/Kolkata', {}],
      [5, ANSWER[2], 'Europe/Paris', { name: 'Cy', amount: '30' }],
      [6, NO_ANSWER, 'Asia/Kolkata', { name: 'Dee', amount: '40' }],
    ]);

    // Live progress: the page counts the calls as they end, without a reload.
    const seen = new Set<string>();
    await eventually(async () => {
      seen.add((await figure('Completed').textContent()) ?? '');
      return (await figure('Completed').textContent()) === '3' && (await figure('Dialled').textContent()) === '4' && (await figure('Remaining').textContent()) === '1';
    }, 60_000, 50);
    expect([...seen].some((v) => Number(v) < 3)).toBe(true);
    expect(await figure('Failed').textContent()).toBe('0');
    expect(await figure('Invalid').textContent()).toBe('1');
    const table = page.getByRole('table', { name: 'Contacts' });
    const dee = table.getByRole('row', { name: new RegExp(NO_ANSWER.replace('+', '\\+')) });
    await dee.getByText('retry_wait').waitFor();
    await dee.getByRole('link', { name: '#1 no_answer' }).waitFor();
    await table.getByRole('row', { name: /not-a-number/ }).getByText('not a valid phone number (a national number needs default_country)').waitFor();
    await screenshot(page, 'campaign-page');

    // Only the actions its status allows; pause and resume, with the API agreeing.
    const status = page.getByLabel('Campaign status');
    expect(await status.textContent()).toBe('running');
    expect(await page.getByRole('button', { name: 'Resume' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByLabel('Campaign status').getByText('paused').waitFor();
    expect(await apiStatus(id)).toBe('paused');
    expect(await page.getByRole('button', { name: 'Pause' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByLabel('Campaign status').getByText('running').waitFor();
    expect(await apiStatus(id)).toBe('running');
    await page.getByRole('button', { name: 'Pause' }).waitFor();
    await page.getByRole('button', { name: 'Cancel campaign' }).waitFor();

    // Contacts added while it runs: the new number is called, the known one merged.
    await page.getByRole('button', { name: 'Add contacts' }).click();
    const add = page.getByRole('dialog', { name: 'Add contacts' });
    await add.locator('input[type="file"]').setInputFiles({ name: 'more.csv', mimeType: 'text/csv', buffer: Buffer.from(`mobile,name\n+14155551004,Eve\n${ANSWER[0]},Asha again\n`) });
    await add.getByText('more.csv: 2 rows').waitFor();
    await add.getByRole('button', { name: 'Add contacts' }).click();
    const added = add.getByRole('region', { name: 'Upload result' });
    await added.getByText('1 contacts to call').waitFor();
    await added.getByText('1 duplicates merged').waitFor();
    await add.getByRole('button', { name: 'Close' }).click();
    await eventually(async () => (await figure('Completed').textContent()) === '4' && (await figure('Dialled').textContent()) === '5', 30_000);

    // The export: one row per contact with its state and calls.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const exported = await new Promise<string>((resolve, reject) => {
      void download.createReadStream().then((stream) => {
        let text = '';
        stream.on('data', (d: Buffer) => (text += d.toString()));
        stream.on('end', () => resolve(text));
        stream.on('error', reject);
      }, reject);
    });
    const lines = exported.trim().split('\n');
    expect(lines[0]).toMatch(/^phone_number,state,attempts,last_outcome,/);
    expect(lines).toHaveLength(7);
    expect(lines.find((l) => l.startsWith('+14155551004'))).toMatch(/^\+14155551004,done,1,answered,/);
  });

  it('adds a number to the do-not-call list and removes it', async () => {
    await page.goto(`${h.api.url}/campaigns`);
    await page.getByRole('link', { name: 'Do-not-call list' }).click();
    await page.getByRole('heading', { name: 'Do-not-call list' }).waitFor();
    await page.getByRole('button', { name: 'Add numbers' }).click();
    const form = page.getByRole('dialog', { name: 'Add to the do-not-call list' });
    await form.getByRole('textbox', { name: 'Phone numbers' }).fill('+14155559001\n98765 43210');
    await form.getByRole('textbox', { name: 'Country of national numbers' }).fill('IN');
    await form.getByRole('textbox', { name: 'Note' }).fill('asked not to be called');
    await form.getByRole('button', { name: 'Add' }).click();
    const list = page.getByRole('table', { name: 'Do-not-call numbers' });
    await list.getByRole('row', { name: /\+919876543210 yours asked not to be called/ }).waitFor();
    await list.getByRole('row', { name: /\+14155559001/ }).waitFor();
    expect((await h.request('GET', '/api/do-not-call')).body.entries.map((e: { phone_number: string }) => e.phone_number)).toEqual(['+14155559001', '+919876543210']);

    await list.getByRole('button', { name: 'Remove +14155559001' }).click();
    await page.getByRole('dialog', { name: 'Remove number' }).getByRole('button', { name: 'Remove' }).click();
    await list.getByRole('row', { name: /\+14155559001/ }).waitFor({ state: 'detached' });
    expect((await h.request('GET', '/api/do-not-call')).body.total).toBe(1);
  });
});
