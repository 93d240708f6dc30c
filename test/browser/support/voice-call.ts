/**
 * A whole inbound phone call, offline, for the browser tests to open: the Twilio fake rings the
 * API, its simulated caller talks to the real media gateway, and the Deepgram, Cartesia and
 * OpenAI fakes stand in for the vendors. The call ends with a recording, like a real one.
 */
import path from 'node:path';
import { startGateway, type RunningGateway } from '../../../src/gateway/server';
import { PIPELINE_DEFAULTS } from '../../../src/shared/catalog';
import { getFreePort } from '../../../src/temporal/dev-server';
import { startFakeCartesia, type FakeCartesia } from '../../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../../fakes/deepgram-server';
import type { FakeOpenAI } from '../../fakes/openai-server';
import { FRAME_MS, type TwilioCaller } from '../../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../../fakes/twilio-server';
import { eventually } from '../../support/fixtures';
import type { Harness } from '../../support/harness';
import { configureTwilio } from '../../support/telephony';

const HELLO_WAV = path.join(__dirname, '..', '..', 'fixtures', 'audio', 'hello-appointment.wav');
const ACCOUNT_SID = `AC${'3c'.repeat(16)}`;
const AUTH_TOKEN = 'browser-test-auth-token-0123456789';
const OUR_NUMBER = '+15005550006';
const MS_PER_CHAR = 60; // the TTS fake's audio length per character

export interface VoiceFakes {
  env: Record<string, string>;
  /** Starts the gateway and stores the Twilio settings; needs the harness started with `env`. */
  attach(h: Harness): Promise<void>;
  stop(): Promise<void>;
}

export async function startVoiceFakes(): Promise<VoiceFakes & { twilio: FakeTwilio; deepgram: FakeDeepgram; cartesia: FakeCartesia }> {
  const twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  const deepgram = await startFakeDeepgram({ apiKey: 'dg-key' });
  const cartesia = await startFakeCartesia({ apiKey: 'ca-key' });
  const gatewayPort = await getFreePort();
  let gateway: RunningGateway | undefined;
  return {
    twilio,
    deepgram,
    cartesia,
    env: {
      TWILIO_API_BASE_URL: twilio.apiBaseUrl,
      GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}`,
      DEEPGRAM_API_KEY: 'dg-key',
      DEEPGRAM_BASE_URL: deepgram.url,
      CARTESIA_API_KEY: 'ca-key',
      CARTESIA_BASE_URL: cartesia.url,
    },
    async attach(h) {
      gateway = await startGateway(
        h.gatewayDeps(),
        gatewayPort,
        '127.0.0.1',
      );
      await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER });
    },
    async stop() {
      await gateway?.stop();
      await Promise.all([twilio.stop(), deepgram.stop(), cartesia.stop()]);
    },
  };
}

const heardMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;

/**
 * Rings `agentName`, asks one question, hangs up; resolves with the finished call's id. `agentExtra`:
 * more settings of the agent it creates (e.g. its analysis and webhook).
 */
export async function runInboundVoiceCall(
  h: Harness,
  fakes: Awaited<ReturnType<typeof startVoiceFakes>>,
  llm: FakeOpenAI,
  agentName: string,
  agentExtra: Record<string, unknown> = {},
) {
  const greeting = 'Hello! You have reached the clinic.';
  const agent = await h.request('POST', '/api/agents', {
    body: { name: agentName, prompt: 'You book clinic appointments.', greeting, pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 }, ...agentExtra },
  });
  if (agent.status !== 201) throw new Error(`agent: ${agent.status} ${JSON.stringify(agent.body)}`);
  fakes.deepgram.script(['I would like to book an appointment for tomorrow.']);
  const answer = 'Tomorrow at nine works. See you then.';
  llm.enqueue({ content: answer });

  const fake = await fakes.twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/${agentName}`, from: '+14155550100', to: OUR_NUMBER });
  const verb = fake.verbs?.[0];
  if (!fake.caller || verb?.verb !== 'Connect') throw new Error(`no call: ${fake.twiml} ${JSON.stringify(fake.errors)}`);
  const caller = fake.caller;
  const callId = verb.stream.parameters.call_id!;
  await eventually(async () => heardMs(caller) >= (greeting.length - 2) * MS_PER_CHAR - 100, 15_000, 20);
  const before = heardMs(caller);
  await caller.say(HELLO_WAV);
  await eventually(async () => heardMs(caller) >= before + (answer.length - 2) * MS_PER_CHAR - 100, 20_000, 20);
  // Hang up once the answer has been played out whole (not cut off by the hang-up).
  await eventually(async () => {
    const events = (await h.request('GET', `/api/calls/${callId}/events`)).body as Array<{ event_type: string; data: { text?: string; interrupted?: boolean } }>;
    return events.some((e) => e.event_type === 'agent_spoke' && e.data.text === answer && !e.data.interrupted);
  }, 15_000);
  await caller.hangup();
  await eventually(async () => {
    const call = (await h.request('GET', `/api/calls/${callId}`)).body;
    return call.status === 'completed' && call.recording_path && call;
  }, 20_000);
  return { callId, greeting, answer, agent: agent.body as { id: string; webhook_secret: string } };
}
