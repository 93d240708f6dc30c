/**
 * Campaign events on the agent's webhook (docs/campaigns.md, "Webhooks"): a campaign through the
 * Twilio fake whose calls fail trips its circuit breaker (campaign_paused with the reason), is
 * resumed (campaign_resumed) and completes (campaign_completed); each delivery is signed with the
 * agent's secret (Standard Webhooks), has a webhook-id of its own and arrives once. A change whose
 * webhook was not sent (the API died after writing it) goes out with the campaign's next step.
 */
import { Webhook } from 'standardwebhooks';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver';
import { eventually } from '../support/fixtures';
import { configureTwilio } from '../support/telephony';
import { startHarness, type Harness } from '../support/harness';
import { defaultProviderEnv, FakePool } from '../support/speech-vendors';
import { startMediaStandIn, type MediaStandIn, STAND_IN_ENV, hangUpAnsweredAfter } from '../support/media-stand-in';
import { signalCampaign, transition } from '../../src/campaigns/campaign-control';

const ACCOUNT_SID = `AC${'0d'.repeat(16)}`;
const AUTH_TOKEN = 'campaign-webhooks-auth-token-0123456789';
const OUR_NUMBER = '+15005550006';

let h: Harness;
let twilio: FakeTwilio;
let gateway: MediaStandIn;
let hooks: WebhookReceiver;
let secret: string;
const speechFakes = new FakePool();
let hangups: NodeJS.Timeout;

beforeAll(async () => {
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, ringMs: 150 });
  gateway = await startMediaStandIn();
  hooks = await startWebhookReceiver();
  const speechEnv = await defaultProviderEnv(speechFakes);
  h = await startHarness({
    env: { ...speechEnv, ...STAND_IN_ENV, TWILIO_API_BASE_URL: twilio.apiBaseUrl, GATEWAY_PUBLIC_URL: gateway.url, CAMPAIGN_POLL_MS: '200' },
    worker: true,
  });
  const agent = await h.request('POST', '/api/agents', {
    body: {
      name: 'collections-bot',
      prompt: 'You remind people of a payment.',
      webhook_url: `${hooks.url}/events`,
      webhook_events: ['campaign_started', 'campaign_paused', 'campaign_resumed', 'campaign_completed', 'campaign_cancelled', 'call_ended'],
    },
  });
  expect(agent.status).toBe(201);
  secret = agent.body.webhook_secret;
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, { twilio_max_concurrent: 20 });
  hangups = hangUpAnsweredAfter(gateway, 300);
});
afterAll(async () => {
  clearInterval(hangups);
  await h?.stop();
  await twilio?.stop();
  await gateway?.stop();
  await hooks?.stop();
  await speechFakes.stopAll();
});

const campaignEvents = (id: string) =>
  hooks.requests.filter((r) => (r.body as { campaign_id?: string }).campaign_id === id) as Array<(typeof hooks.requests)[number] & { body: any }>;

