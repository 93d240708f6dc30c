/**
 * Voicemail in the dashboard, in a real headless Chromium against the real platform: the agent
 * form's Voicemail section saved through the API, and the page of an outbound call that met an
 * answering machine (run offline: Twilio fake with its AMD, the media gateway, speech fakes).
 */
import type { Browser, Page } from 'playwright-core';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { eventually } from '../support/fixtures';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../support/harness';
import { machineGreeting } from '../support/voicemail-audio';
import { ensureDashboardBuilt, launchChromium, openDashboard } from './support/chromium';
import { startVoiceFakes } from './support/voice-call';

let h: Harness;
let llm: FakeOpenAI;
let voice: Awaited<ReturnType<typeof startVoiceFakes>>;
let browser: Browser;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  ensureDashboardBuilt();
  llm = await startFakeOpenAI();
  voice = await startVoiceFakes();
  h = await startHarness({ env: { ...voice.env, OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test' }, worker: true });
  await voice.attach(h);
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

describe('voicemail in the dashboard', () => {
  it('sets an agent to leave a message on answering machines, showing the API’s rule next to the field', async () => {
    const agent = (await h.request('POST', '/api/agents', { body: { name: 'reminders', prompt: 'You remind patients.', greeting: 'Hi {{first_name}}.' } })).body;
    await page.goto(`${h.api.url}/agents/${agent.id}`);
    await page.getByRole('switch', { name: 'Detect answering machines' }).check({ force: true });
    await page.getByText('Leave a message after the beep').click();
    // No message yet: the API refuses, and the form shows it under the message.
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(/is required when action is leave_message/).waitFor();
    await page.getByRole('textbox', { name: 'Message' }).fill('Hi {{first_name}}, your appointment is tomorrow at nine.');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('v2', { exact: true }).waitFor();
    const saved = (await h.request('GET', `/api/agents/${agent.id}`)).body;
    expect(saved.voicemail).toEqual({ detect: true, action: 'leave_message', message: 'Hi {{first_name}}, your appointment is tomorrow at nine.' });

    // Off again: the API's voicemail becomes null.
    await page.getByRole('switch', { name: 'Detect answering machines' }).uncheck({ force: true });
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('v3', { exact: true }).waitFor();
    expect((await h.request('GET', `/api/agents/${agent.id}`)).body.voicemail).toBeNull();
  });

  it('shows who answered and the voicemail events on the page of a call an answering machine took', async () => {
    await h.request('POST', '/api/agents', { body: { name: 'reminders-hangup', prompt: 'You remind patients.', greeting: 'Hi {{first_name}}, the clinic here.', voicemail: { detect: true, action: 'hang_up' } } });
    voice.twilio.setOutcome({ outcome: 'answer', amd: { answeredBy: 'machine', decidedMs: 2000 } }, '+14155550391');
    const next = voice.twilio.nextCaller(20_000);
    const placed = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+14155550391', agent_name: 'reminders-hangup', custom_parameters: { first_name: 'Asha' } } });
    expect(placed.status).toBe(201);
    const caller = await next;
    void caller.say(machineGreeting());
    await eventually(async () => (await h.request('GET', `/api/calls/${placed.body.call_id}`)).body.end_reason === 'voicemail', 20_000, 100);

    await page.goto(`${h.api.url}/calls/${placed.body.call_id}`);
    await page.getByText('Answered by').waitFor();
    await page.getByText('machine', { exact: true }).waitFor();
    await page.getByText('voicemail', { exact: true }).first().waitFor();
    await page.getByTestId('call-event').filter({ hasText: 'voicemail_detected' }).getByText(/answering machine \(vendor: machine_start\) → hang up/).waitFor();
  }, 60_000);
});
