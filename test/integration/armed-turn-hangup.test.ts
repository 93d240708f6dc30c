/**
 * The caller hangs up right after hearing an armed turn's reply, and the hang-up reaches the call
 * workflow before the armed turn's result does (under load the two arrive in either order). The
 * reply was heard, so it is part of the call: the transcript has the caller's words and the reply.
 * Under load the hang-up may even overtake the report that the greeting finished playing (the first
 * turn is armed while the greeting plays); the turn counts then too.
 *
 * The real API, call worker, PostgreSQL and Temporal; the media gateway is replaced by a worker on
 * a gateway task queue of the test's own, so the test decides which result the workflow sees
 * first (the real gateway cannot be made to lose that race on purpose).
 */
import crypto from 'node:crypto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { callWorkflowId, mediaConnectedSignal } from '../../workflows/call-definitions';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { eventually } from '../support/fixtures';
import { gatewayActivitiesStandIn, takenTurn } from '../support/gateway-activities-stand-in';
import { startHarness, type Harness } from '../support/harness';
import { startMediaStandIn, type MediaStandIn, STAND_IN_ENV } from '../support/media-stand-in';
import { defaultProviderEnv, FakePool } from '../support/speech-vendors';
import { configureTwilio } from '../support/telephony';
import { voiceCallApi } from '../support/voice-call-api';

const ACCOUNT_SID = `AC${'5e'.repeat(16)}`;
const AUTH_TOKEN = 'armed-hangup-test-auth-token-01234';
const OUR_NUMBER = '+15005550006';

let h: Harness;
let twilio: FakeTwilio;
let standIn: MediaStandIn;
const speechFakes = new FakePool();
const api = voiceCallApi(() => h);

beforeAll(async () => {
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  standIn = await startMediaStandIn();
  const speechEnv = await defaultProviderEnv(speechFakes);
  h = await startHarness({ env: { ...speechEnv, ...STAND_IN_ENV, TWILIO_API_BASE_URL: twilio.apiBaseUrl, GATEWAY_PUBLIC_URL: standIn.url }, worker: true });
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await twilio?.stop();
  await standIn?.stop();
  await speechFakes.stopAll();
});

describe('an armed turn whose result comes after the hang-up', () => {
  it.each([
    ['after the greeting was reported', false],
    ['before the greeting was reported', true],
  ])('keeps the words the caller said and the reply they heard in the transcript (hang-up %s)', async (_order, hangUpFirst) => {
    const agentName = `late-result-${hangUpFirst ? 'early' : 'late'}`;
    const res = await h.request('POST', '/api/agents', { body: { name: agentName, prompt: 'Be brief.', greeting: 'Hello, table bookings.' } });
    expect(res.status).toBe(201);
    const queue = `gateway-test-${crypto.randomBytes(4).toString('hex')}`;
    let reportGreeting!: () => void;
    const greetingReport = hangUpFirst ? new Promise<void>((resolve) => (reportGreeting = resolve)) : undefined;
    const gw = gatewayActivitiesStandIn({ speechReport: greetingReport });
    const connection = await NativeConnection.connect({ address: h.config.TEMPORAL_ADDRESS! });
    const worker = await Worker.create({ connection, taskQueue: queue, activities: gw.activities });
    const running = worker.run();
    try {
      const placed = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+14155550142', agent_name: agentName } });
      expect(placed.status).toBe(201);
      const callId = placed.body.call_id as string;
      const workflow = h.temporal.workflow.getHandle(callWorkflowId(callId));
      await workflow.signal(mediaConnectedSignal, { gatewayTaskQueue: queue, streamSid: 'MZtest', recordingPath: null, events: [] });

      // While the greeting plays the workflow arms the first turn on "the gateway".
      const first = await eventually(async () => gw.armed[0], 15_000);
      expect(first.req.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Hello, table bookings.' });
      // The caller speaks, the reply plays (the gateway took the armed turn) …
      first.taken = true;
      // … and the caller hangs up: the workflow hears of it first and takes the turn back.
      gw.hangup({ reason: 'hangup', events: [] });
      // The greeting's report comes after the hang-up's (most of the time: Temporal may still hand
      // the workflow both at once, which is the other order).
      if (hangUpFirst) setTimeout(reportGreeting, 500);
      await eventually(async () => gw.disarmed.includes(first.req.armId), 15_000);
      first.resolve(takenTurn('A table for two tonight, please.', 'Done, two at eight.'));

      const call = await api.finalCall(callId);
      expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
      expect(call.transcript.map((t: { role: string; text: string }) => [t.role, t.text])).toEqual([
        ['assistant', 'Hello, table bookings.'],
        ['user', 'A table for two tonight, please.'],
        ['assistant', 'Done, two at eight.'],
      ]);
      const types = (await api.events(callId)).map((e) => e.event_type);
      expect(types.indexOf('user_spoke')).toBeGreaterThan(-1);
      expect(types.lastIndexOf('agent_spoke')).toBeGreaterThan(types.indexOf('user_spoke'));
    } finally {
      reportGreeting?.();
      gw.release();
      worker.shutdown();
      await running;
      await connection.close();
    }
  }, 60_000);
});
