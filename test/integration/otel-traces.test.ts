/**
 * Tracing (docs/tracing.md) against a real OpenTelemetry Collector (test/support/otel-collector.ts,
 * built by `bash .ci/otelcol.sh`): with OTEL_EXPORTER_OTLP_ENDPOINT pointing at it, one outbound
 * Twilio call with a tool call yields one trace — the call's root span, the workflow and its
 * activities on the worker and the gateway, the turn with its stage spans, the tool's activity and
 * its HTTP request — and that trace's id is on the call record.
 */
import path from 'node:path';
import { activeTracing, stopTracing } from '../../src/observability/tracing/tracing';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver';
import { scriptPersona } from '../fakes/llm-roles';
import { bookingAgentReply, createBookingAgent, waitForRun } from '../support/booking-agent';
import { eventually } from '../support/fixtures';
import { startCollector, type CollectedSpan, type RunningCollector } from '../support/otel-collector';
import { configureTwilio } from '../support/telephony';
import { voiceCallApi } from '../support/voice-call-api';
import { startVoiceStack, type VoiceStack } from '../support/voice-stack';

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
const ACCOUNT_SID = `AC${'3c'.repeat(16)}`;
const AUTH_TOKEN = 'otel-traces-test-auth-token-01234';
const OUR_NUMBER = '+15005550006';
const GREETING = 'Hello, this is the clinic.';
const REPLY = 'Nine is free.';
const MS_PER_CHAR = 60;

let collector: RunningCollector;
let twilio: FakeTwilio;
let clinic: WebhookReceiver;
let stack: VoiceStack;
const { finalCall, createVoiceAgent } = voiceCallApi(() => stack.h);

beforeAll(async () => {
  collector = await startCollector();
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  clinic = await startWebhookReceiver();
  stack = await startVoiceStack({
    telephony: [
      {
        fake: twilio,
        env: { TWILIO_API_BASE_URL: twilio.apiBaseUrl },
        configure: (h) => configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }),
      },
    ],
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_SERVICE_NAME: 'vap-otel-test', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test' },
    alsoStop: [clinic],
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await stopTracing();
  await collector?.stop();
});

const heardMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;

