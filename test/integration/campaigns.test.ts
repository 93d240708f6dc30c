/**
 * Campaigns end to end: the API over a socket creates the campaign, the campaign workflow on a
 * real Temporal worker decides and dials each attempt through the outbound path, the fake Twilio
 * plays each callee (answer, no answer, busy, failure) with signed callbacks, and PostgreSQL holds
 * contacts and attempts. The fake's dial log is the judge of who was called and how often.
 */
import { parse } from 'csv-parse/sync';
import { Op } from 'sequelize';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { createAgent, eventually } from '../support/fixtures';
import { configureTwilio } from '../support/telephony';
import { startHarness, type Harness } from '../support/harness';
import { defaultProviderEnv, FakePool } from '../support/speech-vendors';
import { startMediaStandIn, type MediaStandIn, STAND_IN_ENV, hangUpAnsweredAfter } from '../support/media-stand-in';
import { createSession } from '../support/users';
import { campaignTick } from '../../src/campaigns/tick';
import { loadTelephonySettings } from '../../src/providers/telephony/settings-store';
import { dialAttempt } from '../../src/campaigns/dial';
import { signalCampaign, startCampaignWorkflow, transition } from '../../src/campaigns/campaign-control';

const ACCOUNT_SID = `AC${'0c'.repeat(16)}`;
const AUTH_TOKEN = 'campaign-test-auth-token-0123456789';
const OUR_NUMBER = '+15005550006';

let h: Harness;
let twilio: FakeTwilio;
let gateway: MediaStandIn;
const speechFakes = new FakePool();
let hangups: NodeJS.Timeout;

beforeAll(async () => {
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, ringMs: 150 });
  gateway = await startMediaStandIn();
  const speechEnv = await defaultProviderEnv(speechFakes);
  h = await startHarness({
    env: { ...speechEnv, ...STAND_IN_ENV, TWILIO_API_BASE_URL: twilio.apiBaseUrl, GATEWAY_PUBLIC_URL: gateway.url, CAMPAIGN_POLL_MS: '200' },
    worker: true,
  });
  await createAgent(h.db, h.box, { name: 'reminder-bot' });
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, { twilio_max_concurrent: 20 });
  // Every callee who answers talks for ~300 ms, then hangs up.
  hangups = hangUpAnsweredAfter(gateway, 300);
});
afterAll(async () => {
  clearInterval(hangups);
  await h?.stop();
  await twilio?.stop();
  await gateway?.stop();
  await speechFakes.stopAll();
});

/** The call ids the fake Twilio was asked to dial (its Url names the call), with the number. */
const dialLog = () =>
  twilio.calls.filter((c) => c.direction !== 'inbound').map((c) => ({ to: c.to, callId: /answer\/([0-9a-f-]+)/.exec(String(c.params.Url ?? ''))?.[1] ?? '' }));

const create = (body: Record<string, unknown>, token?: string) =>
  h.request('POST', '/api/campaigns', { body: { agent_name: 'reminder-bot', timezone: 'Asia/Kolkata', ...body }, ...(token ? { token } : {}) });

const getCampaign = async (id: string) => (await h.request('GET', `/api/campaigns/${id}`)).body;
const waitForStatus = (id: string, status: string, timeoutMs = 30_000) =>
  eventually(async () => {
    const c = await getCampaign(id);
    return c.status === status && c;
  }, timeoutMs);

/** Samples how many of the campaign's calls are ringing or in progress at once. */
function sampleConcurrency(campaignId: string) {
  let max = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const n = await h.db.models.Call.count({ where: { status: { [Op.in]: ['ringing', 'in_progress'] }, metadata: { campaign_id: campaignId } } });
      max = Math.max(max, n);
      await new Promise((r) => setTimeout(r, 40));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return max;
    },
  };
}

