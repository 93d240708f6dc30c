/**
 * `npm run demo [-- --provider <vendor>]` keeps working for every telephony vendor with a fake:
 * its call, with the short script (the caller hangs up after the barge-in), through the same real
 * pieces the script uses. `--scenario transfer` too, on every vendor that can transfer, and
 * `--scenario backchannel` on Twilio.
 * Each demo starts its own platform and fakes, so they run side by side (`it.concurrent`): the
 * calls run in real time, and one after the other they took over two minutes of CI's budget.
 */
import { runDemo } from '../../scripts/demo';
import { runBackchannelDemo } from '../../scripts/lib/demo-backchannel';
import { runTransferDemo, TRANSFER_PROVIDERS } from '../../scripts/lib/demo-transfer';
import { setLogLevel } from '../../src/shared/logger';
import { fakeTelephonyProviders } from '../fakes/telephony-fakes';
import { startHarness } from '../support/harness';

// Side by side, five platforms at a time share the two cores with a neighbouring file: a demo
// that takes 20–40 s alone took over 60 s in a loaded full run. The timeout counts from its start.
const DEMO_TIMEOUT_MS = 150_000;

it.concurrent.each(fakeTelephonyProviders())('the demo call over %s completes with a transcript, a barge-in and a recording', async (provider) => {
  setLogLevel('error');
  const result = await runDemo({ startPlatform: (env) => startHarness({ env, worker: true }), script: 'short', print: () => undefined, provider });
  expect(result.call).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
  const transcript = result.call.transcript as Array<{ role: string; text: string }>;
  expect(transcript.filter((t) => t.role === 'user').map((t) => t.text)).toEqual(['Hello, I would like to book an appointment for tomorrow.', 'Stop, wait a second.']);
  expect(transcript.at(-1)).toMatchObject({ role: 'assistant', text: 'Sure, take your time.' });
  const types = result.events.map((e) => e.event_type);
  for (const t of ['tool_called', 'tool_result', 'interruption', 'ttfb_metric', 'call_ended']) expect(types).toContain(t);
  expect(result.turns.every((t) => t.ttfbMs !== null)).toBe(true);
  expect(result.bargeIn.clearAfterMs).not.toBeNull();
  expect(result.recording).toMatchObject({ downloadStatus: 200 });
  expect(result.recording!.seconds).toBeGreaterThan(10);
}, DEMO_TIMEOUT_MS);

it.concurrent.each(TRANSFER_PROVIDERS)('the transfer demo over %s hands the caller to billing: the fake dials it, the call ends completed/transferred', async (provider) => {
  setLogLevel('error');
  const result = await runTransferDemo({ startPlatform: (env) => startHarness({ env, worker: true }), print: () => undefined, provider });
  expect(result.call).toMatchObject({ status: 'completed', end_reason: 'transferred' });
  // The LLM chose among the agent's destinations, described in the tool.
  expect(result.offeredTool.parameters.properties.destination.enum).toEqual(['billing', 'sales']);
  expect(result.offeredTool.description).toContain('Invoices, refunds and payments');
  // The phone company dialled billing's number (Plivo writes numbers without the +).
  expect(result.dials).toEqual([{ to: provider === 'plivo' ? '14155550123' : '+14155550123', outcome: 'answer' }]);
  const transcript = result.call.transcript as Array<{ role: string; text: string }>;
  expect(transcript.map((t) => t.text)).toEqual([
    'Hello, this is Acme support. How can I help you?',
    'Can I talk to a person about my bill, please?',
    'Connecting you to our billing team now.',
  ]);
  const transfer = result.events.filter((e) => e.event_type.startsWith('transfer_')).map((e) => [e.event_type, e.data.destination]);
  expect(transfer).toEqual([
    ['transfer_started', 'billing'],
    ['transfer_completed', 'billing'],
  ]);
  expect(result.events.find((e) => e.event_type === 'transfer_started')!.data).toMatchObject({ mode: 'cold', to: '+14155550123' });
}, DEMO_TIMEOUT_MS);
it.concurrent('`--scenario voicemail`: the machine gets the message after its beep, the person the whole greeting', async () => {
  setLogLevel('error');
  const { runVoicemailDemo } = await import('../../scripts/lib/demo-voicemail');
  const result = await runVoicemailDemo({ startPlatform: (env) => startHarness({ env, worker: true }), print: () => undefined });
  expect(result.machine.call).toMatchObject({ status: 'completed', end_reason: 'voicemail', answered_by: 'machine' });
  expect(result.machine.events.filter((e) => e.event_type === 'voicemail_message_left').map((e) => e.data)).toEqual([expect.objectContaining({ after: 'beep', complete: true })]);
  expect(result.machine.messageAfterBeepMs).not.toBeNull();
  expect(result.machine.messageAfterBeepMs!).toBeGreaterThanOrEqual(0);
  expect(result.person.call).toMatchObject({ status: 'completed', end_reason: 'user_ended', answered_by: 'human' });
  // The greeting played to its end: not cut by the detector (shown with its events if it was).
  const greetingStops = result.person.events.filter((e) => e.event_type === 'tts_stopped').map((e) => e.data);
  expect(greetingStops[0]).toMatchObject({ interrupted: false });
  expect(result.person.greetingHeardMs).toBeGreaterThan(3000);
}, DEMO_TIMEOUT_MS);

it.concurrent('`--scenario backchannel`: "haan ji, theek hai" pauses the agent and it resumes, unanswered; "ruko" stops it and is answered', async () => {
  setLogLevel('error');
  const result = await runBackchannelDemo({ startPlatform: (env) => startHarness({ env, worker: true }), print: () => undefined });
  expect(result.call).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
  expect(result.assent).toMatchObject({ resumed: true, clears: 0 });
  expect(result.events.filter((e) => e.event_type === 'agent_resumed').map((e) => e.data)).toEqual([{ reason: 'backchannel' }]);
  const transcript = (result.call.transcript as Array<{ role: string; text: string }>).map((t) => `${t.role}: ${t.text}`);
  // The long reply was heard whole despite the assent, and nothing answered the assent itself.
  expect(transcript.slice(0, 4)).toEqual([
    'assistant: Namaste, Sunrise Clinic. Main aapki kya madad kar sakti hoon?',
    'user: Mujhe kal ke liye appointment chahiye.',
    expect.stringMatching(/^assistant: Kal subah nau baje, .* Aap jo samay chahein bataiye\.$/),
    'user: Haan ji, theek hai.',
  ]);
  expect(transcript.slice(-2)).toEqual(['user: Ruko, ek minute.', 'assistant: Zaroor, aaram se.']);
  expect(result.events.filter((e) => e.event_type === 'interruption')).toHaveLength(1);
  expect(result.waitClearMs).not.toBeNull();
}, DEMO_TIMEOUT_MS);
