/**
 * Records the workflow history of a phone call whose hang-up overtook the report that its greeting
 * had played, with the first turn (armed while the greeting played) taken by the caller: for the
 * replay test (test/replay/histories/<name>.binpb). The gateway is the activities stand-in of
 * test/support/gateway-activities-stand-in.ts, so the race is lost on purpose.
 *
 *   npx tsx scripts/record-hangup-race-history.ts [name]    (default voice-hangup-before-greeting-report)
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { callWorkflowId, mediaConnectedSignal } from '../workflows/call-definitions';
import { startFakeTwilio } from '../test/fakes/twilio-server';
import { eventually } from '../test/support/fixtures';
import { gatewayActivitiesStandIn, takenTurn } from '../test/support/gateway-activities-stand-in';
import globalSetup from '../test/support/global-setup';
import globalTeardown from '../test/support/global-teardown';
import { startHarness } from '../test/support/harness';
import { startMediaStandIn, STAND_IN_ENV } from '../test/support/media-stand-in';
import { defaultProviderEnv, FakePool } from '../test/support/speech-vendors';
import { configureTwilio } from '../test/support/telephony';
import { runScript } from './lib/run-script';

const NAME = process.argv[2] ?? 'voice-hangup-before-greeting-report';
const OUT = path.join(__dirname, '..', 'test', 'replay', 'histories', `${NAME}.binpb`);
const TWILIO = { accountSid: `AC${'4f'.repeat(16)}`, authToken: 'record-race-auth-token-0123456', phoneNumber: '+15005550006' };

async function main(): Promise<void> {
  await globalSetup();
  const twilio = await startFakeTwilio({ accountSid: TWILIO.accountSid, authToken: TWILIO.authToken });
  const standIn = await startMediaStandIn();
  const speechFakes = new FakePool();
  const speechEnv = await defaultProviderEnv(speechFakes);
  const h = await startHarness({ env: { ...speechEnv, ...STAND_IN_ENV, TWILIO_API_BASE_URL: twilio.apiBaseUrl, GATEWAY_PUBLIC_URL: standIn.url }, worker: true });
  let reportGreeting!: () => void;
  const gw = gatewayActivitiesStandIn({ speechReport: new Promise<void>((resolve) => (reportGreeting = resolve)) });
  const queue = `gateway-record-${crypto.randomBytes(4).toString('hex')}`;
  const connection = await NativeConnection.connect({ address: h.config.TEMPORAL_ADDRESS! });
  const worker = await Worker.create({ connection, taskQueue: queue, activities: gw.activities });
  const running = worker.run();
  try {
    await configureTwilio(h, TWILIO);
    const agent = await h.request('POST', '/api/agents', { body: { name: 'replay-hangup-race', prompt: 'Be brief.', greeting: 'Hello, table bookings.' } });
    if (agent.status !== 201) throw new Error(`agent: ${agent.status}`);
    const placed = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+14155550143', agent_name: 'replay-hangup-race' } });
    if (placed.status !== 201) throw new Error(`call: ${placed.status}`);
    const workflow = h.temporal.workflow.getHandle(callWorkflowId(placed.body.call_id as string));
    await workflow.signal(mediaConnectedSignal, { gatewayTaskQueue: queue, streamSid: 'MZrecord', recordingPath: null, events: [] });
    const first = await eventually(async () => gw.armed[0], 15_000);
    first.taken = true;
    gw.hangup({ reason: 'hangup', events: [] });
    setTimeout(reportGreeting, 500);
    // The workflow takes the turn back and waits for it (or has ended).
    let ended = false;
    void workflow.result().finally(() => (ended = true));
    await eventually(async () => gw.disarmed.includes(first.req.armId) || ended, 20_000);
    first.resolve(takenTurn('A table for two tonight, please.', 'Done, two at eight.'));
    await workflow.result();
    const history = await workflow.fetchHistory();
    fs.writeFileSync(OUT, temporal.api.history.v1.History.encode(history).finish());
    console.log(`recorded ${NAME} (${history.events?.length} events)`);
  } finally {
    reportGreeting();
    gw.release();
    worker.shutdown();
    await running;
    await connection.close();
    await h.stop();
    await Promise.all([twilio.stop(), standIn.stop(), speechFakes.stopAll()]);
    await globalTeardown();
  }
}

runScript(main);
