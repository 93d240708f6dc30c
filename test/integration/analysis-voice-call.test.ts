/**
 * A phone call's post-call analysis: an inbound call through the Twilio fake, the real media
 * gateway and the Deepgram, Cartesia and OpenAI fakes, hung up by the caller; the call workflow then
 * analyses the transcript the gateway's STT produced and sends the agent's webhook — the worked
 * example of docs/post-call-analysis.md.
 */
import { Webhook } from 'standardwebhooks';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver';
import { runInboundVoiceCall, startVoiceFakes } from '../browser/support/voice-call';
import { eventually } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';

let h: Harness;
let llm: FakeOpenAI;
let hooks: WebhookReceiver;
let voice: Awaited<ReturnType<typeof startVoiceFakes>>;

beforeAll(async () => {
  llm = await startFakeOpenAI();
  hooks = await startWebhookReceiver();
  voice = await startVoiceFakes();
  h = await startHarness({ env: { ...voice.env, OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test' }, worker: true });
  await voice.attach(h);
}, 120_000);
afterAll(async () => {
  await voice?.stop();
  await h?.stop();
  await llm?.stop();
  await hooks?.stop();
});

it('analyses a finished phone call and delivers the outcome to the webhook once', async () => {
  llm.enqueueStructured({
    object: {
      summary: 'The caller booked an appointment for tomorrow at nine.',
      fields: { booked: true, date: '2026-12-03' },
      success: true,
      success_reason: 'An appointment was booked.',
    },
    usage: { prompt_tokens: 310, completion_tokens: 42 },
  });
  const analysis = {
    fields: {
      booked: { type: 'boolean', description: 'an appointment was booked' },
      date: { type: 'date', description: 'the day of the appointment' },
    },
    required: ['booked'],
    success_criteria: 'The caller ends the call with an appointment booked.',
  };
  const { callId, answer, agent } = await runInboundVoiceCall(h, voice, llm, 'clinic-analysis', {
    analysis,
    webhook_url: `${hooks.url}/crm`,
    webhook_events: ['analysis_completed'],
  });

  const call = await eventually(async () => {
    const c = (await h.request('GET', `/api/calls/${callId}`)).body;
    return c.analysis_status === 'done' ? c : null;
  }, 30_000);
  expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended', channel: 'voice', provider: 'twilio' });
  expect(call.analysis).toMatchObject({ fields: { booked: true, date: '2026-12-03' }, success: true, model: 'gpt-4o-mini', error: null });
  expect(call).toMatchObject({ analysis_prompt_tokens: 310, analysis_completion_tokens: 42 });

  // The model read what the gateway's STT heard and what the caller was told.
  const request = llm.structuredRequests[0]!.body;
  expect(request.messages[1].content).toContain('Caller: I would like to book an appointment for tomorrow.');
  expect(request.messages[1].content).toContain(`Agent: ${answer}`);
  expect(request.messages[1].content).toMatch(/^inbound call, status completed \(user_ended\), \d+ s/);

  // The analysis comes after the call's end: the hang-up was recorded first, at its own time.
  const events = (await h.request('GET', `/api/calls/${callId}/events`)).body as Array<{ event_type: string; timestamp: string }>;
  const ended = events.find((e) => e.event_type === 'call_ended')!;
  const analysed = events.find((e) => e.event_type === 'analysis_completed')!;
  expect(events.indexOf(analysed)).toBeGreaterThan(events.indexOf(ended));
  expect(call.end_time <= analysed.timestamp).toBe(true);

  const delivery = await hooks.waitForRequest((r) => r.path === '/crm', 20_000);
  expect(() => new Webhook(agent.webhook_secret).verify(delivery.raw, delivery.headers as Record<string, string>)).not.toThrow();
  expect(delivery.body).toMatchObject({
    type: 'analysis_completed',
    call_id: callId,
    direction: 'inbound',
    data: { analysis_status: 'done', analysis: { fields: { booked: true, date: '2026-12-03' }, success: true } },
  });
  await new Promise((r) => setTimeout(r, 1000));
  expect(hooks.requests.filter((r) => r.path === '/crm')).toHaveLength(1);
}, 120_000);
