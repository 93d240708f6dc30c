/**
 * `npm run demo [-- --provider twilio|exotel|plivo] [--scenario clinic|transfer|voicemail|backchannel]`: one complete
 * phone call (or, for voicemail, two outbound calls), offline,
 * through the real API, call workflow and media gateway. The vendors are the local fakes of
 * test/fakes/ speaking their real protocols on 127.0.0.1: the phone company (default Twilio:
 * webhook, answer document, a caller on its media stream playing recorded speech),
 * Deepgram (scripted transcripts), Cartesia (a tone as long as the text), OpenAI (a scripted
 * receptionist), and a webhook receiver as the clinic's booking backend.
 *
 * Everything is configured through the API as a user would: telephony settings, two webhook
 * tools, an agent, and the phone number's endpoint, whose `inbound_webhook_url` the fake vendor
 * then calls. The caller asks for an appointment, hears the agent check the clinic's calendar
 * and read out the free slots, interrupts it, picks a time, and the agent books it, says goodbye
 * and hangs up. Printed: what the caller hears and says as it happens, then the transcript, the
 * events, latency figures and where the recording is.
 *
 * The caller's clips are eSpeak NG recordings: test/fixtures/audio/ and scripts/lib/audio/
 * nine-please.wav (`espeak-ng -v en-us -s 150 "Nine o'clock please."`, trimmed, 8 kHz, padded
 * 0.3 s + 0.5 s with sox as in test/fixtures/audio/README.md).
 *
 * `--scenario transfer`: the caller asks for a person and is handed to one (scripts/lib/demo-transfer.ts).
 * `--scenario backchannel`: a Hindi caller's "haan ji" pauses and resumes the agent, "ruko" stops it
 * (scripts/lib/demo-backchannel.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { readWavFile } from '../src/audio/wav';
import { startGateway } from '../src/gateway/server';
import { setLogLevel } from '../src/shared/logger';
import { getFreePort } from '../src/temporal/dev-server';
import { startFakeCartesia } from '../test/fakes/cartesia-server';
import { startFakeDeepgram } from '../test/fakes/deepgram-server';
import { fakeSpeechMs } from '../test/fakes/fake-tts-audio';
import { startFakeOpenAI } from '../test/fakes/openai-server';
import { bytesForMs } from '../src/audio/format';
import { FRAME_MS, nowMs } from '../test/fakes/phone-caller';
import { startFakeTelephony } from '../test/fakes/telephony-fakes';
import { startWebhookReceiver } from '../test/fakes/webhook-receiver';
import type { Harness } from '../test/support/harness';
import { firstSpeechReceivedAfter, fmtMs, isSpeech, loadClip, silentAfter, speechTimes, type SpeechClip } from './lib/caller-audio';
import { CHECKING, CLINIC_NUMBER, clinicBackend, configureClinic, receptionist, VAD_STOP_SECS } from './lib/demo-clinic';
import { printEvents, printTranscript, type CallEvent } from './lib/demo-report';
import { demoPlatformEnv } from './lib/demo-env';

const AUDIO = path.join(__dirname, '..', 'test', 'fixtures', 'audio');
const CLIPS = {
  question: { file: path.join(AUDIO, 'hello-appointment.wav'), text: 'Hello, I would like to book an appointment for tomorrow.' },
  stop: { file: path.join(AUDIO, 'stop-wait.wav'), text: 'Stop, wait a second.' },
  nine: { file: path.join(__dirname, 'lib', 'audio', 'nine-please.wav'), text: "Nine o'clock, please." },
};
type ClipName = keyof typeof CLIPS;

const CALLER_NUMBER = '+14155550123';
const VENDOR_KEY = 'demo-key';
/** The caller interrupts after hearing this much of the agent's list of free slots. */
const BARGE_IN_AFTER_MS = 2500;

export interface DemoOptions {
  /** Starts the API and the worker (startHarness) with the given environment (the fakes' URLs). */
  startPlatform(env: Record<string, string>): Promise<Harness>;
  print?: (line: string) => void;
  /** `full` (default): the booking to the agent's goodbye. `short`: the caller hangs up after the barge-in. */
  script?: 'full' | 'short';
  /** The telephony vendor whose fake carries the call (default twilio). */
  provider?: string;
}

