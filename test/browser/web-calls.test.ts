/**
 * Talking to an agent from the browser (docs/web-calls.md), in a real headless Chromium whose
 * microphone is an eSpeak NG recording (fake-microphone.ts), against the real platform: the API,
 * the worker, the media gateway, and the vendor fakes for STT, LLM and TTS.
 *
 * - The dashboard's Talk button: the greeting is heard (an analyser on the page's output), the
 *   question is answered, a barge-in clears playback, hanging up ends the call `completed` with
 *   a transcript and a recording. The page measures the turn latency as the caller hears it.
 *   Turn runs are on, so the live transcript shows turns before the call records them.
 * - The widget on a page of another origin: the allowed origin talks, and the dashboard's call
 *   page follows that call live, a run's turn included; a foreign origin and a
 *   revoked key are refused; the publishable key cannot read /api/agents.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { eventually } from '../support/fixtures';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../support/harness';
import { DESKTOP, ensureDashboardBuilt, launchChromium, logIn, screenshot, watchPageErrors } from './support/chromium';
import { fakeMicrophone } from './support/fake-microphone';
import { startVoiceFakes } from './support/voice-call';

const AGENT = 'clinic-web';
const GREETING = 'Hello! You have reached the clinic.';
const QUESTION = 'I would like to book an appointment for tomorrow.';
// Long enough to still be playing when the caller interrupts it.
const ANSWER =
  'Tomorrow works well. We have openings at nine, at half past ten, at noon and at four in the afternoon. The doctor asks new patients to come ten minutes early to fill in a short form, and to bring any letters from other clinics.';
const INTERRUPTION = 'Stop, wait a second.';
const SHORT_ANSWER = 'Certainly, tomorrow is free.';
const AFTER_INTERRUPTION = 'Of course, take your time.';
const MS_PER_CHAR = 60; // the TTS fake's audio per character
// The microphone's timeline: quiet through the greeting, the question, quiet while the answer
// starts, then the interruption a few seconds into the answer.
const QUIET_FOR_GREETING_SECS = 6;
const ANSWER_PLAYING_SECS = 4;

let h: Harness;
let llm: FakeOpenAI;
let voice: Awaited<ReturnType<typeof startVoiceFakes>>;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  ensureDashboardBuilt();
  llm = await startFakeOpenAI();
  voice = await startVoiceFakes();
  // Turn runs always on, as on a busy gateway: the live transcript must not wait for them.
  h = await startHarness({ env: { ...voice.env, OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test', GATEWAY_TURN_RUN_LOAD: '0' }, worker: true });
  await voice.attach(h);
  const agent = await h.request('POST', '/api/agents', {
    body: { name: AGENT, prompt: 'You book clinic appointments.', greeting: GREETING, pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 } },
  });
  expect(agent.status).toBe(201);
  const mic = fakeMicrophone('question-and-interruption', [
    { silenceSecs: QUIET_FOR_GREETING_SECS },
    { clip: 'hello-appointment.wav' },
    { silenceSecs: ANSWER_PLAYING_SECS },
    { clip: 'stop-wait.wav' },
    { silenceSecs: 20 },
  ]);
  browser = await launchChromium(mic.args);
  context = await browser.newContext({ viewport: DESKTOP });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  pageErrors = watchPageErrors(page);
  await logIn(page, h.api.url, ADMIN_EMAIL, ADMIN_PASSWORD);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await voice?.stop();
  await h?.stop();
  await llm?.stop();
});

afterEach(() => expect(pageErrors).toEqual([]));

const numberAttr = async (locator: Locator, name: string) => Number((await locator.getAttribute(name)) ?? 0);
const events = async (callId: string) =>
  (await h.request('GET', `/api/calls/${callId}/events`)).body as Array<{ event_type: string; data: { text?: string; interrupted?: boolean } }>;

describe('the Talk button', () => {
  it('talks to the agent through the microphone: greeting, answer, barge-in, hang-up', async () => {
    voice.deepgram.script([QUESTION, INTERRUPTION]);
    llm.enqueue({ content: ANSWER }, { content: AFTER_INTERRUPTION });
    const agent = (await h.request('GET', '/api/agents')).body.find((a: { name: string }) => a.name === AGENT);
    await page.goto(`${h.api.url}/agents/${agent.id}`);
    await page.getByRole('button', { name: 'Talk', exact: true }).click();
    const drawer = page.getByRole('dialog', { name: `Talk to ${AGENT}` });
    await drawer.getByRole('button', { name: 'Start talking' }).click();
    const panel = drawer.getByTestId('talk-panel');
    await eventually(async () => (await panel.getAttribute('data-phase')) === 'live', 15_000);
    const callId = (await eventually(async () => (await h.request('GET', `/api/calls?agent_name=${AGENT}`)).body.calls[0]?.id as string | undefined)) as string;

    // The greeting, heard: the analyser on the page's output saw most of its length.
    await eventually(async () => (await numberAttr(panel, 'data-heard-ms')) >= (GREETING.length * MS_PER_CHAR) * 0.7, 15_000);
    const transcript = drawer.getByRole('list', { name: 'Live transcript' });
    await transcript.getByText(GREETING).waitFor();

    // The question, answered: the answer plays, and the page measured the turn's latency.
    await transcript.getByText(QUESTION).waitFor({ timeout: 20_000 });
    // Turn runs are on (GATEWAY_TURN_RUN_LOAD=0): the call records the turn when the run reports,
    // seconds later; the live transcript showed it already (the stream's pending turns).
    expect((await events(callId)).some((e) => e.event_type === 'user_spoke' && e.data.text === QUESTION)).toBe(false);
    await eventually(async () => (await panel.getAttribute('data-turn-latency-ms')) !== '', 15_000);
    const latencyMs = await numberAttr(panel, 'data-turn-latency-ms');
    expect(latencyMs).toBeGreaterThan(0);
    expect(latencyMs).toBeLessThan(3000);
    await drawer.getByTestId('speaker').filter({ hasText: 'Agent speaking' }).waitFor();
    await drawer.getByTestId('turn-latency').waitFor();
    await screenshot(page, 'web-talk');

    // The interruption: the gateway's clear empties the page's playback; the answer is cut short.
    await eventually(async () => (await numberAttr(panel, 'data-clears')) >= 1, 20_000);
    const spoken = await eventually(async () => {
      const answer = (await events(callId)).find((e) => e.event_type === 'agent_spoke' && e.data.interrupted);
      return answer && answer.data.text;
    }, 20_000);
    expect(ANSWER.startsWith(spoken)).toBe(true);
    expect(spoken.length).toBeLessThan(ANSWER.length);
    await transcript.getByText(AFTER_INTERRUPTION).waitFor({ timeout: 20_000 });
    const heardMs = await numberAttr(panel, 'data-heard-ms');
    // Heard: the greeting and part of the answer — far less than all of it.
    expect(heardMs).toBeLessThan((GREETING.length + ANSWER.length + AFTER_INTERRUPTION.length) * MS_PER_CHAR);

    await drawer.getByRole('button', { name: 'Hang up' }).click();
    await eventually(async () => (await panel.getAttribute('data-phase')) === 'ended');
    const call = await eventually(async () => {
      const c = (await h.request('GET', `/api/calls/${callId}`)).body;
      return c.status === 'completed' && c.recording_path && c;
    }, 20_000);
    expect(call).toMatchObject({ channel: 'web', direction: 'inbound', provider: null, end_reason: 'user_ended' });
    const said = call.transcript.map((t: { text: string }) => t.text);
    expect(said).toEqual(expect.arrayContaining([GREETING, QUESTION, INTERRUPTION, AFTER_INTERRUPTION]));
    const recording = await h.request('GET', `/api/recordings/${callId}`);
    expect(recording.status).toBe(200);

    await drawer.getByRole('link', { name: 'Open call page' }).click();
    await page.waitForURL(new RegExp(`/calls/${callId}$`));
    await page.getByRole('heading', { name: 'Web call' }).waitFor();
    await page.getByLabel('Status completed').waitFor();
    // The figure docs/performance.md reports, beside the gateway's own for the same turn.
    const e2e = (await events(callId)).find((e) => e.event_type === 'ttfb_metric' && (e.data as { processor?: string }).processor === 'e2e')!.data as { ms: number; after_vad_stop_ms: number };
    // eslint-disable-next-line no-console
    console.log(
      `web call turn latency: ${latencyMs} ms in the page (end of speech → first agent audio played); the gateway's for the same turn: ${e2e.ms} ms (${e2e.after_vad_stop_ms} ms after its VAD stop)`,
    );
  }, 120_000);
});

describe('the widget on another site', () => {
  let site: http.Server;
  let siteUrl: string;
  let foreignUrl: string;
  let pk: string;
  let keyId: string;

  beforeAll(async () => {
    site = http.createServer((req, res) => {
      const key = new URL(req.url ?? '/', 'http://site').searchParams.get('key') ?? '';
      res.writeHead(200, { 'content-type': 'text/html' }).end(
        `<!doctype html><html><head><title>Clinic</title></head><body><h1>Green Valley Clinic</h1><p>Questions? Talk to our assistant.</p><script src="${h.api.url}/widget.js" data-agent="${AGENT}" data-key="${key}"></script></body></html>`,
      );
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const port = (site.address() as AddressInfo).port;
    siteUrl = `http://127.0.0.1:${port}`;
    foreignUrl = `http://localhost:${port}`; // the same page from another origin
    const agent = (await h.request('GET', '/api/agents')).body.find((a: { name: string }) => a.name === AGENT);
    const created = await h.request('POST', `/api/agents/${agent.id}/publishable-keys`, { body: { name: 'Clinic website', allowed_origins: [siteUrl] } });
    expect(created.status).toBe(201);
    pk = created.body.key;
    keyId = created.body.id;
    // A fresh microphone timeline for this context: it starts again at each capture.
  });

  afterAll(async () => {
    await new Promise((resolve) => site.close(resolve));
  });

  const widget = (p: Page) => p.locator('[data-vap-widget]');

  it('talks from the allowed origin', async () => {
    voice.deepgram.script([QUESTION, INTERRUPTION]);
    llm.enqueue({ content: SHORT_ANSWER }, { content: AFTER_INTERRUPTION });
    const p = await context.newPage();
    const errors = watchPageErrors(p);
    await p.goto(`${siteUrl}/?key=${pk}`);
    await p.getByRole('button', { name: 'Talk to us' }).waitFor();
    await screenshot(p, 'web-widget');
    await p.getByRole('button', { name: 'Talk to us' }).click();
    await eventually(async () => (await widget(p).getAttribute('data-state')) === 'live', 15_000);
    await eventually(async () => (await numberAttr(widget(p), 'data-heard-ms')) >= GREETING.length * MS_PER_CHAR * 0.7, 15_000);
    const callId = (await widget(p).getAttribute('data-call-id'))!;

    // The clinic follows the call on its call page: the question (turn runs on) shows there,
    // answered, before the call has recorded it.
    await page.goto(`${h.api.url}/calls/${callId}`);
    const lines = page.getByRole('list', { name: 'Transcript' }).getByTestId('transcript-line');
    await lines.filter({ hasText: SHORT_ANSWER }).waitFor({ timeout: 20_000 });
    await lines.filter({ hasText: QUESTION }).waitFor();
    expect((await events(callId)).some((e) => e.event_type === 'user_spoke' && e.data.text === QUESTION)).toBe(false);

    await p.getByRole('button', { name: 'Hang up' }).click();
    const call = await eventually(async () => {
      const c = (await h.request('GET', `/api/calls/${callId}`)).body;
      return c.status === 'completed' && c;
    }, 20_000);
    expect(call).toMatchObject({ channel: 'web', agent_name: AGENT, metadata: { origin: siteUrl, publishable_key_id: keyId } });
    expect(errors).toEqual([]);
    await p.close();
  }, 60_000);

  it('is refused from a foreign origin, with a revoked key, and the key cannot read the API', async () => {
    const p = await context.newPage();
    await p.goto(`${foreignUrl}/?key=${pk}`);
    await p.getByRole('button', { name: 'Talk to us' }).click();
    await eventually(async () => (await widget(p).getAttribute('data-state')) === 'error');
    await p.getByRole('status').filter({ hasText: 'Could not start the call' }).waitFor();
    // The same refusals as the API gives them.
    const start = (origin: string, key = pk) =>
      fetch(`${h.api.url}/api/calls/web`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', origin }, body: JSON.stringify({ agent_name: AGENT }) });
    expect((await start(foreignUrl)).status).toBe(403);
    const preflight = (origin: string) => fetch(`${h.api.url}/api/calls/web`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
    expect((await preflight(foreignUrl)).status).toBe(403);
    const allowed = await preflight(siteUrl);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(siteUrl);

    // From the allowed page, the key reads nothing else: the browser is refused, and so is a script.
    await p.goto(`${siteUrl}/?key=${pk}`);
    const fromPage = await p.evaluate(
      async ([api, key]) => fetch(`${api}/api/agents`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status, (e: Error) => `blocked: ${e.name}`),
      [h.api.url, pk],
    );
    expect(fromPage).toBe('blocked: TypeError');
    const agents = await fetch(`${h.api.url}/api/agents`, { headers: { authorization: `Bearer ${pk}` } });
    expect(agents.status).toBe(401);

    const agent = (await h.request('GET', '/api/agents')).body.find((a: { name: string }) => a.name === AGENT);
    expect((await h.request('DELETE', `/api/agents/${agent.id}/publishable-keys/${keyId}`)).status).toBe(200);
    expect((await start(siteUrl)).status).toBe(401);
    await p.reload();
    await p.getByRole('button', { name: 'Talk to us' }).click();
    await eventually(async () => (await widget(p).getAttribute('data-state')) === 'error');
    await p.close();
  }, 60_000);
});
