/**
 * `<Dial><Conference>` as the fake Twilio plays it (a warm transfer): a participant joins the named
 * conference; while it has not started (no participant with `startConferenceOnEnter` yet), a
 * waiting participant hears the `waitUrl` document — fetched signed like every webhook, its
 * `<Play>` audio fetched and played in real time on a loop, every 20 ms frame recorded on the call
 * (`held`, with its loudness) so a test can tell hold audio from silence. The participant stays
 * until it hangs up, a call update moves it elsewhere, or a participant with `endConferenceOnExit`
 * leaves (the conference ends).
 */
import { parseWav } from '../../src/audio/wav';
import type { TwimlConference, TwimlVerb } from './twilio-twiml';
import { parseTwiml } from './twilio-twiml';
import type { CallState, FakeTwilioContext } from './twilio-fake-types';
import { deferred, deliver } from './twilio-webhooks';

const FRAME_MS = 20;

function conferenceOf(ctx: FakeTwilioContext, name: string) {
  let conf = ctx.conferences.get(name);
  if (!conf || conf.endedAtMs !== null) {
    conf = { name, participants: [], joins: [], startedAtMs: null, endedAtMs: null, ended: deferred<void>(), started: deferred<void>() };
    ctx.conferences.set(name, conf);
  }
  return conf;
}

/** The hold audio of `waitUrl`: its document's first `<Play>`, fetched and decoded (8 kHz 16-bit WAV). */
async function holdAudio(s: CallState, conf: TwimlConference): Promise<Int16Array | null> {
  if (!conf.waitUrl) return null;
  const params = { AccountSid: s.record.accountSid, CallSid: s.record.sid, ConferenceSid: `CF${conf.name}`, FriendlyName: conf.name, QueueTime: '0' };
  const delivery = await deliver(s, 'conference-wait', conf.waitUrl, conf.waitMethod ?? 'POST', params);
  if (delivery.status !== 200) return null;
  let verbs: TwimlVerb[];
  try {
    verbs = parseTwiml(delivery.body);
  } catch (err) {
    s.record.errors.push(`12100 Document parse failure (waitUrl): ${(err as Error).message}`);
    return null;
  }
  const play = verbs.find((v) => v.verb === 'Play');
  if (!play || play.verb !== 'Play') return null;
  try {
    const res = await fetch(play.url);
    if (!res.ok) throw new Error(`answered ${res.status}`);
    const wav = parseWav(Buffer.from(await res.arrayBuffer()));
    if (wav.sampleRate !== 8000 || wav.channels !== 1) throw new Error(`the fake plays 8 kHz mono WAV only (got ${wav.sampleRate} Hz, ${wav.channels} channels)`);
    s.record.callbacks.push({ kind: 'play', url: play.url, method: 'GET', params: {}, signature: '', atMs: Date.now(), status: res.status, body: '' });
    return wav.samples;
  } catch (err) {
    s.record.errors.push(`11200 HTTP retrieval failure: <Play> ${play.url}: ${(err as Error).message}`);
    return null;
  }
}

/**
 * Plays `samples` on a loop into the participant's ear until `stop` settles: in real time by the
 * wall clock (a late timer plays the frames it owes, each stamped with its own time), as Twilio's
 * media server would, so a busy test process does not look like a silent line.
 */
function playLoop(s: CallState, samples: Int16Array, stop: Promise<unknown>): Promise<void> {
  const frame = (8000 * FRAME_MS) / 1000;
  const startMs = Date.now();
  let played = 0;
  let at = 0;
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      for (; startMs + played * FRAME_MS <= Date.now(); played++) {
        let sum = 0;
        for (let i = 0; i < frame; i++) {
          const v = samples[(at + i) % samples.length]!;
          sum += v * v;
        }
        at = (at + frame) % samples.length;
        s.record.held.push({ atMs: startMs + played * FRAME_MS, rms: Math.sqrt(sum / frame) });
      }
    }, FRAME_MS);
    void stop.then(() => {
      clearInterval(timer);
      resolve();
    });
  });
}

/** One participant's time in the conference. */
export async function runConference(ctx: FakeTwilioContext, s: CallState, conf: TwimlConference): Promise<void> {
  const room = conferenceOf(ctx, conf.name);
  const sid = s.record.sid;
  room.participants.push(sid);
  room.joins.push({ callSid: sid, atMs: Date.now() });
  if (conf.startConferenceOnEnter && room.startedAtMs === null) {
    room.startedAtMs = Date.now();
    room.started.resolve();
  }
  const woken = deferred<void>();
  s.wake = () => woken.resolve();
  const leave = Promise.race([woken.promise, s.hangupRequested.promise, room.ended.promise]);
  if (room.startedAtMs === null) {
    const audio = await holdAudio(s, conf);
    if (audio && room.startedAtMs === null) await playLoop(s, audio, Promise.race([leave, room.started.promise]));
  }
  await leave;
  s.wake = undefined;
  room.participants = room.participants.filter((p) => p !== sid);
  if (conf.endConferenceOnExit && room.endedAtMs === null) {
    room.endedAtMs = Date.now();
    room.ended.resolve();
  }
}