it('sends started, paused (circuit breaker, with the reason), resumed and completed, signed, once each', async () => {
  const failing = Array.from({ length: 5 }, (_, i) => `+1415559${String(1000 + i)}`);
  for (const n of failing) twilio.setOutcome('failed', n);
  const res = await h.request('POST', '/api/campaigns', {
    body: {
      name: 'Payment reminders',
      agent_name: 'collections-bot',
      timezone: 'Asia/Kolkata',
      contacts: failing.map((phone_number) => ({ phone_number })),
      pacing: { max_concurrent: 1, calls_per_minute: 600 },
      stop_rule: { failure_rate: 0.5, window_secs: 120, min_sample: 2 },
    },
  });
  expect(res.status).toBe(201);
  const id = res.body.id;
  await eventually(async () => campaignEvents(id).some((r) => r.body.type === 'campaign_paused'), 30_000);
  for (const n of failing) twilio.setOutcome('answer', n);
  expect((await h.request('POST', `/api/campaigns/${id}/resume`)).status).toBe(200);
  await eventually(async () => campaignEvents(id).some((r) => r.body.type === 'campaign_completed'), 30_000);
  // Nothing more comes: each change was sent once.
  await new Promise((r) => setTimeout(r, 1000));

  const events = campaignEvents(id);
  expect(events.map((r) => r.body.type)).toEqual(['campaign_started', 'campaign_paused', 'campaign_resumed', 'campaign_completed']);
  const [started, paused, resumed, completed] = events.map((r) => r.body);
  expect(started).toMatchObject({ campaign_id: id, campaign_name: 'Payment reminders', agent_name: 'collections-bot', data: { status: 'running', reason: null } });
  expect(paused.data).toMatchObject({ status: 'paused', reason: expect.stringMatching(/^circuit breaker: 2 of the last 2 attempts failed/) });
  expect(paused.data.progress).toMatchObject({ contacts: 5, by_state: expect.objectContaining({ failed: expect.any(Number) }) });
  expect(resumed.data).toMatchObject({ status: 'running', reason: null });
  expect(completed.data).toMatchObject({ status: 'completed', progress: { contacts: 5 } });
  expect(completed.data.progress.by_state.done + completed.data.progress.by_state.failed).toBe(5);
  for (const e of events) {
    expect(e.body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
    expect(() => new Webhook(secret).verify(e.raw, e.headers as Record<string, string>)).not.toThrow();
  }
  const ids = events.map((e) => e.headers['webhook-id']);
  expect(new Set(ids).size).toBe(4);
  expect(ids[0]).toMatch(new RegExp(`^msg_campaign_${id.replace(/-/g, '')}_\\d+$`));
  // The calls' own events still go to the same webhook (call_ended is subscribed too).
  expect(hooks.requests.some((r) => (r.body as { type?: string }).type === 'call_ended')).toBe(true);
}, 60_000);

it("sends a change the API wrote but did not send (it died in between) with the campaign's next step", async () => {
  const numbers = ['+14155590201', '+14155590202'];
  for (const n of numbers) twilio.setOutcome({ outcome: 'no-answer', ringMs: 800 }, n);
  const res = await h.request('POST', '/api/campaigns', {
    body: { name: 'Unsent pause', agent_name: 'collections-bot', timezone: 'Asia/Kolkata', contacts: numbers.map((phone_number) => ({ phone_number })), pacing: { max_concurrent: 1, calls_per_minute: 600 } },
  });
  expect(res.status).toBe(201);
  const id = res.body.id;
  await eventually(async () => campaignEvents(id).some((r) => r.body.type === 'campaign_started'), 15_000);
  // The API's own steps without its webhook: the row written, the workflow signalled.
  const row = (await h.db.models.Campaign.findByPk(id))!.get({ plain: true });
  expect(await transition(h.db, row, 'pause')).toBe(true);
  await signalCampaign(h.temporal, id);
  await eventually(async () => campaignEvents(id).some((r) => r.body.type === 'campaign_paused'), 15_000);
  expect((await h.request('POST', `/api/campaigns/${id}/cancel`)).status).toBe(200);
  await eventually(async () => campaignEvents(id).some((r) => r.body.type === 'campaign_cancelled'), 15_000);
  await new Promise((r) => setTimeout(r, 800));
  expect(campaignEvents(id).map((r) => r.body.type)).toEqual(['campaign_started', 'campaign_paused', 'campaign_cancelled']);
}, 45_000);

it('refuses an unknown event type in webhook_events, and lists the campaign ones in the OpenAPI document', async () => {
  const bad = await h.request('POST', '/api/agents', { body: { name: 'typo-bot', prompt: 'p', webhook_url: `${hooks.url}/x`, webhook_events: ['campaign_finished'] } });
  expect(bad.status).toBe(422);
  expect(bad.body.detail).toMatch(/^webhook_events\.0: /);
  const doc = (await h.request('GET', '/api/openapi.json', { token: null })).body;
  expect(doc.components.schemas.CampaignEventType.enum).toEqual(expect.arrayContaining(['campaign_started', 'campaign_paused', 'campaign_completed']));
  expect(doc.components.schemas.EventType.enum).toContain('call_ended');
});
