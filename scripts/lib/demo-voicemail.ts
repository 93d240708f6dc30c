/**
 * `npm run demo -- --scenario voicemail [--provider twilio|plivo|exotel]`: an outbound reminder
 * campaign meets an answering machine, offline, through the real API, call workflow and media
 * gateway (docs/phone-operations.md#voicemail-on-outbound-calls). The vendor fake dials; the callee is a machine
 * playing its recorded greeting (eSpeak NG) and a beep; the vendor's own AMD (Twilio, Plivo) is
 * scripted to answer too late, so the gateway's detector decides. The agent's greeting starts as
 * usual, stops when the machine is recognised, the message is left after the beep, and the call
 * ends `completed` / `voicemail`. Then a person answers with "Hello?": the greeting plays whole.
 */
import { getFreePort } from '../../src/temporal/dev-server';
import { startGateway } from '../../src/gateway/server';
import { startFakeCartesia } from '../../test/fakes/cartesia-server';
import { startFakeDeepgram } from '../../test/fakes/deepgram-server';
import { startFakeExotel } from '../../test/fakes/exotel-server';
import { startFakeOpenAI } from '../../test/fakes/openai-server';
import { startFakePlivo } from '../../test/fakes/plivo-server';
import { startFakeTwilio } from '../../test/fakes/twilio-server';
import { FRAME_MS, type PhoneCaller } from '../../test/fakes/phone-caller';
import type { Harness } from '../../test/support/harness';
import { configureExotel, configurePlivo, configureTwilio } from '../../test/support/telephony';
import { HELLO_QUESTION_WAV, machineGreeting, pauseAndBeep } from '../../test/support/voicemail-audio';
import { demoPlatformEnv } from './demo-env';

const KEY = 'demo-key';
const OUR_NUMBER = '+15005550006';
const MACHINE = '+14155550311';
const PERSON = '+14155550312';
/** How long the person listens for the whole greeting (3.5 s of fake TTS) before hanging up anyway. */
const GREETING_PATIENCE_MS = 15_000;

export interface VoicemailDemoOptions {
  startPlatform(env: Record<string, string>): Promise<Harness>;
  print?: (line: string) => void;
  provider?: string;
}

export interface VoicemailDemoResult {
  machine: { call: Record<string, any>; events: Array<{ event_type: string; data: any }>; messageAfterBeepMs: number | null };
  person: { call: Record<string, any>; events: Array<{ event_type: string; data: any }>; greetingHeardMs: number };
}

interface Phone {
  env: Record<string, string>;
  configure(h: Harness): Promise<unknown>;
  /** Scripts who answers `to` (the vendor's AMD verdict comes late: the gateway decides first). */
  answers(to: string, machine: boolean): void;
  nextCaller(): Promise<PhoneCaller>;
  stop(): Promise<void>;
}

