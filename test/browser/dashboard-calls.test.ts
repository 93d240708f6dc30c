/**
 * Calls in the dashboard, in a real headless Chromium against the real platform: a text test call
 * from the chat panel followed live on its call page, and a finished phone call (run offline
 * through the Twilio fake, the media gateway and the vendor fakes) played back with its transcript.
 */
import type { Browser, Page } from 'playwright-core';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { eventually } from '../support/fixtures';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../support/harness';
import { PHONE, ensureDashboardBuilt, launchChromium, logIn, openDashboard, screenshot, watchPageErrors } from './support/chromium';
import { runInboundVoiceCall, startVoiceFakes } from './support/voice-call';

let h: Harness;
let llm: FakeOpenAI;
let voice: Awaited<ReturnType<typeof startVoiceFakes>>;
let browser: Browser;
let page: Page;
let pageErrors: string[];
let voiceCall: Awaited<ReturnType<typeof runInboundVoiceCall>>;

beforeAll(async () => {
  ensureDashboardBuilt();
  llm = await startFakeOpenAI();
  voice = await startVoiceFakes();
  h = await startHarness({ env: { ...voice.env, OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test' }, worker: true });
  await voice.attach(h);
  voiceCall = await runInboundVoiceCall(h, voice, llm, 'clinic-voice');
  browser = await launchChromium();
  ({ page, pageErrors } = await openDashboard(browser, h.api.url, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await voice?.stop();
  await h?.stop();
  await llm?.stop();
});

afterEach(() => expect(pageErrors).toEqual([]));

const transcript = (p: Page) => p.getByRole('list', { name: 'Transcript' }).getByTestId('transcript-line');

describe('calls in the dashboard', () => {
  it('runs a text test call from the chat panel and follows it live on its call page', async () => {
    const agent = await h.request('POST', '/api/agents', { body: { name: 'shop-bot', prompt: 'You answer questions about the shop.', greeting: 'Hi {{first_name}}, the shop here.' } });
    expect(agent.status).toBe(201);
    await page.goto(`${h.api.url}/agents/${agent.body.id}`);
    await page.getByRole('button', { name: 'Test chat' }).click();
    const drawer = page.getByRole('dialog', { name: 'Text test call' });
    await drawer.getByRole('button', { name: 'Add parameter' }).click();
    await drawer.getByRole('textbox', { name: 'Parameter 1' }).fill('first_name');
    await drawer.getByRole('textbox', { name: 'Value 1' }).fill('Asha');
    await drawer.getByRole('button', { name: 'Start test call' }).click();
    const log = drawer.getByRole('log', { name: 'Test call conversation' });
    await log.getByText('Hi Asha, the shop here.').waitFor();

    llm.enqueue({ content: 'We are open from nine to five.' });
    await drawer.getByRole('textbox', { name: 'Your message' }).fill('When are you open?');
    await drawer.getByRole('button', { name: 'Send' }).click();
    await log.getByText('We are open from nine to five.').waitFor();

    await drawer.getByRole('link', { name: 'Open call page' }).click();
    await page.getByRole('heading', { name: /Call with/ }).waitFor();
    await page.getByText('live', { exact: true }).waitFor();
    await expectTexts(transcript(page), ['Hi Asha, the shop here.', 'When are you open?', 'We are open from nine to five.']);
    const timeline = page.getByTestId('call-event');
    await timeline.filter({ hasText: 'call_started' }).first().waitFor();
    await timeline.filter({ hasText: 'user_spoke' }).first().waitFor();

    // A turn taken elsewhere (here: the API) appears without reloading: the page follows the stream.
    const callId = page.url().split('/').pop()!;
    llm.enqueue({ content: 'Yes, on Saturdays too.' });
    expect((await h.request('POST', `/api/calls/${callId}/test/messages`, { body: { text: 'Also on Saturdays?' } })).status).toBe(200);
    await transcript(page).filter({ hasText: 'Yes, on Saturdays too.' }).waitFor();
    expect(await transcript(page).count()).toBe(5);

    await page.getByRole('button', { name: 'End call' }).click();
    await page.getByLabel('Status completed').waitFor();
    await timeline.filter({ hasText: 'call_ended' }).waitFor();
    expect(await page.getByText('live', { exact: true }).count()).toBe(0);
  });

  it('lists calls with filters and opens a finished phone call whose recording plays along the transcript', async () => {
    await page.getByRole('link', { name: 'Calls' }).click();
    const table = page.getByRole('table', { name: 'Calls' });
    await table.getByRole('row').filter({ hasText: 'shop-bot' }).waitFor();
    await page.getByRole('combobox', { name: 'Agent', exact: true }).click();
    await page.getByRole('option', { name: 'clinic-voice' }).click();
    await page.waitForURL(/agent=clinic-voice/);
    await table.getByRole('row').filter({ hasText: 'shop-bot' }).waitFor({ state: 'detached' });
    expect(await table.getByRole('row').count()).toBe(2); // header + the phone call
    await table.getByRole('row').filter({ hasText: 'clinic-voice' }).getByRole('link').click();

    await page.waitForURL(new RegExp(`/calls/${voiceCall.callId}$`));
    await page.getByLabel('Status completed').waitFor();
    await expectTexts(transcript(page), [voiceCall.greeting, 'I would like to book an appointment for tomorrow.', voiceCall.answer]);
    // Latency measured during the call, per processor.
    await page.getByRole('table', { name: 'Latency' }).getByText('e2e').waitFor();

    // The recording, fetched with the session's token, starts where the clicked line was said.
    const audio = page.getByLabel('Call recording');
    await audio.waitFor();
    await eventually(async () => (await audio.evaluate((a: { duration: number; paused: boolean; currentTime: number; pause(): void }) => a.duration)) > 2);
    const startedAt = await audio.evaluate((a: { currentTime: number }) => a.currentTime);
    expect(startedAt).toBe(0);
    await transcript(page).nth(1).getByRole('button').click();
    // Playing from where the caller's line begins (after the greeting), and that line is marked.
    await eventually(() => audio.evaluate((a: { duration: number; paused: boolean; currentTime: number; pause(): void }) => !a.paused && a.currentTime > 1.5));
    await page.locator('[aria-current="true"]').filter({ hasText: 'I would like to book an appointment for tomorrow.' }).waitFor();
    await audio.evaluate((a: { duration: number; paused: boolean; currentTime: number; pause(): void }) => a.pause());
    await screenshot(page, 'call-page');
  });

  it('places an outbound phone call and follows it live until it is ended from the page', async () => {
    await page.getByRole('link', { name: 'Calls' }).click();
    await page.getByRole('button', { name: 'Place a call' }).click();
    const dialog = page.getByRole('dialog', { name: 'Place a call' });
    await dialog.getByRole('combobox', { name: 'Agent' }).click();
    await page.getByRole('option', { name: 'clinic-voice', exact: true }).click();
    await dialog.getByRole('textbox', { name: 'Number to call' }).fill('+14155550199');
    await dialog.getByRole('button', { name: 'Add parameter' }).click();
    await dialog.getByRole('textbox', { name: 'Parameter 1' }).fill('first_name');
    await dialog.getByRole('textbox', { name: 'Value 1' }).fill('Ravi');
    const answered = voice.twilio.nextCaller(20_000);
    await dialog.getByRole('button', { name: 'Call', exact: true }).click();

    // The call page opens at once and follows the call: answered, then the greeting as it is said.
    await page.getByRole('heading', { name: 'Call with +14155550199' }).waitFor();
    await answered;
    await page.getByLabel('Status in_progress').waitFor({ timeout: 20_000 });
    await transcript(page).filter({ hasText: voiceCall.greeting }).waitFor({ timeout: 20_000 });
    await page.getByText('live', { exact: true }).waitFor();

    await page.getByRole('button', { name: 'End call' }).click();
    await page.getByLabel('Status completed').waitFor({ timeout: 20_000 });
    const callId = page.url().split('/').pop()!;
    expect((await h.request('GET', `/api/calls/${callId}`)).body).toMatchObject({ direction: 'outbound', status: 'completed', context: { first_name: 'Ravi' } });
  });

  it('works on a phone-width screen', async () => {
    const phone = await (await browser.newContext({ viewport: PHONE })).newPage();
    const errors = watchPageErrors(phone);
    await logIn(phone, h.api.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    await phone.getByRole('button', { name: 'Toggle navigation' }).click();
    await phone.getByRole('link', { name: 'Calls' }).click();
    await phone.getByRole('table', { name: 'Calls' }).waitFor();
    await phone.goto(`${h.api.url}/calls/${voiceCall.callId}`);
    await transcript(phone).first().waitFor();
    // Nothing wider than the screen: tables scroll inside their own container.
    expect(await phone.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await screenshot(phone, 'call-page-phone');
    expect(errors).toEqual([]);
  });
});

async function expectTexts(lines: ReturnType<typeof transcript>, texts: string[]) {
  await lines.nth(texts.length - 1).waitFor();
  const shown = await lines.allTextContents();
  texts.forEach((text, i) => expect(shown[i]).toContain(text));
}