export interface TurnLatency {
  said: string;
  /** Caller side: first agent audio received − (end of the caller's speech + vad_stop_secs). */
  ttfbMs: number | null;
}

export interface DemoResult {
  callId: string;
  /** GET /api/calls/{id} at the end. */
  call: Record<string, any>;
  events: CallEvent[];
  turns: TurnLatency[];
  /** The caller's speech start (the barge-in) → the line silent / the `clear` received. */
  bargeIn: { silentAfterMs: number | null; clearAfterMs: number | null };
  recording: { path: string; seconds: number; downloadStatus: number } | null;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function until<T>(what: string, check: () => T | undefined | null | false, timeoutMs: number, stepMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`demo: ${what} did not happen within ${timeoutMs / 1000} s`);
    await sleep(stepMs);
  }
}

// ---- the demo -----------------------------------------------------------------------------------

export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const print = options.print ?? ((line: string) => console.log(line));
  const full = (options.script ?? 'full') === 'full';
  const clips = Object.fromEntries(Object.entries(CLIPS).map(([k, v]) => [k, loadClip(v.file)])) as Record<ClipName, SpeechClip>;

  const provider = options.provider ?? 'twilio';
  const phone = await startFakeTelephony(provider);
  const deepgram = await startFakeDeepgram({ apiKey: VENDOR_KEY });
  const cartesia = await startFakeCartesia({ apiKey: VENDOR_KEY });
  const openai = await startFakeOpenAI();
  const clinic = await startWebhookReceiver();
  const stops: Array<() => Promise<void>> = [() => phone.stop(), () => deepgram.stop(), () => cartesia.stop(), () => openai.stop(), () => clinic.stop()];
  print(`  Fakes        ${provider} ${Object.values(phone.env).join(' ')}, Deepgram ${deepgram.url}, Cartesia ${cartesia.url}, OpenAI ${openai.url}`);
  print(`               clinic backend (webhook receiver) ${clinic.url}`);
  deepgram.script([CLIPS.question.text, CLIPS.stop.text, CLIPS.nine.text]);
  openai.setResponder(receptionist);
  clinic.respond(clinicBackend, { times: Infinity });

  let monitor: NodeJS.Timeout | undefined;
  try {
    const gatewayPort = await getFreePort();
    const h = await options.startPlatform({
      ...demoPlatformEnv({ phoneEnv: phone.env, deepgram, cartesia, openai }, gatewayPort, VENDOR_KEY),
      // The clinic backend listens on loopback: the outbound guard lets the tools reach it.
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    });
    stops.unshift(() => h.stop());
    const gateway = await startGateway(
      h.gatewayDeps(),
      gatewayPort,
      '127.0.0.1',
    );
    stops.unshift(() => gateway.stop());
    print(`  Platform     API ${h.api.url}, call worker (task queue ${h.taskQueue}), media gateway ${gateway.url} (task queue ${gateway.taskQueue})`);

    // ---- configuration, through the API ----------------------------------------------------------
    print('\nConfiguring the clinic through the API:');
    const api = async (method: string, p: string, body?: unknown) => {
      const res = await h.request(method, p, { body });
      if (res.status >= 300) throw new Error(`${method} ${p} → ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const endpoint = await configureClinic({ api, print, provider, phone, clinicUrl: clinic.url, publicBaseUrl: h.api.url });

    // ---- the call -------------------------------------------------------------------------------
    print('\nThe call (seconds since the phone rang):');
    const t0 = nowMs();
    const at = (ms: number) => ((ms - t0) / 1000).toFixed(2).padStart(6);
    const line = (ms: number, text: string) => print(`  ${at(ms)}  ${text}`);
    line(t0, `${CALLER_NUMBER} calls ${CLINIC_NUMBER}: ${provider} POSTs ${endpoint.inbound_webhook_url}`);
    const fake = await phone.ringInbound({
      webhookUrl: endpoint.inbound_webhook_url,
      from: CALLER_NUMBER,
      to: CLINIC_NUMBER,
      statusCallbackUrl: `${h.api.url}/telephony/${provider}/status`,
    });
    if (!fake.caller || !fake.callId) throw new Error(`the call was not connected: ${fake.answer.status} ${fake.answer.body}`);
    const caller = fake.caller;
    const callId = fake.callId;
    line(caller.connectedAtMs, `the answer connects a stream to ${fake.streamUrl}: the media stream is connected (call ${callId}, ${caller.format.encoding} ${caller.format.sampleRate} Hz)`);

    // What the caller hears, printed as it happens: agent audio spans, clears, backend requests.
    let playedIdx = 0;
    let clearIdx = 0;
    let requestIdx = 0;
    let span: { start: number; end: number } | null = null;
    const spans: Array<{ start: number; end: number }> = [];
    const watch = () => {
      for (; playedIdx < caller.played.length; playedIdx++) {
        const f = caller.played[playedIdx]!;
        if (!isSpeech(f)) continue;
        if (span && f.playedAtMs <= span.end + 100) span.end = f.playedAtMs + FRAME_MS;
        else {
          if (span) closeSpan();
          span = { start: f.playedAtMs, end: f.playedAtMs + FRAME_MS };
          line(span.start, 'caller hears the agent speaking…');
        }
      }
      if (span && nowMs() - span.end > 100) closeSpan();
      for (; clearIdx < caller.clears.length; clearIdx++) {
        const c = caller.clears[clearIdx]!;
        const droppedMs = Math.round((c.droppedBytes / bytesForMs(caller.format, FRAME_MS)) * FRAME_MS);
        line(
          c.atMs,
          droppedMs > 0
            ? `gateway → "clear" (barge-in): ${provider} drops the ${droppedMs} ms of agent audio it had buffered`
            : 'gateway → "clear" (barge-in confirmed; the line was already quiet: new agent audio was held back while the VAD decided)',
        );
      }
      for (; requestIdx < clinic.requests.length; requestIdx++) {
        const r = clinic.requests[requestIdx]!;
        const args = r.method === 'GET' ? JSON.stringify(r.query) : r.raw;
        line(r.received_at.getTime(), `clinic backend ← ${r.method} ${r.path} ${args}`);
      }
    };
    const closeSpan = () => {
      line(span!.end, `  …agent audio ends (${((span!.end - span!.start) / 1000).toFixed(1)} s heard)`);
      spans.push(span!);
      span = null;
    };
    monitor = setInterval(watch, 20);

    const speechHeardSince = (fromIdx: number) => {
      let n = 0;
      for (let i = fromIdx; i < caller.played.length; i++) if (isSpeech(caller.played[i]!)) n++;
      return n * FRAME_MS;
    };
    /** Waits until agent audio received after `afterMs` has been played and the line stayed quiet for 300 ms. */
    const agentDone = (what: string, afterMs: number) =>
      until(
        what,
        () => {
          const frames = caller.played;
          for (let i = frames.length - 1; i >= 0 && frames[i]!.receivedAtMs >= afterMs; i--) {
            if (isSpeech(frames[i]!)) return caller.bufferedMs() === 0 && nowMs() - frames[i]!.playedAtMs > 300;
          }
          return false;
        },
        20_000,
      );
    const turns: Array<{ clip: ClipName; startMs: number; endMs: number; heardFromIdx: number }> = [];
    const say = async (clip: ClipName) => {
      const heardFromIdx = caller.played.length;
      line(nowMs(), `caller says "${CLIPS[clip].text}"  (${path.basename(CLIPS[clip].file)})`);
      const spoken = await caller.say(CLIPS[clip].file);
      const times = speechTimes(clips[clip], spoken);
      turns.push({ clip, ...times, heardFromIdx });
      return times;
    };

    await agentDone('the greeting', 0);
    await sleep(600);
    await say('question');
    const answerFrom = turns[0]!.heardFromIdx;
    await until('the list of free slots', () => speechHeardSince(answerFrom) >= fakeSpeechMs(CHECKING) + BARGE_IN_AFTER_MS, 20_000);
    const stop = await say('stop');
    await agentDone('the answer to the interruption', stop.endMs);
    if (full) {
      await sleep(1200);
      await say('nine');
      const closed = await Promise.race([caller.closed, sleep(25_000).then(() => null)]);
      if (!closed) throw new Error('demo: the agent did not end the call');
      watch();
      if (span) closeSpan();
      line(closed.atMs, `the ${closed.by === 'gateway' ? 'agent' : 'caller'} hung up (the media stream closed, code ${closed.code})`);
    } else {
      await sleep(500);
      const closed = await caller.hangup();
      line(closed.atMs, 'the caller hangs up');
    }

    const call = await untilAsync(async () => {
      const c = (await h.request('GET', `/api/calls/${callId}`)).body;
      return ['completed', 'failed', 'no_answer'].includes(c.status) && c;
    }, 20_000);
    await sleep(100);
    watch();
    if (span) closeSpan();
    clearInterval(monitor);
    monitor = undefined;
    print(`          GET /api/calls/{id}: ${call.status}, end_reason ${call.end_reason}, duration ${call.duration} s`);
    const events: CallEvent[] = (await h.request('GET', `/api/calls/${callId}/events`)).body;

    // ---- transcript and events ------------------------------------------------------------------
    printTranscript(call, events, at, print);
    printEvents(events, at, print);

    // ---- latency --------------------------------------------------------------------------------
    print(`\nLatency (caller side: from the fake phone's frame timings; vad_stop_secs ${VAD_STOP_SECS}):`);
    const turnLatency: TurnLatency[] = turns.map((t) => {
      const decided = t.endMs + VAD_STOP_SECS * 1000;
      const first = firstSpeechReceivedAfter(caller.played, t.endMs, t.heardFromIdx);
      return { said: CLIPS[t.clip].text, ttfbMs: first ? first.receivedAtMs - decided : null };
    });
    for (const t of turnLatency) {
      const note = t.said === CLIPS.nine.text ? ' (the agent books the slot with the clinic backend first)' : '';
      print(`  reply to "${t.said}": first agent audio ${fmtMs(t.ttfbMs)} after end of speech + ${VAD_STOP_SECS} s${note}`);
    }
    const metrics = events.filter((e) => e.event_type === 'ttfb_metric').map((e) => e.data);
    const byProcessor = (p: string) => metrics.filter((m) => m.processor === p);
    print(
      `  gateway e2e ttfb_metric (end of speech → first audio on the socket): ` +
        byProcessor('e2e').map((m) => `${m.ms} ms (${m.after_vad_stop_ms} ms after the VAD stop)`).join(', '),
    );
    print(
      `  parts: ${['stt', 'llm', 'tts'].map((p) => `${p} ${byProcessor(p).map((m) => `${m.ms}`).join('/') || '–'} ms`).join(' · ')}` +
        '  (stt: VAD stop → final transcript; llm: time to first token; tts: first sentence → first audio)',
    );
    print(
      "  (the caller-side figures also hold the VAD's own end-of-speech detection — Silero hears speech a little past the last loud frame, " +
        "and the stop time is counted in 32 ms windows; the gateway's figures start at the VAD's decision)",
    );
    const bargeTurn = turns.find((t) => t.clip === 'stop')!;
    // Agent audio before the VAD could have ended the caller's turn is the interrupted answer.
    const silentAt = silentAfter(caller.played, bargeTurn.startMs, bargeTurn.endMs + VAD_STOP_SECS * 1000);
    const clear = caller.clears.find((c) => c.atMs >= bargeTurn.startMs - FRAME_MS);
    const bargeIn = { silentAfterMs: silentAt === null ? null : silentAt - bargeTurn.startMs, clearAfterMs: clear ? clear.atMs - bargeTurn.startMs : null };
    print(
      `  barge-in: the caller starts "${CLIPS.stop.text}" → the agent's audio stops for good after ${fmtMs(bargeIn.silentAfterMs)}; ` +
        `"clear" arrived after ${fmtMs(bargeIn.clearAfterMs)}`,
    );

    // ---- recording ------------------------------------------------------------------------------
    let recording: DemoResult['recording'] = null;
    if (call.recording_path && fs.existsSync(call.recording_path)) {
      const wav = readWavFile(call.recording_path);
      const seconds = wav.samples.length / wav.channels / wav.sampleRate;
      const download = await h.request('GET', `/api/recordings/${callId}`);
      recording = { path: call.recording_path, seconds, downloadStatus: download.status };
      print(`\nRecording: ${call.recording_path}`);
      print(`  ${seconds.toFixed(1)} s, ${wav.channels === 2 ? 'stereo (caller left, agent right)' : `${wav.channels} channel(s)`}, ${wav.sampleRate} Hz; also GET /api/recordings/${callId} → ${download.status}`);
    } else print('\nRecording: none');
    return { callId, call, events, turns: turnLatency, bargeIn, recording };
  } finally {
    if (monitor) clearInterval(monitor);
    for (const stop of stops) await stop().catch((err: Error) => print(`(stopping: ${err.message})`));
  }
}

async function untilAsync<T>(check: () => Promise<T | undefined | null | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`demo: the call did not end within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

/** `--<name> <value>` or `--<name>=<value>`. */
function arg(name: string, fallback: string): string {
  const argv = process.argv.slice(2);
  const i = argv.indexOf(`--${name}`);
  const value = i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  return value ?? fallback;
}

/** `--provider <vendor>` (default twilio). */
const providerArg = () => arg('provider', 'twilio');

/** `--scenario <name>`: the inbound clinic call (default), transfer (scripts/lib/demo-transfer.ts) or voicemail (scripts/lib/demo-voicemail.ts). */
const SCENARIOS = ['clinic', 'transfer', 'voicemail', 'backchannel'];

async function main(): Promise<void> {
  const started = performance.now();
  // The demo prints its own story; the platform logs only warnings and errors.
  setLogLevel('warn');
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const scenario = arg('scenario', 'clinic');
  if (!SCENARIOS.includes(scenario)) throw new Error(`unknown scenario "${scenario}" (scenarios: ${SCENARIOS.join(', ')})`);
  const story = scenario === 'voicemail' ? 'outbound calls meeting an answering machine and a person' : `a simulated inbound phone call (${scenario})`;
  console.log(`Voice Agent Platform demo: ${story} (${providerArg()}), offline\n\nStarting:`);
  const { startLocalServices } = await import('./lib/local-services');
  const { startHarness } = await import('../test/support/harness');
  const services = await startLocalServices((l) => console.log(l));
  try {
    const startPlatform = (env: Record<string, string>) => startHarness({ env, worker: true });
    if (scenario === 'voicemail') {
      const { runVoicemailDemo } = await import('./lib/demo-voicemail');
      const result = await runVoicemailDemo({ startPlatform, provider: providerArg() });
      if (result.machine.call.end_reason !== 'voicemail') throw new Error(`the machine's call ended ${result.machine.call.end_reason}`);
    } else if (scenario === 'backchannel') {
      const { runBackchannelDemo } = await import('./lib/demo-backchannel');
      const result = await runBackchannelDemo({ startPlatform, provider: providerArg() });
      if (!result.assent.resumed || result.waitClearMs === null) throw new Error('the agent did not resume after the assent, or "ruko" did not stop it');
    } else {
      const result =
        scenario === 'transfer'
          ? await (await import('./lib/demo-transfer')).runTransferDemo({ startPlatform, provider: providerArg() })
          : await runDemo({ startPlatform, provider: providerArg() });
      if (result.call.status !== 'completed') throw new Error(`the call ended ${result.call.status}`);
    }
  } finally {
    await services.stop();
  }
  console.log(`\nDone in ${((performance.now() - started) / 1000).toFixed(0)} s; everything started has been stopped.`);
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: Error) => {
      console.error(`\ndemo failed: ${err.stack ?? err.message}`);
      process.exit(1);
    },
  );
}
