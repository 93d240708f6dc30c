/**
 * `<Conference>` as the fake Plivo plays it (a warm transfer): the call joins the room named by the
 * element's text. While the conference has not started (no member with `startConferenceOnEnter`
 * yet, which defaults to true), a member that entered with `startConferenceOnEnter="false"` hears
 * the `waitSound` URL's document — fetched signed like every callback, Play / Speak / Wait only
 * (Plivo ignores the rest), its `<Play>` WAV played in real time on a loop, every 20 ms frame
 * recorded on the call (`held`, with its loudness) so a test can tell hold audio from silence. The
 * member stays until it hangs up, the Transfer Call API moves it elsewhere, or a member with
 * `endConferenceOnExit` leaves (the conference ends; the others go on with their next element).
 */
import { parseWav } from '../../src/audio/wav';
import { playHoldLoop } from './hold-audio-loop';
import type { CallbackDelivery, CallState, FakePlivoConference } from './plivo-fake-types';
import { parseXml, type XmlElement } from './twilio-twiml';
import { deferred, type Deferred } from './plivo-wire';


// plivo.com/docs/voice/xml/conference: the element's attributes.
const ATTRIBUTES = new Set([
  'muted', 'beep', 'startConferenceOnEnter', 'endConferenceOnExit', 'waitSound', 'enterSound', 'exitSound', 'timeLimit', 'hangupOnStar',
  'maxMembers', 'record', 'recordWhenAlone', 'recordFileFormat', 'action', 'method', 'redirect', 'digitsMatch', 'callbackUrl', 'callbackMethod',
  'stayAlone', 'floorEvent', 'transcriptionType', 'transcriptionUrl', 'transcriptionMethod', 'relayDTMF',
]);
const BOOLEAN = ['muted', 'startConferenceOnEnter', 'endConferenceOnExit', 'stayAlone', 'hangupOnStar', 'record', 'redirect'];

export type Room = FakePlivoConference & { ended: Deferred<void>; started: Deferred<void> };

export interface ConferenceContext {
  conferences: Map<string, Room>;
  deliver(s: CallState, kind: CallbackDelivery['kind'], url: string, params: Record<string, string>): Promise<CallbackDelivery>;
  baseParams(s: CallState): Record<string, string>;
}

function roomOf(ctx: ConferenceContext, name: string): Room {
  let room = ctx.conferences.get(name);
  if (!room || room.endedAtMs !== null) {
    room = { name, members: [], joins: [], startedAtMs: null, endedAtMs: null, ended: deferred<void>(), started: deferred<void>() };
    ctx.conferences.set(name, room);
  }
  return room;
}

/** The element checked as Plivo checks it; the reason when Plivo would refuse it. */
export function conferenceProblem(el: XmlElement): string | null {
  if (!el.text.trim()) return 'Conference: no room name';
  for (const [k, v] of Object.entries(el.attrs)) {
    if (!ATTRIBUTES.has(k)) return `Conference: unknown attribute ${k}="${v}"`;
    if (BOOLEAN.includes(k) && v !== 'true' && v !== 'false') return `Conference: ${k} must be true or false, got "${v}"`;
  }
  const wait = el.attrs.waitSound;
  if (wait !== undefined && !/^https?:\/\/\S+$/.test(wait)) return `Conference: waitSound is not a URL: ${wait}`;
  return null;
}

/** The hold audio of `waitSound`: its document's first `<Play>`, fetched and decoded (8 kHz 16-bit WAV). */
async function waitAudio(ctx: ConferenceContext, s: CallState, room: Room, url: string): Promise<Int16Array | null> {
  const delivery = await ctx.deliver(s, 'conference-wait', url, { ...ctx.baseParams(s), ConferenceName: room.name });
  if (delivery.status !== 200) return null;
  let root: XmlElement;
  try {
    root = parseXml(delivery.body);
    if (root.name !== 'Response') throw new Error(`root element is <${root.name}>`);
  } catch (err) {
    s.record.errors.push(`waitSound: invalid XML: ${(err as Error).message}`);
    return null;
  }
  for (const el of root.children) if (!['Play', 'Speak', 'Wait'].includes(el.name)) s.record.errors.push(`waitSound: <${el.name}> is ignored there (Play, Speak, Wait only)`);
  const play = root.children.find((el) => el.name === 'Play');
  if (!play) return null;
  if (play.attrs.loop !== '0') s.record.errors.push(`waitSound: <Play loop="${play.attrs.loop ?? '1'}"> stops before the conference starts`);
  const audioUrl = play.text.trim();
  try {
    const res = await fetch(audioUrl);
    if (!res.ok) throw new Error(`answered ${res.status}`);
    const wav = parseWav(Buffer.from(await res.arrayBuffer()));
    if (wav.sampleRate !== 8000 || wav.channels !== 1) throw new Error(`the fake plays 8 kHz mono WAV only (got ${wav.sampleRate} Hz, ${wav.channels} channels)`);
    s.record.callbacks.push({ kind: 'play', url: audioUrl, method: 'GET', params: {}, signature: '', nonce: '', atMs: Date.now(), status: res.status, body: '' });
    return wav.samples;
  } catch (err) {
    s.record.errors.push(`waitSound: <Play> ${audioUrl}: ${(err as Error).message}`);
    return null;
  }
}

/** One member's time in the conference; resolves when it has left. */
export async function runConference(ctx: ConferenceContext, s: CallState, el: XmlElement): Promise<void> {
  const room = roomOf(ctx, el.text.trim());
  const uuid = s.record.callUuid;
  const starts = el.attrs.startConferenceOnEnter !== 'false';
  room.members.push(uuid);
  room.joins.push({ callUuid: uuid, atMs: Date.now() });
  s.record.conferences.push(room.name);
  if (starts && room.startedAtMs === null) {
    room.startedAtMs = Date.now();
    room.started.resolve();
  }
  const woken = deferred<void>();
  s.wake = () => woken.resolve();
  const leave = Promise.race([woken.promise, s.hangupRequested.promise, room.ended.promise]);
  if (room.startedAtMs === null && el.attrs.waitSound) {
    const audio = await waitAudio(ctx, s, room, el.attrs.waitSound);
    if (audio && room.startedAtMs === null) await playHoldLoop(s.record.held, audio, Promise.race([leave, room.started.promise]));
  }
  await leave;
  s.wake = undefined;
  room.members = room.members.filter((m) => m !== uuid);
  if (el.attrs.endConferenceOnExit === 'true' && room.endedAtMs === null) {
    room.endedAtMs = Date.now();
    room.ended.resolve();
  }
}
