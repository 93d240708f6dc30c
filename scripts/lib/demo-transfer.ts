/**
 * `npm run demo -- --scenario transfer [--provider twilio|plivo]`: an inbound call handed to a
 * human, offline. A caller asks for a person about their bill; the agent (a scripted LLM) picks
 * the `billing` destination with the builtin tool transfer_call, says its message, and the
 * platform asks the phone company to dial the destination on the live call (Twilio: the call
 * updated with TwiML `<Dial>`; Plivo: the Transfer Call API). The fake phone company records the
 * dial, the destination answers, and the call ends `completed` / `transferred`.
 *
 * Same real pieces as the clinic demo (scripts/demo.ts): the API, the call workflow, the media
 * gateway; the vendors are the fakes of test/fakes/. The caller's clip is an eSpeak NG recording
 * (scripts/lib/audio/talk-to-a-person.wav: `espeak-ng -v en-us -s 150 "Can I talk to a person
 * about my bill, please?"`, trimmed, 8 kHz, padded 0.3 s + 0.5 s as in test/fixtures/audio/README.md).
 */
import path from 'node:path';
import { startGateway } from '../../src/gateway/server';
import { getFreePort } from '../../src/temporal/dev-server';
import { startFakeCartesia } from '../../test/fakes/cartesia-server';
import { startFakeDeepgram } from '../../test/fakes/deepgram-server';
import { startFakeOpenAI, type FakeReply } from '../../test/fakes/openai-server';
import { FRAME_MS, nowMs } from '../../test/fakes/phone-caller';
import { startFakeTelephony, type FakeDial } from '../../test/fakes/telephony-fakes';
import type { Harness } from '../../test/support/harness';
import { isSpeech } from './caller-audio';
import { printEvents, printTranscript, type CallEvent } from './demo-report';
import { demoPlatformEnv } from './demo-env';
import { sleep, until } from './demo-wait';

const CLIP = { file: path.join(__dirname, 'audio', 'talk-to-a-person.wav'), text: 'Can I talk to a person about my bill, please?' };
const DESK_NUMBER = '+15005550008';
const CALLER_NUMBER = '+14155550188';
const VENDOR_KEY = 'demo-key';
const AGENT = 'acme-support';
const GREETING = 'Hello, this is Acme support. How can I help you?';
/** The providers whose calls can be transferred (docs/phone-operations.md, Transfer to a human). */
export const TRANSFER_PROVIDERS = ['twilio', 'plivo'];
const DESTINATIONS = [
  { name: 'billing', phone_number: '+14155550123', description: 'Invoices, refunds and payments', message: 'Connecting you to our billing team now.' },
  { name: 'sales', sip_uri: 'sip:sales@pbx.example.com', description: 'New plans and upgrades', message: 'One moment, I am putting you through to sales.' },
];

export interface TransferDemoOptions {
  startPlatform(env: Record<string, string>): Promise<Harness>;
  print?: (line: string) => void;
  provider?: string;
}

export interface TransferDemoResult {
  callId: string;
  call: Record<string, any>;
  events: CallEvent[];
  /** What the fake phone company dialled for the call. */
  dials: FakeDial[];
  /** The offered transfer_call tool, as the LLM saw it. */
  offeredTool: any;
}