describe('a campaign through the Twilio fake', () => {
  it('calls every contact within max_concurrent, retries no-answers, never dials DNC or invalid rows, and accounts for all', async () => {
    const answer = Array.from({ length: 14 }, (_, i) => `+1415555${String(1000 + i)}`);
    const noAnswer = ['+14155552001', '+14155552002', '+14155552003'];
    const busy = ['+14155553001', '+14155553002'];
    const dnc = '+14155554001';
    for (const n of noAnswer) twilio.setOutcome('no-answer', n);
    for (const n of busy) twilio.setOutcome('busy', n);
    expect((await h.request('POST', '/api/do-not-call', { body: { phone_numbers: [dnc] } })).body).toEqual({ added: 1, invalid: [] });

    const numbers = [...answer, ...noAnswer, ...busy, dnc];
    const csv = ['phone,name,amount', ...numbers.map((n, i) => `${n},Person ${i},${100 + i}`), 'not-a-number,Nobody,0', `${answer[0]},Again,1`].join('\n');
    const res = await create({
      name: 'December reminders',
      contacts_csv: csv,
      pacing: { max_concurrent: 3, calls_per_minute: 600 },
      retry: { max_attempts: 2, retry_on: ['no_answer'], min_interval_secs: 1 },
      stop_rule: { failure_rate: null },
    });
    expect(res.status).toBe(201);
    expect(res.body.upload).toEqual({
      added: 19,
      duplicates: 1,
      skipped_dnc: 1,
      invalid: [{ line: 22, phone: 'not-a-number', error: 'not a valid phone number (a national number needs default_country)' }],
      invalid_count: 1,
      missing_variables: [],
    });
    expect(res.body.status).toBe('running');
    const id = res.body.id;
    const sampler = sampleConcurrency(id);

    const done = await waitForStatus(id, 'completed', 45_000);
    const maxConcurrent = await sampler.stop();
    expect(maxConcurrent).toBeGreaterThan(1);
    expect(maxConcurrent).toBeLessThanOrEqual(3);
    expect(done.progress).toMatchObject({
      contacts: 21,
      by_state: { pending: 0, calling: 0, retry_wait: 0, done: 14, failed: 5, skipped_dnc: 1, invalid: 1 },
      attempts: 14 + 3 * 2 + 2,
      attempts_in_flight: 0,
      answered: 14,
    });

    // The dial log: every attempt dialled exactly once, the DNC and invalid rows never.
    const log = dialLog().filter((d) => numbers.includes(d.to));
    expect(log).toHaveLength(22);
    expect(new Set(log.map((d) => d.callId)).size).toBe(22);
    expect(log.some((d) => d.to === dnc)).toBe(false);
    for (const n of noAnswer) expect(log.filter((d) => d.to === n)).toHaveLength(2);
    for (const n of [...busy, ...answer]) expect(log.filter((d) => d.to === n)).toHaveLength(1);

    // Each contact lists its attempts' calls; each call carries the campaign and the contact.
    const page = await h.request('GET', `/api/campaigns/${id}/contacts?state=failed&page_size=10`);
    expect(page.status).toBe(200);
    expect(page.body.total).toBe(5);
    const retried = page.body.contacts.find((c: any) => c.phone_number === noAnswer[0]);
    expect(retried).toMatchObject({ attempts: 2, last_outcome: 'no_answer', custom_parameters: { name: 'Person 14', amount: '114' } });
    expect(retried.calls.map((c: any) => c.outcome)).toEqual(['no_answer', 'no_answer']);
    expect(page.body.contacts.find((c: any) => c.phone_number === busy[0]).last_outcome).toBe('busy');
    const call = (await h.request('GET', `/api/calls/${retried.calls[1].call_id}`)).body;
    expect(call).toMatchObject({ phone_number: noAnswer[0], status: 'no_answer', direction: 'outbound' });
    const row = (await h.db.models.Call.findByPk(retried.calls[1].call_id))!.get({ plain: true });
    expect(row.metadata).toMatchObject({ campaign_id: id, contact_id: retried.id, attempt: 2, from_number: OUR_NUMBER });
    expect(row.context).toEqual({ name: 'Person 14', amount: '114' });

    const invalid = await h.request('GET', `/api/campaigns/${id}/contacts?state=invalid`);
    expect(invalid.body.contacts).toEqual([expect.objectContaining({ line: 22, phone_number: 'not-a-number', error: 'not a valid phone number (a national number needs default_country)', calls: [] })]);

    // The results as CSV: every contact, the list's own columns after the contact's.
    const exported = await h.request('GET', `/api/campaigns/${id}/contacts.csv`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toMatch(/^text\/csv/);
    const rows = parse(exported.body as string, { columns: true }) as Array<Record<string, string>>;
    expect(rows).toHaveLength(21);
    expect(Object.keys(rows[0]!)).toEqual(['phone_number', 'state', 'attempts', 'last_outcome', 'last_call_id', 'call_ids', 'timezone', 'line', 'error', 'amount', 'name']);
    expect(rows.find((r) => r.phone_number === noAnswer[0])).toMatchObject({ state: 'failed', attempts: '2', last_outcome: 'no_answer', call_ids: retried.calls.map((c: any) => c.call_id).join(' '), name: 'Person 14', amount: '114' });
    expect(rows.filter((r) => r.last_outcome === 'answered')).toHaveLength(14);
    expect(rows.find((r) => r.state === 'invalid')).toMatchObject({ phone_number: 'not-a-number', line: '22' });
    expect((await h.request('GET', '/api/campaigns/00000000-0000-4000-8000-000000000000/contacts.csv')).status).toBe(404);
  }, 60_000);

  it('pauses when calls fail (circuit breaker) with the reason, and resume continues', async () => {
    const failing = Array.from({ length: 6 }, (_, i) => `+1415556${String(1000 + i)}`);
    for (const n of failing) twilio.setOutcome('failed', n);
    const res = await create({
      name: 'Failing',
      contacts: failing.map((phone_number) => ({ phone_number })),
      pacing: { max_concurrent: 1, calls_per_minute: 600 },
      stop_rule: { failure_rate: 0.5, window_secs: 120, min_sample: 2 },
    });
    expect(res.status).toBe(201);
    const paused = await waitForStatus(res.body.id, 'paused');
    expect(paused.status_reason).toMatch(/^circuit breaker: 2 of the last 2 attempts failed/);
    await new Promise((r) => setTimeout(r, 800));
    const dialledWhilePaused = dialLog().filter((d) => failing.includes(d.to)).length;
    expect(dialledWhilePaused).toBeLessThanOrEqual(3);
    expect((await getCampaign(res.body.id)).progress.by_state.pending).toBeGreaterThanOrEqual(3);

    for (const n of failing) twilio.setOutcome('answer', n);
    const resumed = await h.request('POST', `/api/campaigns/${res.body.id}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.status_reason).toBeNull();
    const done = await waitForStatus(res.body.id, 'completed');
    expect(done.progress.by_state.done + done.progress.by_state.failed).toBe(6);
    expect(done.progress.by_state.done).toBeGreaterThanOrEqual(3);
    expect(new Set(dialLog().filter((d) => failing.includes(d.to)).map((d) => d.to)).size).toBe(6);
  }, 40_000);

  it('pause holds new dials, resume continues, cancel ends it; a member acts only on their own', async () => {
    const numbers = Array.from({ length: 4 }, (_, i) => `+1415557${String(1000 + i)}`);
    for (const n of numbers) twilio.setOutcome({ outcome: 'no-answer', ringMs: 600 }, n);
    const member = await createSession(h, 'member');
    const res = await create({ name: 'Slow', contacts: numbers.map((phone) => ({ phone })), pacing: { max_concurrent: 1, calls_per_minute: 600 } }, member.token);
    expect(res.status).toBe(201);
    const id = res.body.id;
    const other = await createSession(h, 'member');
    expect((await h.request('POST', `/api/campaigns/${id}/pause`, { token: other.token })).status).toBe(403);
    expect((await h.request('GET', '/api/campaigns', { token: other.token })).body.campaigns).toEqual([]);

    expect((await h.request('POST', `/api/campaigns/${id}/pause`, { token: member.token })).body.status).toBe('paused');
    expect((await h.request('POST', `/api/campaigns/${id}/pause`, { token: member.token })).status).toBe(409);
    // The call in flight ends; nothing new starts.
    await eventually(async () => (await getCampaign(id)).progress.attempts_in_flight === 0);
    const held = dialLog().filter((d) => numbers.includes(d.to)).length;
    await new Promise((r) => setTimeout(r, 1000));
    expect(dialLog().filter((d) => numbers.includes(d.to)).length).toBe(held);
    expect(held).toBeLessThan(4);

    expect((await h.request('POST', `/api/campaigns/${id}/resume`, { token: member.token })).body.status).toBe('running');
    await eventually(async () => dialLog().filter((d) => numbers.includes(d.to)).length > held);
    const cancelled = await h.request('POST', `/api/campaigns/${id}/cancel`, { token: member.token });
    expect(cancelled.body.status).toBe('cancelled');
    const result = await h.temporal.workflow.getHandle(res.body.workflow_id).result();
    expect(result).toBe('cancelled');
    const after = dialLog().filter((d) => numbers.includes(d.to)).length;
    await new Promise((r) => setTimeout(r, 500));
    expect(dialLog().filter((d) => numbers.includes(d.to)).length).toBe(after);
    expect((await h.request('POST', `/api/campaigns/${id}/resume`, { token: member.token })).status).toBe(409);
  }, 40_000);

  it('adds contacts to a running campaign, merging numbers it already has', async () => {
    const res = await create({ name: 'Growing', contacts: [{ phone: '+14155558001' }], pacing: { max_concurrent: 2, calls_per_minute: 600 } });
    const added = await h.request('POST', `/api/campaigns/${res.body.id}/contacts`, {
      body: { contacts_csv: 'phone_number,timezone\n+14155558001,\n+14155558002,America/New_York\n' },
    });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ added: 1, duplicates: 1, invalid_count: 0 });
    const done = await waitForStatus(res.body.id, 'completed');
    expect(done.progress.by_state.done).toBe(2);
    const ny = (await h.request('GET', `/api/campaigns/${res.body.id}/contacts`)).body.contacts.find((c: any) => c.phone_number === '+14155558002');
    expect(ny.timezone).toBe('America/New_York');
  }, 30_000);
});

describe('calling hours, at chosen instants (the step the workflow takes, given its clock)', () => {
  const schedule = { windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'], start: '10:00', end: '19:00' }] };
  async function runnable(contacts: Array<Record<string, string>>) {
    const res = await create({ name: 'Hours', contacts, schedule, start: false });
    expect(res.status).toBe(201);
    // A draft has no workflow: the test takes its steps, with its own clock.
    await h.db.models.Campaign.update({ status: 'running' }, { where: { id: res.body.id } });
    return res.body.id as string;
  }
  const step = async (id: string, iso: string) => campaignTick(h.db, await loadTelephonySettings(h.db, h.box), id, new Date(iso), 200);
  const phonesOf = async (attemptIds: string[]) =>
    (await h.db.models.CampaignContact.findAll({ where: { last_call_id: attemptIds } })).map((c) => c.get('phone_number')).sort();

  it('calls only contacts whose local hours are open; the others when theirs open', async () => {
    const id = await runnable([
      { phone: '+919876500001' },
      { phone: '+919876500002' },
      { phone: '+14155590001', timezone: 'America/New_York' },
      { phone: '+14155590002', timezone: 'America/New_York' },
    ]);
    // Monday 10:30 in Kolkata, midnight in New York.
    const first = await step(id, '2026-12-07T05:00:00Z');
    expect(await phonesOf(first.dials)).toEqual(['+919876500001', '+919876500002']);
    // Monday 19:30 in Kolkata, 09:00 in New York: nothing new (the two decided stay due to dial).
    const closed = await step(id, '2026-12-07T14:00:00Z');
    expect(closed.dials.sort()).toEqual([...first.dials].sort());
    // 10:30 in New York.
    const ny = await step(id, '2026-12-07T15:30:00Z');
    expect(await phonesOf(ny.dials.filter((d) => !first.dials.includes(d)))).toEqual(['+14155590001', '+14155590002']);
  });

  it('keeps reserved_inbound lines free: an inbound call arriving takes the last outbound room', async () => {
    const res = await create({ name: 'Reserved', contacts: ['+14155595001', '+14155595002', '+14155595003'].map((phone) => ({ phone })), pacing: { max_concurrent: 5, calls_per_minute: 600, reserved_inbound: 17 }, start: false });
    await h.db.models.Campaign.update({ status: 'running' }, { where: { id: res.body.id } });
    // twilio_max_concurrent is 20: 20 − 17 reserved = 3 lines; an inbound call is on one of them.
    const inbound = await h.db.models.Call.create({
      agent_name: 'reminder-bot',
      phone_number: '+14155595999',
      direction: 'inbound',
      status: 'in_progress',
      provider: 'twilio',
      workflow_id: `call-reserved-${res.body.id}`,
    });
    try {
      const first = await step(res.body.id, '2026-12-07T05:00:00Z');
      expect(first.dials).toHaveLength(2);
    } finally {
      await inbound.destroy();
    }
  });

  it('sleeps until the next opening when no zone is open', async () => {
    const id = await runnable([{ phone: '+14155591001', timezone: 'America/New_York' }]);
    const result = await step(id, '2026-12-07T05:00:00Z');
    expect(result.dials).toEqual([]);
    expect(result.nextDueAt).toBe('2026-12-07T15:00:00.000Z'); // 10:00 in New York
    expect(result.sleepMs).toBe(3600_000); // a durable timer, in pieces of at most an hour
    const sunday = await step(id, '2026-12-06T16:00:00Z'); // Sunday 11:00 there
    expect(sunday.nextDueAt).toBe('2026-12-07T15:00:00.000Z');
    const soon = await step(id, '2026-12-07T14:50:00Z');
    expect(soon.sleepMs).toBe(10 * 60_000);
  });
});

describe('exactly once, and a bounded history', () => {
  it('an attempt dialled twice at once (a retried activity, a second worker) reaches the provider once', async () => {
    const res = await create({ name: 'Once', contacts: [{ phone: '+14155593001' }], start: false });
    await h.db.models.Campaign.update({ status: 'running' }, { where: { id: res.body.id } });
    const step = await campaignTick(h.db, await loadTelephonySettings(h.db, h.box), res.body.id, new Date(), 200);
    expect(step.dials).toHaveLength(1);
    const deps = { ...h.ctx, temporal: h.temporal, jwtSecret: h.config.JWT_SECRET! };
    const results = await Promise.all([dialAttempt(deps, step.dials[0]), dialAttempt(deps, step.dials[0])]);
    expect(results.map((r) => r.kind).sort()).toEqual(['already', 'dialled']);
    expect(await dialAttempt(deps, step.dials[0])).toEqual({ kind: 'already', callId: step.dials[0] });
    expect(dialLog().filter((d) => d.to === '+14155593001')).toEqual([{ to: '+14155593001', callId: step.dials[0] }]);
    await h.db.models.Campaign.update({ status: 'cancelled' }, { where: { id: res.body.id } });
  });

  it('continues as new every stepsPerRun steps and still completes', async () => {
    const res = await create({ name: 'Long', contacts: [{ phone: '+14155594001' }, { phone: '+14155594002' }], pacing: { max_concurrent: 1, calls_per_minute: 600 }, start: false });
    const id = res.body.id;
    // One step per run: the first step cannot finish a campaign with two contacts still to call,
    // so the first run always continues as new however fast the calls end.
    const firstRun = await startCampaignWorkflow({ temporal: h.temporal, config: h.config }, id, 1);
    await transition(h.db, (await h.db.models.Campaign.findByPk(id))!.get({ plain: true }), 'start');
    await signalCampaign(h.temporal, id);
    await waitForStatus(id, 'completed');
    expect(await h.temporal.workflow.getHandle(res.body.workflow_id).result()).toBe('completed');
    const first = await h.temporal.workflow.getHandle(res.body.workflow_id, firstRun).fetchHistory();
    expect(first.events!.at(-1)!.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
    expect(first.events!.length).toBeLessThan(60);
    expect((await h.temporal.workflow.getHandle(res.body.workflow_id).describe()).runId).not.toBe(firstRun);
  });
});

describe('bad input', () => {
  it.each([
    [{ contacts_csv: 'name\nAda' }, /no phone column/],
    [{ contacts: [{ phone: '+14155550100' }], timezone: 'Mars/Olympus' }, /timezone: must be an IANA time zone/],
    [{ contacts: [{ phone: '+14155550100' }], schedule: { windows: [{ days: ['mon'], start: '19:00', end: '10:00' }] } }, /start must be before end/],
    [{ contacts: [{ phone: '+14155550100' }], agent_name: 'nobody' }, /agent_name: agent nobody not found/],
    [{ contacts: [{ 'first name': 'x', phone: '+14155550100' }] }, /names are letters, digits and _/],
    [{ contacts_csv: 'phone,name\n"+1415,x\n' }, /contacts_csv/],
    [{ contacts: [{ phone: '+14155550100' }], default_country: 'XX' }, /default_country: must be an ISO 3166 country code/],
  ])('%j → 422', async (body, detail) => {
    const res = await create({ name: 'Bad', ...body });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(detail);
  });

  it('national numbers need a default country, and normalise with one', async () => {
    const res = await create({ name: 'India', contacts: [{ phone: '98765 43210' }, { phone: '+91 98765 43211' }], default_country: 'IN', start: false });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('draft');
    const page = (await h.request('GET', `/api/campaigns/${res.body.id}/contacts`)).body;
    expect(page.contacts.map((c: any) => c.phone_number)).toEqual(['+919876543210', '+919876543211']);
    const without = await create({ name: 'No country', contacts: [{ phone: '98765 43210' }], start: false });
    expect(without.body.upload.invalid).toEqual([{ line: 1, phone: '98765 43210', error: 'not a valid phone number (a national number needs default_country)' }]);
    expect((await h.request('GET', '/api/campaigns/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it("warns about the agent's context variables that rows lack, and keeps the rows", async () => {
    await createAgent(h.db, h.box, {
      name: 'dues-bot',
      context_variables: { customer_name: { type: 'string', description: 'first name' }, amount_due: { type: 'number', description: 'in rupees' } },
    });
    const csv = ['phone,customer_name,amount_due', '+919876500001,Asha,1200', '+919876500002,,800', '+919876500003,Ravi,'].join('\n');
    const res = await create({ name: 'Dues', agent_name: 'dues-bot', contacts_csv: csv, start: false });
    expect(res.status).toBe(201);
    expect(res.body.upload).toMatchObject({ added: 3, missing_variables: [{ name: 'amount_due', rows: 1 }, { name: 'customer_name', rows: 1 }] });
  });
});
