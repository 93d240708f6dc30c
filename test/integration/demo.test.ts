/**
 * `npm run demo [-- --provider <vendor>]` keeps working for every telephony vendor with a fake:
 * its call, with the short script (the caller hangs up after the barge-in), through the same real
 * pieces the script uses.
 */
import { runDemo } from '../../scripts/demo';
import { setLogLevel } from '../../src/shared/logger';
import { fakeTelephonyProviders } from '../fakes/telephony-fakes';
import { startHarness } from '../support/harness';

it.each(fakeTelephonyProviders())('the demo call over %s completes with a transcript, a barge-in and a recording', async (provider) => {
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
}, 60_000);

it('`--scenario voicemail`: the machine gets the message after its beep, the person the whole greeting', async () => {
  setLogLevel('error');
  const { runVoicemailDemo } = await import('../../scripts/lib/demo-voicemail');
  const result = await runVoicemailDemo({ startPlatform: (env) => startHarness({ env, worker: true }), print: () => undefined });
  expect(result.machine.call).toMatchObject({ status: 'completed', end_reason: 'voicemail', answered_by: 'machine' });
  expect(result.machine.events.filter((e) => e.event_type === 'voicemail_message_left').map((e) => e.data)).toEqual([expect.objectContaining({ after: 'beep', complete: true })]);
  expect(result.machine.messageAfterBeepMs).not.toBeNull();
  expect(result.machine.messageAfterBeepMs!).toBeGreaterThanOrEqual(0);
  expect(result.person.call).toMatchObject({ status: 'completed', end_reason: 'user_ended', answered_by: 'human' });
  expect(result.person.greetingHeardMs).toBeGreaterThan(3000);
}, 90_000);