async function phoneFor(provider: string): Promise<Phone> {
  if (provider === 'twilio') {
    const f = await startFakeTwilio({ accountSid: `AC${'d3'.repeat(16)}`, authToken: 'demo-twilio-auth-token-012345678' });
    return {
      env: { TWILIO_API_BASE_URL: f.apiBaseUrl },
      configure: (h) => configureTwilio(h, { accountSid: f.accountSid, authToken: 'demo-twilio-auth-token-012345678', phoneNumber: OUR_NUMBER }),
      answers: (to, machine) => f.setOutcome({ outcome: 'answer', amd: { answeredBy: machine ? 'machine' : 'human', decidedMs: machine ? 30_000 : 1800, greetingEndMs: 30_000 } }, to),
      nextCaller: () => f.nextCaller(20_000),
      stop: () => f.stop(),
    };
  }
  if (provider === 'plivo') {
    const creds = { authId: 'MADEMOVOICEMAILAUTHID', authToken: 'demo-plivo-auth-token-0123456' };
    const f = await startFakePlivo(creds);
    return {
      env: { PLIVO_API_BASE_URL: f.apiBaseUrl },
      configure: (h) => configurePlivo(h, { ...creds, phoneNumber: OUR_NUMBER }),
      answers: (to, machine) => f.setOutcome({ outcome: 'answer', amd: { machine, decidedMs: machine ? 10_000 : 1800 } }, to),
      nextCaller: () => f.nextCaller(20_000),
      stop: () => f.stop(),
    };
  }
  if (provider === 'exotel') {
    const creds = { accountSid: 'demovoicemail', apiKey: 'demo-exotel-key', apiToken: 'demo-exotel-token-0123456789' };
    const f = await startFakeExotel(creds);
    return {
      env: { EXOTEL_API_BASE_URL: f.apiBaseUrl },
      configure: (h) => configureExotel(h, { ...creds, phoneNumber: OUR_NUMBER }),
      answers: (to) => f.setOutcome('answer', to),
      nextCaller: () => f.nextCaller(20_000),
      stop: () => f.stop(),
    };
  }
  throw new Error(`the voicemail scenario runs on twilio, plivo or exotel, not ${provider}`);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function runVoicemailDemo(options: VoicemailDemoOptions): Promise<VoicemailDemoResult> {
  const print = options.print ?? ((line: string) => console.log(line));
  const provider = options.provider ?? 'twilio';
  const phone = await phoneFor(provider);
  const deepgram = await startFakeDeepgram({ apiKey: KEY });
  const cartesia = await startFakeCartesia({ apiKey: KEY });
  const openai = await startFakeOpenAI();
  openai.setResponder(() => ({ content: 'Sorry, could you say that again?' }));
  const stops: Array<() => Promise<void>> = [() => phone.stop(), () => deepgram.stop(), () => cartesia.stop(), () => openai.stop()];
  try {
    const gatewayPort = await getFreePort();
    const h = await options.startPlatform({
      ...demoPlatformEnv({ phoneEnv: phone.env, deepgram, cartesia, openai }, gatewayPort, KEY),
    });
    stops.unshift(() => h.stop());
    const gateway = await startGateway(h.gatewayDeps(), gatewayPort, '127.0.0.1');
    stops.unshift(() => gateway.stop());
    await phone.configure(h);
    const api = async (method: string, p: string, body?: unknown) => {
      const res = await h.request(method, p, { body });
      if (res.status >= 300) throw new Error(`${method} ${p} → ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const voicemail = { detect: true, action: 'leave_message', message: 'Hi {{first_name}}, this is the clinic: your appointment is tomorrow at nine. Call us back to change it.' };
    await api('POST', '/api/agents', {
      name: 'reminder',
      prompt: 'You remind patients of their appointments.',
      greeting: 'Hi {{first_name}}, this is the clinic calling about your appointment.',
      pipeline_settings: { min_words: 3 },
      voicemail,
    });
    print(`\nAgent "reminder": voicemail ${JSON.stringify(voicemail)}`);

    // ---- a machine answers ----------------------------------------------------------------------
    phone.answers(MACHINE, true);
    print(`\nCall 1 (${provider}): ${MACHINE} is an answering machine (seconds since the stream connected)`);
    const machineCall = await place(api, phone, MACHINE);
    const { caller, callId } = machineCall;
    const t0 = caller.connectedAtMs;
    const at = (ms: number) => ((ms - t0) / 1000).toFixed(2).padStart(6);
    const rate = caller.format.sampleRate;
    const greeting = await caller.say(machineGreeting(rate));
    const beep = await caller.say(pauseAndBeep(rate));
    const timeline: Array<[number, string]> = [
      [greeting.startedAtMs, 'the machine plays its greeting ("Hi, you have reached Sam and Alex…", 7.4 s)'],
      [beep.endedAtMs - 500, '…then its beep (1 kHz, 0.5 s), and records'],
    ];
    const call1 = await finalCall(api, callId);
    const events1 = (await api('GET', `/api/calls/${callId}/events`)) as Array<{ event_type: string; data: any; timestamp: string }>;
    const spans = speechSpans(caller);
    for (const s of spans) timeline.push([s.start, `the line carries agent speech for ${((s.end - s.start) / 1000).toFixed(1)} s`]);
    for (const e of events1.filter((x) => x.event_type.startsWith('voicemail_'))) timeline.push([Date.parse(e.timestamp), `event ${e.event_type} ${JSON.stringify(e.data)}`]);
    for (const [ms, text] of timeline.sort((a, b) => a[0] - b[0])) print(`  ${at(ms)}  ${text}`);
    const afterBeep = spans.find((s) => s.start >= beep.endedAtMs);
    print(`  → status ${call1.status}, end_reason ${call1.end_reason}, answered_by ${call1.answered_by}`);

    // ---- a person answers -----------------------------------------------------------------------
    phone.answers(PERSON, false);
    print(`\nCall 2 (${provider}): ${PERSON} is a person who says "Hello?"`);
    const personCall = await place(api, phone, PERSON);
    void personCall.caller.say(HELLO_QUESTION_WAV);
    const t1 = personCall.caller.connectedAtMs;
    const first = await waitFor(() => personCall.caller.speechFrames()[0], 15_000);
    print(`  the greeting reaches the person ${Math.round(first.playedAtMs - t1)} ms after the stream connected (detection adds nothing)`);
    // The person listens until the greeting has played to its end (its end mark comes back), then
    // hangs up; a greeting cut short never sends that mark, and shows as the little that was heard.
    const greetingEnd = () => personCall.caller.marksEchoed.some((m) => m.name.endsWith(':end') && !m.cleared);
    await waitFor(() => greetingEnd() || Date.now() - first.playedAtMs > GREETING_PATIENCE_MS, GREETING_PATIENCE_MS + 5000);
    // The echoed mark reaches the gateway before the hang-up: the greeting ends whole, not cut by it.
    await sleep(300);
    await personCall.caller.hangup();
    const call2 = await finalCall(api, personCall.callId);
    const heard = personCall.caller.speechFrames().length * FRAME_MS;
    const events2 = (await api('GET', `/api/calls/${personCall.callId}/events`)) as Array<{ event_type: string; data: any }>;
    print(`  → heard ${(heard / 1000).toFixed(1)} s of greeting; status ${call2.status}, end_reason ${call2.end_reason}, answered_by ${call2.answered_by}`);
    return {
      machine: { call: call1, events: events1, messageAfterBeepMs: afterBeep ? Math.round(afterBeep.start - beep.endedAtMs) : null },
      person: { call: call2, events: events2, greetingHeardMs: heard },
    };
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
  }
}

async function place(api: (m: string, p: string, b?: unknown) => Promise<any>, phone: Phone, to: string) {
  const next = phone.nextCaller();
  const placed = await api('POST', '/api/calls/outbound', { phone_number: to, agent_name: 'reminder', custom_parameters: { first_name: 'Asha' } });
  return { caller: await next, callId: placed.call_id as string };
}

async function finalCall(api: (m: string, p: string) => Promise<any>, callId: string) {
  return waitFor(async () => {
    const c = await api('GET', `/api/calls/${callId}`);
    return ['completed', 'failed', 'no_answer'].includes(c.status) && c.end_time ? c : null;
  }, 40_000);
}

async function waitFor<T>(check: () => T | Promise<T>, timeoutMs: number): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`demo: nothing happened within ${timeoutMs / 1000} s`);
    await sleep(50);
  }
}

/** Agent speech on the line, as spans of frames at most 100 ms apart. */
function speechSpans(caller: PhoneCaller): Array<{ start: number; end: number }> {
  const spans: Array<{ start: number; end: number }> = [];
  for (const f of caller.speechFrames()) {
    const last = spans.at(-1);
    if (last && f.playedAtMs <= last.end + 100) last.end = f.playedAtMs + FRAME_MS;
    else spans.push({ start: f.playedAtMs, end: f.playedAtMs + FRAME_MS });
  }
  return spans;
}


