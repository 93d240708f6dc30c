/**
 * Records workflow histories of representative calls into test/replay/histories/, for the replay
 * test that runs them against the current workflow code. Call workflows are pinned to their
 * worker's deployment version, so a change to the call workflow re-records them (the replay test
 * then checks the code against the paths the new version takes):
 *
 *   npm run record:histories     (this script, then record-outage-history.ts and record-hangup-race-history.ts)
 *
 * Starts the same real stack as the tests (PostgreSQL, Temporal dev server, API, worker) with a
 * fake LLM and a local webhook receiver. `--only-analysis` records the post-call analysis
 * scenarios alone, `--only-drain` the drained phone call alone, `--only-transfer` the transferred
 * phone calls alone, `--only-warm` the warm transfers (joined, declined; joined on Plivo) alone, `--only-voicemail` the two voicemail calls alone, `--only-keypad` the phone
 * call with keypresses both ways alone, `--only-web` the web call alone, `--only-mcp` the call using an MCP tool alone, `--only-knowledge` the knowledge-base ingestion and calls alone, `--only-voice` the phone call
 * with armed turns, the one whose caller cuts the greeting off and the turn run (new histories,
 * without re-recording the others).
 */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { startGateway } from '../src/gateway/server';
import { PIPELINE_DEFAULTS } from '../src/shared/catalog';
import { getFreePort } from '../src/temporal/dev-server';
import { callWorkflowId } from '../workflows/call-definitions';
import { startFakeCartesia } from '../test/fakes/cartesia-server';
import { startFakeDeepgram } from '../test/fakes/deepgram-server';
import { startFakeOpenAI } from '../test/fakes/openai-server';
import { FRAME_MS } from '../test/fakes/twilio-caller';
import { startFakeTwilio } from '../test/fakes/twilio-server';
import { startFakePlivo } from '../test/fakes/plivo-server';
import { startWebhookReceiver } from '../test/fakes/webhook-receiver';
import { connectWebCaller } from '../test/fakes/web-caller';
import { createAgent, createNodes, createTool, eventually } from '../test/support/fixtures';
import { configureTwilio } from '../test/support/telephony';
import { machineGreeting, pauseAndBeep } from '../test/support/voicemail-audio';
import globalSetup from '../test/support/global-setup';
import globalTeardown from '../test/support/global-teardown';
import { startHarness } from '../test/support/harness';
import { runScript } from './lib/run-script';
import { recordMcpToolCall, recordTextHistories } from './lib/record-text-histories';
import { recordKnowledgeHistories } from './lib/record-knowledge-histories';
import { recordWarmTransfers } from './lib/record-warm-histories';

const OUT = path.join(__dirname, '..', 'test', 'replay', 'histories');
const HELLO_WAV = path.join(__dirname, '..', 'test', 'fixtures', 'audio', 'hello-appointment.wav');
const STOP_WAV = path.join(__dirname, '..', 'test', 'fixtures', 'audio', 'stop-wait.wav');
const TWILIO = { accountSid: `AC${'4d'.repeat(16)}`, authToken: 'record-histories-auth-token-0123', phoneNumber: '+15005550006' };