export async function runTransferDemo(options: TransferDemoOptions): Promise<TransferDemoResult> {
  const print = options.print ?? ((line: string) => console.log(line));
  const provider = options.provider ?? 'twilio';
  if (!TRANSFER_PROVIDERS.includes(provider)) {
    throw new Error(`demo: ${provider} calls cannot be transferred (the transfer scenario runs on ${TRANSFER_PROVIDERS.join(', ')})`);
  }
  const phone = await startFakeTelephony(provider);
  const deepgram = await startFakeDeepgram({ apiKey: VENDOR_KEY });
  const cartesia = await startFakeCartesia({ apiKey: VENDOR_KEY });
  const openai = await startFakeOpenAI();
  const stops: Array<() => Promise<void>> = [() => phone.stop(), () => deepgram.stop(), () => cartesia.stop(), () => openai.stop()];
  print(`  Fakes        ${provider} ${Object.values(phone.env).join(' ')}, Deepgram ${deepgram.url}, Cartesia ${cartesia.url}, OpenAI ${openai.url}`);
  deepgram.script([CLIP.text]);
  let offeredTool: any = null;
  // What a real LLM would do here: the caller asks for a person about a bill → billing.
  openai.setResponder((body: any): FakeReply => {
    const last = body.messages[body.messages.length - 1];
    const tool = (body.tools ?? []).find((t: any) => t.function.name === 'transfer_call');
    if (last.role === 'user' && tool) {
      offeredTool = tool.function;
      return { tool_calls: [{ name: 'transfer_call', arguments: { destination: 'billing' } }] };
    }
    if (last.role === 'tool') return { content: 'I could not put you through, sorry. How else can I help?' };
    return { content: 'Sorry, could you say that again?' };
  });

  try {
    const gatewayPort = await getFreePort();
    const h = await options.startPlatform({
      ...demoPlatformEnv({ phoneEnv: phone.env, deepgram, cartesia, openai }, gatewayPort, VENDOR_KEY),
    });
    stops.unshift(() => h.stop());
    const gateway = await startGateway(h.gatewayDeps(), gatewayPort, '127.0.0.1');
    stops.unshift(() => gateway.stop());
    print(`  Platform     API ${h.api.url}, call worker (task queue ${h.taskQueue}), media gateway ${gateway.url}`);

    print('\nConfiguring the support line through the API:');
    const api = async (method: string, p: string, body?: unknown) => {
      const res = await h.request(method, p, { body });
      if (res.status >= 300) throw new Error(`${method} ${p} → ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const show = (method: string, p: string, what: string) => print(`  ${method.padEnd(5)}${p.padEnd(27)} ${what}`);
    await api('PUT', '/api/settings/telephony', { provider, public_base_url: h.api.url, ...phone.settings(DESK_NUMBER, 5) });
    show('PUT', '/api/settings/telephony', `${provider} credentials, number ${DESK_NUMBER}`);
    await api('POST', '/api/agents', {
      name: AGENT,
      prompt: 'You are the first line of Acme support on the phone. When the caller asks for a person, transfer them with transfer_call.',
      greeting: GREETING,
      stt_provider: 'deepgram',
      llm_provider: 'openai',
      tts_provider: 'cartesia',
      pipeline_settings: { vad_stop_secs: 0.5 },
      transfer_destinations: DESTINATIONS,
    });
    show('POST', '/api/agents', `${AGENT}: transfer_destinations ${DESTINATIONS.map((d) => `${d.name} (${d.phone_number ?? d.sip_uri})`).join(', ')}`);
    const endpoint = await api('POST', '/api/settings/endpoints', { phone_number: DESK_NUMBER, provider, inbound_agent_name: AGENT, label: 'Support' });
    show('POST', '/api/settings/endpoints', `${DESK_NUMBER} → ${AGENT}`);

    print('\nThe call (seconds since the phone rang):');
    const t0 = nowMs();
    const at = (ms: number) => ((ms - t0) / 1000).toFixed(2).padStart(6);
    const line = (ms: number, text: string) => print(`  ${at(ms)}  ${text}`);
    line(t0, `${CALLER_NUMBER} calls ${DESK_NUMBER}`);
    const fake = await phone.ringInbound({
      webhookUrl: endpoint.inbound_webhook_url,
      from: CALLER_NUMBER,
      to: DESK_NUMBER,
      statusCallbackUrl: `${h.api.url}/telephony/${provider}/status`,
    });
    if (!fake.caller || !fake.callId) throw new Error(`the call was not connected: ${fake.answer.status} ${fake.answer.body}`);
    const { caller, callId } = fake;
    line(caller.connectedAtMs, `the media stream is connected (call ${callId})`);
    const heard = (fromIdx = 0) => caller.played.slice(fromIdx).filter(isSpeech).length * FRAME_MS;
    await until('the greeting', () => heard() >= 1000, 20_000);
    await until('the end of the greeting', () => caller.bufferedMs() === 0 && nowMs() - (caller.played.at(-1)?.playedAtMs ?? 0) > 300, 20_000);
    line(nowMs(), `caller heard the greeting ("${GREETING}")`);
    await sleep(400);
    line(nowMs(), `caller says "${CLIP.text}"`);
    const beforeReply = caller.played.length;
    await caller.say(CLIP.file);
    const closed = await Promise.race([caller.closed, sleep(30_000).then(() => null)]);
    if (!closed) throw new Error('demo: the media stream was not handed over');
    line(nowMs(), `caller heard the agent for ${(heard(beforeReply) / 1000).toFixed(1)} s ("${DESTINATIONS[0]!.message}"); ${provider} ends our media stream (code ${closed.code})`);

    const dials = await until('the dial to the destination', () => {
      const d = phone.dials(fake.providerCallId);
      return d.length > 0 && d;
    }, 20_000);
    for (const d of dials) line(nowMs(), `${provider} dials ${d.to}: ${d.outcome === 'answer' ? 'answered — the caller now talks to billing' : d.outcome}`);

    const call = await until(
      'the end of the call',
      async () => {
        const c = (await h.request('GET', `/api/calls/${callId}`)).body;
        return ['completed', 'failed', 'no_answer'].includes(c.status) && c;
      },
      30_000,
    );
    print(`          GET /api/calls/{id}: ${call.status}, end_reason ${call.end_reason}, duration ${call.duration} s (until the hand-over)`);
    const events: CallEvent[] = (await h.request('GET', `/api/calls/${callId}/events`)).body;
    printTranscript(call, events, at, print);
    printEvents(events, at, print);
    return { callId, call, events, dials, offeredTool };
  } finally {
    for (const stop of stops) await stop().catch((err: Error) => print(`(stopping: ${err.message})`));
  }
}
