/**
 * `npm run demo -- --scenario backchannel [--provider twilio|exotel|plivo|web]`: how turn-taking
 * feels (docs/media-gateway.md, Barge-in and Backchannels), offline. A Hindi-speaking caller
 * asks for an appointment; while the agent reads out a long answer the caller says
 * "Haan ji, theek hai" (assent): the agent's audio pauses at once and resumes where the caller
 * stopped hearing it, and nothing is answered. Then the caller says "Ruko, ek minute" (wait,
 * one minute): the agent stops at the first word and answers.
 *
 * Same real pieces as the clinic demo (scripts/demo.ts): the API, the call workflow, the media
 * gateway; the vendors are the fakes of test/fakes/ (Deepgram streams its interim results word
 * by word, as the real one does). The caller's clips are the eSpeak NG recordings of
 * test/fixtures/audio/ (the speech energy counts; the transcripts are Deepgram's script).
 */
import path from 'node:path';
import { startGateway } from '../../src/gateway/server';
import { getFreePort } from '../../src/temporal/dev-server';
import { startFakeCartesia } from '../../test/fakes/cartesia-server';
import { startFakeDeepgram } from '../../test/fakes/deepgram-server';
import { startFakeOpenAI, type FakeReply } from '../../test/fakes/openai-server';
import { loadSpeechWav, nowMs } from '../../test/fakes/phone-caller';
import { startFakeTelephony } from '../../test/fakes/telephony-fakes';
import { connectWebCaller } from '../../test/fakes/web-caller';
import type { Harness } from '../../test/support/harness';
import { isSpeech } from './caller-audio';
import { printEvents, printTranscript, type CallEvent } from './demo-report';
import { demoPlatformEnv } from './demo-env';
import { sleep, until } from './demo-wait';

const FIXTURES = path.join(__dirname, '..', '..', 'test', 'fixtures', 'audio');
const QUESTION = { file: path.join(FIXTURES, 'hello-appointment.wav'), text: 'Mujhe kal ke liye appointment chahiye.' };
const ASSENT = 'Haan ji, theek hai.';
const WAIT = { file: path.join(FIXTURES, 'stop-wait.wav'), text: 'Ruko, ek minute.', onsetMs: 300 };
const LONG_REPLY =
  'Kal subah nau baje, gyarah baje aur dopahar teen baje ke slot khaali hain. Doctor Mehta subah aur Doctor Rao dopahar mein hain. Aap jo samay chahein bataiye.';
const AFTER_WAIT = 'Zaroor, aaram se.';
const CLINIC_NUMBER = '+15005550009';
const CALLER_NUMBER = '+919800000001';
const VENDOR_KEY = 'demo-key';
const AGENT = 'clinic-hindi';
const GREETING = 'Namaste, Sunrise Clinic. Main aapki kya madad kar sakti hoon?';

export interface BackchannelDemoOptions {
  startPlatform(env: Record<string, string>): Promise<Harness>;
  print?: (line: string) => void;
  provider?: string;
}

export interface BackchannelDemoResult {
  callId: string;
  call: Record<string, any>;
  events: CallEvent[];
  /** The caller's assent: whether the agent went on after it, and the clears the caller got by then. */
  assent: { resumed: boolean; clears: number };
  /** "Ruko": its onset sent → the gateway's clear received (ms). */
  waitClearMs: number | null;
  /** "Ruko": its onset sent → the end of the last agent frame the caller heard (ms). */
  waitSilenceMs: number;
  /** The assent: its onset sent → the end of the last agent frame heard before the pause (ms). */
  assentSilenceMs: number;
}

