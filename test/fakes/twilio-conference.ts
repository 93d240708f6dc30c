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
import { playHoldLoop } from './hold-audio-loop';
import type { TwimlConference, TwimlVerb } from './twilio-twiml';
import { parseTwiml } from './twilio-twiml';
import type { CallState, FakeTwilioContext } from './twilio-fake-types';
import { deferred, deliver } from './twilio-webhooks';


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
    if (audio && room.startedAtMs === null) await playHoldLoop(s.record.held, audio, Promise.race([leave, room.started.promise]));
  }
  await leave;
  s.wake = undefined;
  room.participants = room.participants.filter((p) => p !== sid);
  if (conf.endConferenceOnExit && room.endedAtMs === null) {
    room.endedAtMs = Date.now();
    room.ended.resolve();
  }
}
