/**
 * The warm-transfer replay histories (docs/phone-operations.md#warm-transfer), for
 * scripts/record-replay-histories.ts (`--only-warm`): a call whose destination is briefed and
 * presses 1 (the call ends `transferred`), and one whose destination presses 2 (the caller comes
 * back on a new stream, the agent says so, the caller hangs up), on Twilio; and on Plivo one
 * joined on 1, whose destination's leg is named by a request id when dialled and by its CallUUID
 * once answered (the workflow joins the latter).
 */
import type { FakeDeepgram } from '../../test/fakes/deepgram-server';
import type { FakeOpenAI } from '../../test/fakes/openai-server';
import { FRAME_MS, type TwilioCaller } from '../../test/fakes/twilio-caller';
import type { FakeTwilio } from '../../test/fakes/twilio-server';
import type { FakePlivo } from '../../test/fakes/plivo-server';
import { FRAME_MS as PLIVO_FRAME_MS } from '../../test/fakes/plivo-caller';
import { createAgent, eventually } from '../../test/support/fixtures';
import { configurePlivo } from '../../test/support/telephony';
import { parseExtraHeaders } from '../../src/providers/telephony/plivo/media-messages';
import { plivoStreamCredentials } from '../../src/providers/telephony/plivo/stream-auth';
import type { Harness } from '../../test/support/harness';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { callWorkflowId } from '../../workflows/call-definitions';

export interface WarmRecorder {
  h: Harness;
  llm: FakeOpenAI;
  twilio: FakeTwilio;
  plivo: FakePlivo;
  deepgram: FakeDeepgram;
  helloWav: string;
  save(name: string, workflowId: string): Promise<void>;
  inboundPhoneCall(agent: string, from: string): Promise<{ caller: TwilioCaller; callId: string; heardMs(): number }>;
}

export async function recordWarmTransfers({ h, llm, twilio, plivo, deepgram, helloWav, save, inboundPhoneCall }: WarmRecorder): Promise<void> {
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

  // Plivo: the caller into a <Conference> by the Transfer Call API, the destination by Make Call.
  await configurePlivo(h, { authId: plivo.authId, authToken: plivo.authToken, phoneNumber: '+918047491898' });
  deepgram.script(['I was charged twice for my invoice.']);
  const fake = await plivo.simulateInbound({ answerUrl: `${h.api.url}/telephony/plivo/inbound/replay-warm`, hangupUrl: `${h.api.url}/telephony/plivo/status`, from: '+919812345601', to: '+918047491898' });
  if (!fake.caller || !fake.stream) throw new Error(`Plivo inbound call not connected: ${fake.xml}`);
  const plivoCallId = plivoStreamCredentials(parseExtraHeaders(fake.stream.extraHeaders))!.callId;
  await eventually(async () => fake.caller!.speechFrames().length * PLIVO_FRAME_MS >= 500, 15_000, 20);
  const plivoHuman = plivo.nextCaller(30_000);
  await fake.caller.say(helloWav);
  const plivoPerson = await plivoHuman;
  await eventually(async () => plivoPerson.speechFrames().length * PLIVO_FRAME_MS >= 4_000, 30_000, 20);
  plivoPerson.dtmf('1');
  plivoPerson.dtmf('#');
  await h.temporal.workflow.getHandle(callWorkflowId(plivoCallId)).result();
  await save('voice-warm-transfer-plivo-joined', callWorkflowId(plivoCallId));
}