export async function runBackchannelDemo(options: BackchannelDemoOptions): Promise<BackchannelDemoResult> {
  const print = options.print ?? ((line: string) => console.log(line));
  const provider = options.provider ?? 'twilio';
  // `web`: a browser on the web channel (test/fakes/web-caller.ts) instead of a phone line.
  const phone = provider === 'web' ? null : await startFakeTelephony(provider);
  const deepgram = await startFakeDeepgram({ apiKey: VENDOR_KEY });
  const cartesia = await startFakeCartesia({ apiKey: VENDOR_KEY });
  const openai = await startFakeOpenAI();
  const stops: Array<() => Promise<void>> = [async () => phone?.stop(), () => deepgram.stop(), () => cartesia.stop(), () => openai.stop()];
  print(`  Fakes        ${provider} ${Object.values(phone?.env ?? {}).join(' ')}, Deepgram ${deepgram.url}, Cartesia ${cartesia.url}, OpenAI ${openai.url}`);
  deepgram.script([QUESTION.text, ASSENT]);
  openai.setResponder((body: any): FakeReply => {
    const last = String(body.messages[body.messages.length - 1]?.content ?? '');
    return { content: last.startsWith('Ruko') ? AFTER_WAIT : LONG_REPLY };
  });

  try {
    const gatewayPort = await getFreePort();
    const h = await options.startPlatform(demoPlatformEnv({ phoneEnv: phone?.env ?? {}, deepgram, cartesia, openai }, gatewayPort, VENDOR_KEY));
    stops.unshift(() => h.stop());
    const gateway = await startGateway(h.gatewayDeps(), gatewayPort, '127.0.0.1');
    stops.unshift(() => gateway.stop());
    print(`  Platform     API ${h.api.url}, call worker (task queue ${h.taskQueue}), media gateway ${gateway.url}`);

    print('\nConfiguring the clinic line through the API:');
    const api = async (method: string, p: string, body?: unknown) => {
      const res = await h.request(method, p, { body });
      if (res.status >= 300) throw new Error(`${method} ${p} → ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    if (phone) await api('PUT', '/api/settings/telephony', { provider, public_base_url: h.api.url, ...phone.settings(CLINIC_NUMBER, 5) });
    // The defaults: min_words 3, the built-in Hindi and English phrases, false_interruption_secs 1.
    await api('POST', '/api/agents', {
      name: AGENT,
      prompt: 'You are the receptionist of Sunrise Clinic. Speak Hindi.',
      greeting: GREETING,
      stt_provider: 'deepgram',
      stt_language: 'hi-IN',
      llm_provider: 'openai',
      tts_provider: 'cartesia',
      tts_language: 'hi',
      pipeline_settings: { vad_stop_secs: 0.4 },
    });
    print(`  POST /api/agents             ${AGENT}: stt_language hi-IN, the default turn policy (min_words 3)`);
    const endpoint = phone ? await api('POST', '/api/settings/endpoints', { phone_number: CLINIC_NUMBER, provider, inbound_agent_name: AGENT, label: 'Clinic' }) : null;

    print('\nThe call (seconds since the phone rang):');
    const t0 = nowMs();
    const at = (ms: number) => ((ms - t0) / 1000).toFixed(2).padStart(6);
    const line = (ms: number, text: string) => print(`  ${at(ms)}  ${text}`);
    const { caller, callId } = await (async () => {
      if (!phone) {
        const web = await api('POST', '/api/calls/web', { agent_name: AGENT });
        return { caller: await connectWebCaller({ url: web.stream_url, callId: web.call_id, token: web.token }), callId: web.call_id as string };
      }
      const fake = await phone.ringInbound({ webhookUrl: endpoint.inbound_webhook_url, from: CALLER_NUMBER, to: CLINIC_NUMBER, statusCallbackUrl: `${h.api.url}/telephony/${provider}/status` });
      if (!fake.caller || !fake.callId) throw new Error(`the call was not connected: ${fake.answer.status} ${fake.answer.body}`);
      return { caller: fake.caller, callId: fake.callId };
    })();
    const heard = (fromIdx = 0) => caller.played.slice(fromIdx).filter(isSpeech).length * 20;
    const quiet = () => caller.bufferedMs() === 0 && nowMs() - (caller.played.filter(isSpeech).at(-1)?.playedAtMs ?? 0) > 300;
    await until('the greeting', () => heard() >= 1000, 20_000);
    await until('the end of the greeting', quiet, 20_000);
    line(nowMs(), `caller heard the greeting ("${GREETING}")`);

    line(nowMs(), `caller says "${QUESTION.text}"`);
    const beforeReply = caller.played.length;
    await caller.say(QUESTION.file);
    await until('the long reply', () => heard(beforeReply) >= 1500, 20_000);
    line(nowMs(), 'the agent reads out the free slots …');

    // 2.66 s of continuous speech (the clip's 1200–3860 ms) stands for "Haan ji, theek hai".
    const rate = caller.format.sampleRate;
    const assentPcm = loadSpeechWav(QUESTION.file, rate).subarray((rate * 1100) / 1000, (rate * 4000) / 1000);
    line(nowMs(), `caller says "${ASSENT}" over the agent`);
    const assent = await caller.say(assentPcm);
    const onset = assent.startedAtMs + 100;
    await sleep(1200);
    const resumed = caller.played.some((f) => isSpeech(f) && f.playedAtMs > assent.endedAtMs);
    const lastBefore = caller.played.filter((f) => isSpeech(f) && f.playedAtMs <= onset + 400).at(-1)?.playedAtMs ?? onset;
    const firstAfter = caller.played.find((f) => isSpeech(f) && f.playedAtMs > onset + 400)?.playedAtMs ?? nowMs();
    line(lastBefore, `the agent goes quiet at the caller's ear (${Math.round(lastBefore - onset)} ms after the caller's speech began)`);
    line(firstAfter, resumed ? `the agent resumes where the caller stopped hearing it, ${Math.round(firstAfter - assent.endedAtMs)} ms after the caller stopped` : 'the agent did not resume');

    await until('the end of the long reply', quiet, 30_000);
    line(nowMs(), `caller says "${WAIT.text}" over the next answer`);
    deepgram.script(['Aur kya options hain?', WAIT.text]);
    const beforeSecond = caller.played.length;
    await caller.say(QUESTION.file);
    await until('the second reply', () => heard(beforeSecond) >= 1000, 20_000);
    const clearsBefore = caller.clears.length;
    const wait = await caller.say(WAIT.file);
    const clear = caller.clears[clearsBefore];
    const waitOnset = caller.sentAtOffset(wait, WAIT.onsetMs);
    const waitClearMs = clear ? clear.atMs - waitOnset : null;
    const quietAt = caller.played.filter((f) => isSpeech(f) && f.playedAtMs >= waitOnset && f.playedAtMs < (clear?.atMs ?? Infinity)).at(-1)?.playedAtMs ?? waitOnset;
    line(quietAt, `the agent goes quiet at the caller's ear (${Math.round(quietAt - waitOnset)} ms after "Ruko" began)`);
    line(clear?.atMs ?? nowMs(), clear ? `"Ruko" is an interruption word: the reply is cancelled, the line cleared (${Math.round(waitClearMs!)} ms, at its first interim transcript)` : 'no clear');
    await until('the answer to "Ruko"', async () => {
      const transcript = (await h.request('GET', `/api/calls/${callId}`)).body.transcript as Array<{ text: string }>;
      return transcript.some((t) => t.text === AFTER_WAIT);
    }, 20_000);
    await until('the end of the answer', quiet, 20_000);
    line(nowMs(), `caller heard "${AFTER_WAIT}" and hangs up`);
    await caller.hangup();

    const call = await until('the end of the call', async () => {
      const c = (await h.request('GET', `/api/calls/${callId}`)).body;
      return ['completed', 'failed', 'no_answer'].includes(c.status) && c;
    }, 30_000);
    const events: CallEvent[] = (await h.request('GET', `/api/calls/${callId}/events`)).body;
    printTranscript(call, events, at, print);
    printEvents(events, at, print);
    return {
      callId,
      call,
      events,
      assent: { resumed, clears: clearsBefore },
      waitClearMs,
      waitSilenceMs: quietAt + 20 - waitOnset,
      assentSilenceMs: lastBefore + 20 - onset,
    };
  } finally {
    for (const stop of stops) await stop().catch((err: Error) => print(`(stopping: ${err.message})`));
  }
}
