/**
 * Records the workflow history of a phone call that rode through a Temporal outage, for the replay
 * test (test/replay/histories/voice-temporal-outage.binpb): a Temporal dev server of its own with
 * its state on disk is killed mid-call and restarted; the caller keeps talking meanwhile (a turn
 * armed before the outage, a turn the gateway answers alone), then speaks once more and hangs up.
 *
 *   npx tsx scripts/record-outage-history.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { startGateway } from '../src/gateway/server';
import { PIPELINE_DEFAULTS } from '../src/shared/catalog';
import { getFreePort, startDevServer, type DevServer } from '../src/temporal/dev-server';
import { callWorkflowId } from '../workflows/call-definitions';
import { startFakeCartesia } from '../test/fakes/cartesia-server';
import { startFakeDeepgram } from '../test/fakes/deepgram-server';
import { startFakeOpenAI } from '../test/fakes/openai-server';
import { FRAME_MS } from '../test/fakes/twilio-caller';
import { startFakeTwilio } from '../test/fakes/twilio-server';
import { createAgent, eventually } from '../test/support/fixtures';
import globalSetup from '../test/support/global-setup';
import globalTeardown from '../test/support/global-teardown';
import { startHarness } from '../test/support/harness';
import { configureTwilio } from '../test/support/telephony';
import { runScript } from './lib/run-script';

const OUT = path.join(__dirname, '..', 'test', 'replay', 'histories', 'voice-temporal-outage.binpb');
const HELLO_WAV = path.join(__dirname, '..', 'test', 'fixtures', 'audio', 'hello-appointment.wav');
const TWILIO = { accountSid: `AC${'4e'.repeat(16)}`, authToken: 'record-outage-auth-token-012345', phoneNumber: '+15005550006' };
const OUTAGE_MS = 8_000;

async function main(): Promise<void> {
  await globalSetup();
  const port = await getFreePort();
  const dbFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vap-outage-')), 'temporal.db');
  const startTemporal = () => startDevServer({ cliPath: process.env.VAP_TEST_TEMPORAL_CLI!, port, dbFile, headless: true });
  let server: DevServer = await startTemporal();
  const llm = await startFakeOpenAI();
  const twilio = await startFakeTwilio({ accountSid: TWILIO.accountSid, authToken: TWILIO.authToken });
  const deepgram = await startFakeDeepgram({ apiKey: 'dg-key' });
  const cartesia = await startFakeCartesia({ apiKey: 'ca-key' });
  const gatewayPort = await getFreePort();
  const h = await startHarness({
    env: {
      TEMPORAL_ADDRESS: server.address,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'sk-test',
      TWILIO_API_BASE_URL: twilio.apiBaseUrl,
      GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}`,
      DEEPGRAM_API_KEY: 'dg-key',
      DEEPGRAM_BASE_URL: deepgram.url,
      CARTESIA_API_KEY: 'ca-key',
      CARTESIA_BASE_URL: cartesia.url,
    },
    worker: true,
  });
  const gateway = await startGateway(h.gatewayDeps(), gatewayPort, '127.0.0.1');
  try {
    await configureTwilio(h, TWILIO);
    await createAgent(h.db, h.box, { name: 'replay-outage', greeting: 'Sunrise Clinic.', pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 } });
    llm.setResponder((b) => ({ content: `Answer to: ${String(b.messages[b.messages.length - 1]?.content ?? '').slice(0, 30)}` }));
    const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/replay-outage`, from: '+14155550100', to: TWILIO.phoneNumber });
    const verb = fake.verbs?.[0];
    if (!fake.caller || verb?.verb !== 'Connect') throw new Error(`inbound call not connected: ${fake.twiml}`);
    const caller = fake.caller;
    const heardMs = () => caller.speechFrames().length * FRAME_MS;
    const ask = async (text: string) => {
      deepgram.script([text]);
      const before = heardMs();
      await caller.say(HELLO_WAV);
      await eventually(async () => heardMs() >= before + 1000, 20_000, 20);
      await new Promise((r) => setTimeout(r, 1500));
    };
    await eventually(async () => heardMs() >= 600, 15_000, 20);
    await ask('Before the outage.');
    await server.process.kill('SIGKILL');
    await ask('Armed before the outage.');
    await ask('Answered by the gateway alone.');
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    server = await startTemporal();
    await ask('After the outage.');
    await caller.hangup();
    const id = callWorkflowId(verb.stream.parameters.call_id!);
    await h.temporal.workflow.getHandle(id).result();
    const history = await h.temporal.workflow.getHandle(id).fetchHistory();
    fs.writeFileSync(OUT, temporal.api.history.v1.History.encode(history).finish());
    console.log(`recorded voice-temporal-outage (${history.events?.length} events)`);
  } finally {
    await gateway.stop();
    await h.stop();
    await Promise.all([twilio.stop(), deepgram.stop(), cartesia.stop(), llm.stop()]);
    await server.stop();
    await globalTeardown();
  }
}

runScript(main);
