/**
 * The warm-transfer replay histories (docs/phone-operations.md#warm-transfer), for
 * scripts/record-replay-histories.ts (`--only-warm`): a call whose destination is briefed and
 * presses 1 (the call ends `transferred`), and one whose destination presses 2 (the caller comes
 * back on a new stream, the agent says so, the caller hangs up).
 */
import type { FakeDeepgram } from '../../test/fakes/deepgram-server';
import type { FakeOpenAI } from '../../test/fakes/openai-server';
import { FRAME_MS, type TwilioCaller } from '../../test/fakes/twilio-caller';
import type { FakeTwilio } from '../../test/fakes/twilio-server';
import { createAgent, eventually } from '../../test/support/fixtures';
import type { Harness } from '../../test/support/harness';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { callWorkflowId } from '../../workflows/call-definitions';

export interface WarmRecorder {
  h: Harness;
  llm: FakeOpenAI;
  twilio: FakeTwilio;
  deepgram: FakeDeepgram;
  helloWav: string;
  save(name: string, workflowId: string): Promise<void>;
  inboundPhoneCall(agent: string, from: string): Promise<{ caller: TwilioCaller; callId: string; heardMs(): number }>;
}

export async function recordWarmTransfers({ h, llm, twilio, deepgram, helloWav, save, inboundPhoneCall }: WarmRecorder): Promise<void> {
  const transfer_destinations = [
    { name: 'billing', phone_number: '+14155550125', sip_uri: null, description: 'Invoices and refunds', message: 'Please hold while I brief billing.', mode: 'warm' as const, summary_prompt: null, hold_audio: 'tone', max_wait_secs: 10 },
  ];
  const pipeline_settings = { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 };
  await createAgent(h.db, h.box, { name: 'replay-warm', greeting: 'Hello, front desk.', pipeline_settings, transfer_destinations });
  const sorry = 'Billing cannot take your call right now. Can I help?';
  llm.setResponder((b: any) => {
    const m = b.messages[b.messages.length - 1];
    if (String(b.messages[0]?.content ?? '').includes('handing a call over')) return { content: 'The caller was charged twice for one invoice.' };
    if (m.role === 'tool' && String(m.content).includes('did not go through')) return { content: sorry };
    if (m.role === 'user') return { tool_calls: [{ name: 'transfer_call', arguments: { destination: 'billing' } }] };
    return { content: 'Goodbye.' };
  });
  const briefed = async (person: TwilioCaller) => eventually(async () => person.speechFrames().length * FRAME_MS >= 4_000, 30_000, 20);

  deepgram.script(['I was charged twice for my invoice.']);
  const joined = await inboundPhoneCall('replay-warm', '+14155550104');
  await eventually(async () => joined.heardMs() >= 500, 15_000, 20);
  let human = twilio.nextCaller(30_000);
  await joined.caller.say(helloWav);
  let person = await human;
  await briefed(person);
  person.dtmf('1');
  person.dtmf('#');
  await h.temporal.workflow.getHandle(callWorkflowId(joined.callId)).result();
  await save('voice-warm-transfer-joined', callWorkflowId(joined.callId));

  deepgram.script(['I was charged twice for my invoice.']);
  const declined = await inboundPhoneCall('replay-warm', '+14155550105');
  await eventually(async () => declined.heardMs() >= 500, 15_000, 20);
  human = twilio.nextCaller(30_000);
  await declined.caller.say(helloWav);
  person = await human;
  await briefed(person);
  const back = twilio.nextCaller(30_000);
  person.dtmf('2');
  person.dtmf('#');
  const again = await back;
  await eventually(async () => again.speechFrames().length * FRAME_MS >= (sorry.length - 4) * 60, 20_000, 20);
  await new Promise((r) => setTimeout(r, 2500));
  await again.hangup();
  await h.temporal.workflow.getHandle(callWorkflowId(declined.callId)).result();
  await save('voice-warm-transfer-declined', callWorkflowId(declined.callId));
}