async function main(): Promise<void> {
  await globalSetup();
  const llm = await startFakeOpenAI();
  const hooks = await startWebhookReceiver();
  const twilio = await startFakeTwilio({ accountSid: TWILIO.accountSid, authToken: TWILIO.authToken });
  const plivo = await startFakePlivo({ authId: 'MARECORDHISTORIES001', authToken: 'record-histories-plivo-token-0123' });
  const deepgram = await startFakeDeepgram({ apiKey: 'dg-key' });
  const cartesia = await startFakeCartesia({ apiKey: 'ca-key' });
  const gatewayPort = await getFreePort();
  const h = await startHarness({
    env: {
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'sk-test',
      WEBHOOK_RETRY_INITIAL_SECS: '1',
      TWILIO_API_BASE_URL: twilio.apiBaseUrl,
      PLIVO_API_BASE_URL: plivo.apiBaseUrl,
      GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}`,
      DEEPGRAM_API_KEY: 'dg-key',
      DEEPGRAM_BASE_URL: deepgram.url,
      CARTESIA_API_KEY: 'ca-key',
      CARTESIA_BASE_URL: cartesia.url,
    },
    worker: true,
  });
  // Its drain (the last scenario) ends the calls left at once.
  // Turn runs always on (GATEWAY_TURN_RUN_LOAD 0): the phone calls record the path a busy gateway takes.
  const gateway = await startGateway({ ...h.gatewayDeps(), config: { ...h.config, GATEWAY_DRAIN_SECS: 0, GATEWAY_TURN_RUN_LOAD: 0 } }, gatewayPort, '127.0.0.1');
  const save = async (name: string, workflowId: string) => {
    // Binary protobuf: the SDK's JSON reader trips over duplicate protobufjs copies in node_modules.
    const history = await h.temporal.workflow.getHandle(workflowId).fetchHistory();
    fs.writeFileSync(path.join(OUT, `${name}.binpb`), temporal.api.history.v1.History.encode(history).finish());
    console.log(`recorded ${name} (${history.events?.length} events)`);
  };
  const post = async (p: string, body: unknown) => {
    const res = await h.request('POST', p, { body });
    if (res.status >= 300) throw new Error(`${p}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const inboundPhoneCall = async (agent: string, from: string) => {
    const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/${agent}`, from, to: TWILIO.phoneNumber });
    const verb = fake.verbs?.[0];
    if (!fake.caller || verb?.verb !== 'Connect') throw new Error(`inbound call not connected: ${fake.twiml}`);
    const caller = fake.caller;
    const callId = verb.stream.parameters.call_id!;
    const heardMs = () => caller.speechFrames().length * FRAME_MS;
    const events = async () => (await h.request('GET', `/api/calls/${callId}/events`)).body as Array<{ event_type: string }>;
    return { caller, callId, heardMs, events };
  };

  // 6. A phone call whose gateway drains (a deploy): its deadline passes at once, the caller hears
  //    the goodbye, and the workflow ends the call `agent_ended` with a `drained` event.
  const recordDrained = async () => {
    await configureTwilio(h, TWILIO);
    await createAgent(h.db, h.box, {
      name: 'replay-drained',
      greeting: 'Hello, this is the clinic.',
      pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 },
    });
    llm.setResponder(() => ({ content: 'Of course, which time suits you?' }));
    deepgram.script(['I would like to book an appointment for tomorrow.']);
    const call = await inboundPhoneCall('replay-drained', '+14155550101');
    await eventually(async () => call.heardMs() >= 1000, 15_000, 20);
    await call.caller.say(HELLO_WAV);
    await eventually(async () => (await call.events()).filter((e) => e.event_type === 'agent_spoke').length >= 2, 15_000, 50);
    await gateway.drain();
    await h.temporal.workflow.getHandle(callWorkflowId(call.callId)).result();
    await save('voice-drained', callWorkflowId(call.callId));
  };

  // 7. Transfer to a human (docs/phone-operations.md): one call handed to billing (answered: the
  //    call ends `transferred`), one whose destination is busy: the dial action brings the caller
  //    back on a new stream of the same call, the agent says so, the caller hangs up.
  const recordTransfers = async () => {
    await configureTwilio(h, TWILIO);
    const transfer_destinations = [
      { name: 'billing', phone_number: '+14155550123', sip_uri: null, description: 'Invoices and refunds', message: 'Connecting you to billing now.' },
      { name: 'sales', phone_number: null, sip_uri: 'sip:sales@pbx.example.com', description: 'New plans', message: 'Putting you through to sales.' },
    ];
    const pipeline_settings = { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 };
    await createAgent(h.db, h.box, { name: 'replay-transfer', greeting: 'Hello, front desk.', pipeline_settings, transfer_destinations });
    twilio.setDialOutcome('sip:sales@pbx.example.com', 'busy');
    const sorry = 'Sales is busy right now. Can I help?';
    llm.setResponder((b: any) => {
      const m = b.messages[b.messages.length - 1];
      if (m.role === 'user') return { tool_calls: [{ name: 'transfer_call', arguments: { destination: m.content.includes('invoice') ? 'billing' : 'sales' } }] };
      if (m.role === 'tool' && String(m.content).includes('did not go through')) return { content: sorry };
      return { content: 'Goodbye.' };
    });

    deepgram.script(['I have a question about my invoice.']);
    const answered = await inboundPhoneCall('replay-transfer', '+14155550102');
    await eventually(async () => answered.heardMs() >= 500, 15_000, 20);
    await answered.caller.say(HELLO_WAV);
    await h.temporal.workflow.getHandle(callWorkflowId(answered.callId)).result();
    await save('voice-transfer-answered', callWorkflowId(answered.callId));

    deepgram.script(['I would like to upgrade my plan.']);
    const busy = await inboundPhoneCall('replay-transfer', '+14155550103');
    await eventually(async () => busy.heardMs() >= 500, 15_000, 20);
    const back = twilio.nextCaller(30_000);
    await busy.caller.say(HELLO_WAV);
    const again = await back;
    await eventually(async () => (await busy.events()).some((e: any) => e.event_type === 'agent_spoke' && e.data.text === sorry), 20_000, 50);
    await new Promise((r) => setTimeout(r, 2500));
    await again.hangup();
    await h.temporal.workflow.getHandle(callWorkflowId(busy.callId)).result();
    await save('voice-transfer-busy', callWorkflowId(busy.callId));
  };

  // 8. Outbound calls an answering machine takes (docs/phone-operations.md#voicemail-on-outbound-calls): Twilio's AMD
  //    says machine_start and the gateway hangs up (the `voicemail` activity); and the gateway's
  //    own detector hears a long greeting and leaves the message after the beep.
  const recordVoicemail = async () => {
    await configureTwilio(h, TWILIO);
    llm.setResponder(() => ({ content: 'Sorry, could you say that again?' }));
    const greeting = 'Hi {{first_name}}, this is the clinic calling about your appointment.';
    await post('/api/agents', { name: 'replay-vm-hangup', prompt: 'You remind patients.', greeting, voicemail: { detect: true, action: 'hang_up' } });
    const message = 'Hi {{first_name}}, your appointment is tomorrow at nine.';
    await post('/api/agents', { name: 'replay-vm-message', prompt: 'You remind patients.', greeting, voicemail: { detect: true, action: 'leave_message', message } });
    const scenarios = [
      { agent: 'replay-vm-hangup', to: '+14155550121', amd: { answeredBy: 'machine' as const, decidedMs: 2500 }, name: 'voice-voicemail-vendor' },
      { agent: 'replay-vm-message', to: '+14155550122', amd: { answeredBy: 'machine' as const, decidedMs: 40_000, greetingEndMs: 40_000 }, name: 'voice-voicemail-message' },
    ];
    for (const sc of scenarios) {
      twilio.setOutcome({ outcome: 'answer', amd: sc.amd }, sc.to);
      const next = twilio.nextCaller(20_000);
      const placed = await post('/api/calls/outbound', { phone_number: sc.to, agent_name: sc.agent, custom_parameters: { first_name: 'Asha' } });
      const caller = await next;
      await caller.say(machineGreeting());
      if (sc.agent === 'replay-vm-message') await caller.say(pauseAndBeep());
      await h.temporal.workflow.getHandle(callWorkflowId(placed.call_id)).result();
      await save(sc.name, callWorkflowId(placed.call_id));
    }
  };

  const recordVoice = async (toolId: string) => {
    const last = (b: any) => b.messages[b.messages.length - 1];
    // 5. A phone call with armed turns: greeting (the first turn armed while it plays), a question
    //    answered by the gateway the moment the caller stops (a tool round in between), a
    //    barge-in, a second armed turn, hang-up.
    await configureTwilio(h, TWILIO);
    await createAgent(h.db, h.box, {
      name: 'replay-voice',
      greeting: 'Hello, this is the clinic.',
      tool_ids: [toolId],
      pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 },
    });
    hooks.respond({ body: { balance: 42 } }, { path: '/balance', times: 5 });
    const answer = 'You have forty two in savings. Is there anything else I can help you with today, or shall I read you the last transactions?';
    llm.setResponder((b) => {
      const m = last(b);
      if (m.role === 'user' && m.content.startsWith('I would')) return { tool_calls: [{ name: 'get_balance', arguments: { kind: 'savings' } }] };
      if (m.role === 'tool') return { content: answer };
      return { content: 'Sure, take your time.' };
    });
    deepgram.script(['I would like to book an appointment for tomorrow.', 'Stop, wait a second.']);
    const { caller, callId: voiceCallId, heardMs, events: voiceEvents } = await inboundPhoneCall('replay-voice', '+14155550100');
    await eventually(async () => heardMs() >= 1000, 15_000, 20);
    await new Promise((r) => setTimeout(r, 1000));
    const before = heardMs();
    await caller.say(HELLO_WAV);
    await eventually(async () => heardMs() >= before + 1500, 15_000, 20);
    await caller.say(STOP_WAV);
    const voiceId = callWorkflowId(voiceCallId);
    await eventually(async () => (await voiceEvents()).filter((e) => e.event_type === 'agent_spoke').length >= 3, 15_000, 50);
    await caller.hangup();
    await h.temporal.workflow.getHandle(voiceId).result();
    await save('voice-armed-turns', voiceId);
  };

  // 7. A phone call whose caller talks over the greeting: the first turn, armed while the greeting
  //    played, assumed it was heard whole, so the gateway hands the utterance back and the
  //    workflow takes the plan back and answers it itself.
  const recordGreetingCutOff = async () => {
    await createAgent(h.db, h.box, {
      name: 'replay-greeting-cut',
      greeting: 'Hello, this is the Sunrise Clinic. We are open from eight to six on weekdays and on Saturday mornings.',
      pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 },
    });
    llm.setResponder(() => ({ content: 'Of course, go ahead.' }));
    deepgram.script(['Stop, wait a second.']);
    const call = await inboundPhoneCall('replay-greeting-cut', '+14155550102');
    await eventually(async () => call.heardMs() >= 800, 15_000, 20);
    await call.caller.say(STOP_WAV);
    await eventually(async () => (await call.events()).filter((e) => e.event_type === 'agent_spoke').length >= 2, 15_000, 50);
    await call.caller.hangup();
    await h.temporal.workflow.getHandle(callWorkflowId(call.callId)).result();
    await save('voice-greeting-cut-off', callWorkflowId(call.callId));
  };

  // 8. A turn run: three plain turns answered by one armed activity, reported when the caller hangs up.
  const recordTurnRun = async () => {
    await createAgent(h.db, h.box, { name: 'replay-turn-run', greeting: 'Hello, clinic here.', pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 } });
    const replies = ['Sure, when?', 'Yes, nine works.', 'You are welcome.'];
    let n = 0;
    llm.setResponder(() => ({ content: replies[n++ % replies.length]! }));
    deepgram.script(['I would like an appointment.', 'Is nine possible?', 'Thank you.']);
    const call = await inboundPhoneCall('replay-turn-run', '+14155550103');
    await eventually(async () => call.heardMs() >= 1000, 15_000, 20);
    for (const reply of replies) {
      const before = call.heardMs();
      await call.caller.say(HELLO_WAV);
      await eventually(async () => call.heardMs() >= before + reply.length * 60, 15_000, 20);
    }
    await new Promise((r) => setTimeout(r, 300));
    await call.caller.hangup();
    await h.temporal.workflow.getHandle(callWorkflowId(call.callId)).result();
    await save('voice-turn-run', callWorkflowId(call.callId));
  };

  // 9. Keypresses both ways: the caller types a code (DTMF on the media stream, one input for the
  //    LLM), the agent answers with send_dtmf (tones in the call's audio), then the caller hangs up.
  const recordKeypresses = async () => {
    await configureTwilio(h, TWILIO);
    const agent = await createAgent(h.db, h.box, {
      name: 'replay-keypad',
      greeting: 'Hi, the clinic.',
      pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 1, dtmf_timeout_secs: 1 },
    });
    await createNodes(h.db, agent.id, [{ node_key: 'menu', is_initial: true, builtin_tools: ['send_dtmf'] }]);
    llm.setResponder((b: any) => {
      const m = b.messages[b.messages.length - 1];
      if (m.role === 'user' && String(m.content).startsWith('The caller pressed')) return { tool_calls: [{ name: 'send_dtmf', arguments: { digits: '2#' } }] };
      if (m.role === 'tool') return { content: 'Connecting you to billing.' };
      return { content: 'Sorry?' };
    });
    const call = await inboundPhoneCall('replay-keypad', '+14155550104');
    await eventually(async () => call.heardMs() >= 500, 15_000, 20);
    await new Promise((r) => setTimeout(r, 1000));
    for (const digit of ['4', '2']) {
      call.caller.dtmf(digit);
      await new Promise((r) => setTimeout(r, 300));
    }
    await eventually(async () => call.caller.heardDigits() === '2#', 20_000, 50);
    await eventually(async () => (await call.events()).some((e: any) => e.event_type === 'agent_spoke' && e.data.text === 'Connecting you to billing.'), 20_000, 50);
    await new Promise((r) => setTimeout(r, 1500));
    await call.caller.hangup();
    await h.temporal.workflow.getHandle(callWorkflowId(call.callId)).result();
    await save('voice-keypresses', callWorkflowId(call.callId));
  };

  // 10. A web call (docs/web-calls.md): a browser on /media/web, PCM at 16 kHz, the greeting, one
  //     question answered, the browser hangs up.
  //     With a knowledge base (`web-knowledge-call`): the gateway retrieves for the question in
  //     `auto` mode and the workflow records the outcome it reports (docs/knowledge-base.md).
  const recordWebCall = async (knowledgeBaseId?: string) => {
    const name = knowledgeBaseId ? 'replay-web-kb' : 'replay-web';
    await createAgent(h.db, h.box, { name, greeting: 'Hi, the clinic.', pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 }, ...(knowledgeBaseId ? { knowledge_base_ids: [knowledgeBaseId], knowledge_mode: 'auto', knowledge_timeout_ms: 2000 } : {}) });
    llm.setResponder(() => ({ content: 'Of course, which day suits you?' }));
    deepgram.script(['I would like to book an appointment for tomorrow.']);
    const started = await post('/api/calls/web', { agent_name: name });
    const caller = await connectWebCaller({ url: started.stream_url, callId: started.call_id, token: started.token });
    const heardMs = () => caller.speechFrames().length * FRAME_MS;
    await eventually(async () => heardMs() >= 500, 15_000, 20);
    const before = heardMs();
    await caller.say(HELLO_WAV);
    await eventually(async () => heardMs() >= before + 500, 15_000, 20);
    await caller.hangup();
    await h.temporal.workflow.getHandle(callWorkflowId(started.call_id)).result();
    await save(knowledgeBaseId ? 'web-knowledge-call' : 'web-call', callWorkflowId(started.call_id));
  };

  try {
    fs.mkdirSync(OUT, { recursive: true });
    if (process.argv.includes('--only-keypad')) return await recordKeypresses();
    if (process.argv.includes('--only-drain')) return await recordDrained();
    if (process.argv.includes('--only-web')) return await recordWebCall();
    if (process.argv.includes('--only-mcp')) return await recordMcpToolCall({ h, llm, hooks, save, post });
    if (process.argv.includes('--only-knowledge')) return await recordWebCall(await recordKnowledgeHistories({ h, llm, hooks, save, post }));
    if (process.argv.includes('--only-transfer')) return await recordTransfers();
    const recordWarm = async () => {
      await configureTwilio(h, TWILIO);
      await recordWarmTransfers({ h, llm, twilio, plivo, deepgram, helloWav: HELLO_WAV, save, inboundPhoneCall });
      // The Plivo warm transfer made Plivo the default provider: the later scenarios are Twilio calls.
      await configureTwilio(h, TWILIO);
    };
    if (process.argv.includes('--only-warm')) return await recordWarm();
    if (process.argv.includes('--only-voicemail')) return await recordVoicemail();
    if (process.argv.includes('--only-voice')) {
      await recordVoice((await createTool(h.db, h.box, { name: 'get_balance', webhook_url: `${hooks.url}/balance` })).id);
      await recordGreetingCutOff();
      return await recordTurnRun();
    }
    const tool = await recordTextHistories({ h, llm, hooks, save, post }, process.argv.includes('--only-analysis'));
    if (!tool) return;

    await recordVoice(tool.id);
    await recordGreetingCutOff();
    await recordTurnRun();
    await recordTransfers();
    await recordWarm();
    await recordVoicemail();
    await recordKeypresses();
    await recordWebCall();
    // The knowledge base the text scenarios made (record-knowledge-histories.ts).
    const bases = (await h.request('GET', '/api/knowledge-bases')).body as Array<{ id: string; name: string }>;
    await recordWebCall(bases.find((b) => b.name === 'replay-kb')!.id);
    await recordDrained();
  } finally {
    await gateway.stop();
    await h.stop();
    await Promise.all([twilio.stop(), plivo.stop(), deepgram.stop(), cartesia.stop()]);
    await llm.stop();
    await hooks.stop();
    await globalTeardown();
  }
}

runScript(main);