describe('a traced voice call', () => {
  it('is one trace, from the start through the turn and the tool, with its id on the call', async () => {
    expect(activeTracing()?.target.url).toBe(`${collector.endpoint}/v1/traces`);
    const tool = await stack.h.request('POST', '/api/tools', {
      body: { name: 'check_slots', description: 'Free slots for a day', parameters: { properties: { day: { type: 'string' } } }, webhook_url: `${clinic.url}/slots` },
    });
    clinic.respond({ body: { free: ['nine'] } }, { path: '/slots', times: 5 });
    await createVoiceAgent({ name: 'traced', prompt: 'You book appointments.', greeting: GREETING, tool_ids: [tool.body.id] });
    stack.openai.setResponder((body) => {
      const last = body.messages[body.messages.length - 1];
      if (last.role === 'tool') return { content: REPLY };
      if (last.role === 'user') return { tool_calls: [{ name: 'check_slots', arguments: { day: 'tomorrow' } }] };
      return { content: 'Sorry?' };
    });
    stack.deepgram.script(['I would like an appointment tomorrow.']);

    const placed = await stack.h.request('POST', '/api/calls/outbound', { body: { phone_number: '+14155550123', agent_name: 'traced' } });
    expect(placed.status).toBe(201);
    const callId = placed.body.call_id as string;
    const caller = await twilio.nextCaller(20_000);
    // The whole greeting first (the TTS fake makes 60 ms of audio per character), then the reply.
    await eventually(async () => heardMs(caller) >= (GREETING.length - 2) * MS_PER_CHAR - 100, 15_000, 20);
    const before = heardMs(caller);
    await caller.say(HELLO_WAV);
    await eventually(async () => heardMs(caller) >= before + (REPLY.length - 2) * MS_PER_CHAR - 100, 15_000, 20);
    await caller.hangup();
    const call = await finalCall(callId, 20_000);
    expect(call.trace_id).toMatch(/^[0-9a-f]{32}$/);

    // The workflow's own span is exported when the workflow ends; then everything is flushed.
    const names = ['call', 'StartWorkflow:callWorkflow', 'RunWorkflow:callWorkflow', 'RunActivity:callTool', 'tool.http', 'turn', 'vad.end', 'stt.final', 'llm', 'tts.first_audio'];
    const ours = () => collector.spans().filter((s) => s.traceId === call.trace_id);
    const missing = () => names.filter((n) => !ours().some((s) => s.name === n));
    await eventually(async () => {
      await activeTracing()?.flush();
      return missing().length === 0;
    }, 20_000, 200).catch(() => {
      throw new Error(`spans missing from the call's trace: ${missing().join(', ')}; it has ${ours().map((s) => s.name).join(', ')}`);
    });
    const spans = ours();

    const byName = (name: string): CollectedSpan => spans.find((s) => s.name === name)!;
    const root = byName('call');
    expect(root).toMatchObject({ parentSpanId: '', service: 'vap-otel-test', attributes: expect.objectContaining({ 'call.id': callId, 'agent.name': 'traced', 'call.direction': 'outbound' }) });
    // Gateway activities ran in the same trace, and the turn hangs off one of them.
    const parentOf = (s: CollectedSpan) => spans.find((p) => p.spanId === s.parentSpanId);
    expect(parentOf(byName('turn'))?.name).toMatch(/^RunActivity:/);
    for (const stage of ['vad.end', 'stt.final', 'tts.first_audio']) expect(parentOf(byName(stage))?.name).toBe('turn');
    expect(byName('turn').events).toContain('first_frame_out');
    expect(byName('llm').attributes).toMatchObject({ 'gen_ai.system': 'openai', 'gen_ai.usage.input_tokens': expect.any(Number) });
    expect(byName('stt.final').attributes).toMatchObject({ 'stt.provider': 'deepgram' });
    // The tool: its activity span, and its HTTP request under it (no query, no headers).
    expect(byName('RunActivity:callTool').attributes).toMatchObject({ 'tool.name': 'check_slots', 'call.id': callId });
    expect(parentOf(byName('tool.http'))?.name).toBe('RunActivity:callTool');
    expect(byName('tool.http').attributes).toMatchObject({ 'http.request.method': 'POST', 'url.path': '/slots', 'http.response.status_code': 200 });
    // Nothing secret rides along: no key, token or header value in any attribute.
    const everything = JSON.stringify(spans.map((s) => s.attributes));
    for (const secret of ['sk-test', 'dg-key', 'ca-key', AUTH_TOKEN]) expect(everything).not.toContain(secret);
  }, 60_000);

  it('makes an agent test run one trace: the run, its attempt and the attempt\'s call', async () => {
    const agent = await createBookingAgent(stack.h, 'booker', `${clinic.url}/book`);
    stack.openai.setResponder(bookingAgentReply);
    scriptPersona(stack.openai, ["I'd like to book a table", 'Friday please', 'Thanks, bye'], { persona: 'happy diner' });
    const test = await stack.h.request('POST', `/api/agents/${agent.agentId}/tests`, {
      body: { name: 'books', kind: 'simulated', persona: 'A happy diner who wants a table on Friday for two.', tool_mocks: { [agent.toolName]: [{ confirmation: 'B-42' }] }, expectations: [{ type: 'ended_by_agent' }] },
    });
    expect(test.status).toBe(201);
    const started = await stack.h.request('POST', `/api/agents/${agent.agentId}/test-runs`, { body: { test_ids: [test.body.id] } });
    expect(started.status).toBe(201);
    await waitForRun(stack.h, started.body.id, 30_000);
    const names = ['RunWorkflow:testRunWorkflow', 'RunWorkflow:testAttemptWorkflow', 'RunWorkflow:callWorkflow'];
    const trace = await eventually(async () => {
      await activeTracing()?.flush();
      const all = collector.spans();
      const run = all.find((s) => s.name === 'RunWorkflow:testRunWorkflow' && String(s.attributes.workflowId).includes(started.body.id));
      const ours = run ? all.filter((s) => s.traceId === run.traceId) : [];
      return names.every((n) => ours.some((s) => s.name === n)) ? ours : null;
    }, 15_000, 200);
    expect(trace.filter((s) => s.name === 'RunWorkflow:callWorkflow')).toHaveLength(1);
    // The test call's record names the run's trace.
    const testCalls = await stack.h.db.models.Call.findAll({ where: { channel: 'text' } });
    expect(testCalls.map((c) => c.get('trace_id'))).toEqual([trace[0]!.traceId]);
  }, 45_000);
});
