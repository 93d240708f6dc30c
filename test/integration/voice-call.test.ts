/**
 * Phone calls end to end through every real part: the API (outbound request, Twilio webhooks),
 * the call workflow in a worker PROCESS, the media gateway in its own PROCESS, and the vendor
 * fakes (Twilio REST + a simulated caller on Media Streams, Deepgram, Cartesia, an OpenAI-
 * compatible LLM, the client's tool webhook). Processes are killed mid-call to check that a call
 * survives its worker and fails cleanly when its gateway dies.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { channelOf, readWavFile } from '../../src/audio/wav';
import { getFreePort } from '../../src/temporal/dev-server';
import { startFakeCartesia, type FakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver';
import { lineSilentAfterMs } from '../support/barge-in-silence';
import { eventually } from '../support/fixtures';
import { voiceCallApi } from '../support/voice-call-api';
import { configureTwilio } from '../support/telephony';
import { startHarness, type Harness } from '../support/harness';
import { killHard, spawnGatewayProcess, spawnWorkerProcess } from '../support/worker-process-control';
import { speechFakesEnv } from '../support/voice-stack';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'audio');
const HELLO_WAV = path.join(FIXTURES, 'hello-appointment.wav'); // speech 500–3860 ms
const STOP_WAV = path.join(FIXTURES, 'stop-wait.wav'); // speech 300–1940 ms
const STOP_ONSET_MS = 300;
const ACCOUNT_SID = `AC${'7a'.repeat(16)}`;
const AUTH_TOKEN = 'voice-call-test-auth-token-0123456';
const OUR_NUMBER = '+15005550006';
const MS_PER_CHAR = 60; // the TTS fake's audio length per character

let h: Harness;
let twilio: FakeTwilio;
let deepgram: FakeDeepgram;
let cartesia: FakeCartesia;
let openai: FakeOpenAI;
let clinic: WebhookReceiver;
let gatewayPort: number;
let vendorEnv: Record<string, string>;
let worker: ChildProcess;
let gateway: ChildProcess;

beforeAll(async () => {
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  deepgram = await startFakeDeepgram({ apiKey: 'dg-key' });
  cartesia = await startFakeCartesia({ apiKey: 'ca-key' });
  openai = await startFakeOpenAI();
  clinic = await startWebhookReceiver();
  gatewayPort = await getFreePort();
  vendorEnv = {
    TWILIO_API_BASE_URL: twilio.apiBaseUrl,
    GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}`,
    GATEWAY_PORT: String(gatewayPort),
    ...speechFakesEnv(deepgram, cartesia, openai),
  };
  h = await startHarness({ env: vendorEnv });
  worker = await spawnWorkerProcess(h, vendorEnv);
  gateway = (await spawnGatewayProcess(h, vendorEnv)).child;
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, { twilio_max_concurrent: 5 });
}, 180_000);

afterAll(async () => {
  await killHard(worker);
  await killHard(gateway);
  await h?.stop();
  await Promise.all([twilio?.stop(), deepgram?.stop(), cartesia?.stop(), openai?.stop(), clinic?.stop()]);
});

const heardMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;
const lastMessage = (body: any) => body.messages[body.messages.length - 1];
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function.name);

const { events, finalCall, createVoiceAgent } = voiceCallApi(() => h);

describe('an outbound Twilio call to a flow agent', () => {
  it('greets in audio, calls a tool, is interrupted within 300 ms, moves through the flow and hangs up', async () => {
    const tool = await h.request('POST', '/api/tools', {
      body: {
        name: 'check_slots',
        description: 'Free appointment slots for a day',
        parameters: { properties: { day: { type: 'string' } }, required: ['day'] },
        webhook_url: `${clinic.url}/slots`,
      },
    });
    clinic.respond({ body: { free: ['nine', 'eleven'] } }, { path: '/slots', times: 5 });
    const agent = await createVoiceAgent({
      name: 'clinic-outbound',
      prompt: 'You book appointments for the clinic.',
      greeting: 'Hello {{first_name}}, this is the clinic.',
    });
    const flow = await h.request('PUT', `/api/agents/${agent.id}/flow`, {
      body: {
        nodes: [
          {
            node_key: 'offer',
            is_initial: true,
            tool_ids: [tool.body.id],
            functions: [{ name: 'choose_slot', description: 'The caller chose a slot', next_node_key: 'confirm', properties: { slot: { type: 'string' } }, required: ['slot'] }],
          },
          { node_key: 'confirm', is_terminal: true, pre_actions: [{ type: 'say', text: 'Booked at {{slot}}. Goodbye!' }, { type: 'end_call' }] },
        ],
      },
    });
    expect(flow.status).toBe(200);
    const answer =
      'We have two free slots tomorrow, one at nine in the morning and one at eleven. The afternoon is fully booked, I am afraid, but Thursday afternoon is still open if that suits you better.';
    openai.setResponder((body) => {
      const last = lastMessage(body);
      if (last.role === 'tool' && last.content.includes('free')) return { content: answer };
      if (last.role === 'user' && last.content.startsWith('Stop')) return { tool_calls: [{ name: 'choose_slot', arguments: { slot: 'nine' } }] };
      if (last.role === 'user' && toolNames(body).includes('check_slots')) return { tool_calls: [{ name: 'check_slots', arguments: { day: 'tomorrow' } }] };
      return { content: 'Sorry?' };
    });
    deepgram.script(['I would like to book an appointment for tomorrow.', 'Stop, wait a second.']);

    const placed = await h.request('POST', '/api/calls/outbound', {
      body: { phone_number: '+14155550199', agent_name: 'clinic-outbound', custom_parameters: { first_name: 'Asha' } },
    });
    expect(placed.status).toBe(201);
    expect(placed.body).toMatchObject({ status: 'initiated', provider_response: { sid: expect.stringMatching(/^CA/) } });
    const callId = placed.body.call_id as string;
    const caller = await twilio.nextCaller(20_000);

    // The greeting, heard as audio.
    const greeting = 'Hello Asha, this is the clinic.';
    await eventually(async () => heardMs(caller) >= (greeting.length - 2) * MS_PER_CHAR - 100, 15_000, 20);

    // A question: the agent calls the tool and answers in audio.
    const beforeAnswer = heardMs(caller);
    await caller.say(HELLO_WAV);
    await eventually(async () => heardMs(caller) >= beforeAnswer + 2000, 15_000, 20);

    // The caller barges in: the line goes silent within 300 ms of their speech starting.
    const span = await caller.say(STOP_WAV);
    expect(lineSilentAfterMs(caller, span, STOP_ONSET_MS)).toBeLessThanOrEqual(300);
    expect(caller.clears.length).toBeGreaterThanOrEqual(1);

    // The flow moves on, says the confirmation and ends the call (which hangs up at Twilio).
    const call = await finalCall(callId, 30_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'agent_ended', direction: 'outbound', provider: 'twilio', current_node_key: 'confirm' });
    expect(call.provider_call_sid).toBe(placed.body.provider_response.sid);
    expect(call.llm_prompt_tokens).toBeGreaterThan(0);
    expect(call.tts_characters).toBeGreaterThan(greeting.length + 'Booked at nine. Goodbye!'.length);
    await caller.closed;

    // The tool got the call context and the LLM's arguments.
    expect(clinic.requests.find((r) => r.path === '/slots')!.body).toMatchObject({ first_name: 'Asha', day: 'tomorrow', direction: 'outbound' });

    const list = await events(callId);
    expect(list.map((e) => e.id)).toEqual(list.map((_, i) => i + 1));
    const statuses = list.filter((e) => e.event_type === 'call_status' && !e.data.ignored && e.data.from).map((e) => `${e.data.from}>${e.data.status}`);
    expect(statuses).toEqual(['ringing>in_progress', 'in_progress>completed']);
    const types = list.map((e) => e.event_type);
    for (const type of ['call_started', 'tts_started', 'tts_stopped', 'tts_usage', 'user_spoke', 'agent_spoke', 'tool_called', 'tool_result', 'interruption', 'node_transition', 'ttfb_metric', 'llm_usage', 'call_ended']) {
      expect(types).toContain(type);
    }
    expect(list.filter((e) => e.event_type === 'node_entered').map((e) => e.data.node_key)).toEqual(['offer', 'confirm']);
    const spoke = list.filter((e) => e.event_type === 'agent_spoke').map((e) => e.data);
    expect(spoke[0]).toEqual({ text: greeting });
    const interrupted = spoke.find((s) => s.interrupted)!;
    expect(answer.startsWith(interrupted.text)).toBe(true);
    expect(interrupted.text.length).toBeLessThan(answer.length);
    expect(spoke[spoke.length - 1]).toEqual({ text: 'Booked at nine. Goodbye!' });

    // Twilio saw the call complete; the recording is a stereo WAV as long as the call.
    const fakeCall = twilio.call(call.provider_call_sid)!;
    await fakeCall.ended;
    expect(fakeCall.status).toBe('completed');
    const wav = readWavFile(path.isAbsolute(call.recording_path) ? call.recording_path : path.join(h.config.dataDir, call.recording_path));
    expect(wav).toMatchObject({ channels: 2, sampleRate: 8000 });
    const closed = await caller.closed;
    expect(Math.abs((wav.samples.length / 2 / 8) - (closed.atMs - caller.connectedAtMs))).toBeLessThan(400);
    expect(channelOf(wav, 0).some((s) => Math.abs(s) > 1000)).toBe(true); // the caller
    expect(channelOf(wav, 1).some((s) => Math.abs(s) > 1000)).toBe(true); // the agent
  }, 120_000);
});

describe('process failures during an inbound call', () => {
  async function inboundCall(agentName: string) {
    const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/${agentName}`, from: '+14155550142', to: OUR_NUMBER });
    expect(fake.errors).toEqual([]);
    const verb = fake.verbs![0]!;
    if (verb.verb !== 'Connect') throw new Error(`expected <Connect>, got ${fake.twiml}`);
    return { caller: fake.caller!, callId: verb.stream.parameters.call_id! };
  }

  it('goes on when the worker is killed mid-call', async () => {
    await createVoiceAgent({ name: 'resilient-voice', prompt: 'Be helpful.', greeting: 'Hi there.' });
    openai.setResponder(() => ({ content: 'Tomorrow at nine works.' }));
    deepgram.script(['I would like to book an appointment for tomorrow.']);
    const { caller, callId } = await inboundCall('resilient-voice');
    await eventually(async () => heardMs(caller) >= 400, 15_000, 20);

    await killHard(worker);
    const beforeAnswer = heardMs(caller);
    const spoken = caller.say(HELLO_WAV); // the utterance reaches the workflow while no worker runs
    await spoken;
    worker = await spawnWorkerProcess(h, vendorEnv);
    const reply = 'Tomorrow at nine works.';
    await eventually(async () => heardMs(caller) >= beforeAnswer + (reply.length - 2) * MS_PER_CHAR, 30_000, 20);
    await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke' && e.data.text === reply), 10_000);

    await caller.hangup();
    const call = await finalCall(callId);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
    expect(call.transcript.map((t: any) => t.text)).toEqual(['Hi there.', 'I would like to book an appointment for tomorrow.', 'Tomorrow at nine works.']);
  }, 120_000);

  it('ends the calls of a killed gateway as failed with an error event', async () => {
    await createVoiceAgent({ name: 'fragile-voice', prompt: 'Be helpful.', greeting: 'Hello.' });
    const { caller, callId } = await inboundCall('fragile-voice');
    await eventually(async () => heardMs(caller) >= 200, 15_000, 20);
    await eventually(async () => (await h.request('GET', `/api/calls/${callId}`)).body.status === 'in_progress', 10_000);

    await killHard(gateway);
    const call = await finalCall(callId, 30_000);
    expect(call).toMatchObject({ status: 'failed', end_reason: 'error' });
    const error = (await events(callId)).find((e) => e.event_type === 'error')!;
    expect(error.data).toMatchObject({ context: 'gateway' });
    expect(error.data.message).toMatch(/media gateway lost/);
    gateway = (await spawnGatewayProcess(h, vendorEnv)).child;
  }, 90_000);
});
