/**
 * Warm transfer on Plivo (docs/phone-operations.md#warm-transfer), with Plivo's `<Conference>`:
 *
 * - **hold**: the Transfer Call API (`POST /Call/{call_uuid}/`, `legs=aleg`, `aleg_url` = our hold
 *   URL) moves the caller's leg off its `<Stream>` (our media stream closes) to the hold document,
 *   `<Conference startConferenceOnEnter="false" endConferenceOnExit="true" waitSound=…>`: alone and
 *   with a conference not started, the caller hears the `waitSound` URL's document (ours: `<Play
 *   loop="0">` of the hold audio) until the human joins; the caller leaving ends the conference.
 *   Plivo only takes XML by URL, so the same route serves both documents (`wait=1` on the
 *   waitSound URL tells them apart);
 * - **the human**: a call of its own (Make Call API) from our number, `answer_url` = our answer URL
 *   (a `<Stream>` to the media gateway: the briefing), `ring_url` and `hangup_url` = our events
 *   URL, `ring_timeout` = max_wait_secs, and `machine_detection=true` without a
 *   `machine_detection_url`: synchronous, Plivo runs no XML until it knows and then requests the
 *   answer URL with `Machine` — a machine is hung up before it hears anything of the briefing
 *   (the asynchronous mode would start the briefing on the answer and report the machine later);
 * - **join**: the Transfer Call API moves the human's call (its own A leg) to our join URL,
 *   `<Conference startConferenceOnEnter="true" endConferenceOnExit="true">` of the same name: the
 *   briefing stream ends (the agent leaves), the conference starts and the wait sound stops;
 * - **give back**: the Transfer Call API moves the caller's leg to our return URL (a new `<Stream>`);
 *   leaving the conference ends it.
 *
 * Make Call answers with a `request_uuid`; the human's `CallUUID` (what Transfer needs) first comes
 * with a callback, so the answer callback reports it and the workflow joins that id.
 */
import { Response } from 'plivo';
import type { HttpAnswer, WarmHumanReport, WarmTransferSupport } from '../types';
import { field, webhookParams } from '../webhook-fields';
import { callsFor, createPlivoCall, toProviderError, type PlivoCredentials } from './client';
import { e164ToPlivoNumber } from './webhooks';

interface PlivoXmlResponse {
  addConference(name: string, attributes: Record<string, string | boolean>): unknown;
  addPlay(url: string, attributes: { loop: number }): unknown;
  toXML(): string;
}
const response = () => (Response as unknown as () => PlivoXmlResponse)();
const xml = (body: string): HttpAnswer => ({ status: 200, contentType: 'text/xml', body });

// Plivo's own bound for ring_timeout.
const MAX_RING_SECS = 120;
/** The query parameter marking the waitSound fetch of the hold URL. */
const WAIT = 'wait';

/** The human leg's final CallStatus (hangup URL) → the report's outcome. */
const HUMAN_STATUS: Record<string, Exclude<WarmHumanReport['outcome'], 'answered'>> = {
  busy: 'busy',
  'no-answer': 'no_answer',
  timeout: 'no_answer',
  failed: 'failed',
  cancel: 'canceled',
  completed: 'completed',
};

/** The caller on hold: alone in a conference not started, hearing `waitSoundUrl` until the human joins. */
export function holdConferenceXml(conferenceName: string, waitSoundUrl: string): string {
  const r = response();
  // No enter/exit beeps: the caller should hear the hold audio, then the person, nothing else.
  r.addConference(conferenceName, { startConferenceOnEnter: false, endConferenceOnExit: true, stayAlone: true, waitSound: waitSoundUrl, enterSound: '', exitSound: '' });
  return r.toXML();
}

/** The human joining the caller: the conference starts (the wait sound stops); either leaving ends it. */
export function joinConferenceXml(conferenceName: string): string {
  const r = response();
  r.addConference(conferenceName, { startConferenceOnEnter: true, endConferenceOnExit: true, enterSound: '', exitSound: '' });
  return r.toXML();
}

/** The waitSound document: the hold audio on a loop (Plivo allows only Play, Speak and Wait there). */
export function holdAudioXml(audioUrl: string): string {
  const r = response();
  r.addPlay(audioUrl, { loop: 0 });
  return r.toXML();
}

/** The waitSound URL: the hold URL itself, marked. */
export function waitSoundUrl(holdUrl: string): string {
  const url = new URL(holdUrl);
  url.searchParams.set(WAIT, '1');
  return url.toString();
}

async function transfer(creds: PlivoCredentials, callUuid: string, url: string): Promise<void> {
  try {
    await callsFor(creds).transfer(callUuid, { legs: 'aleg', alegUrl: url, alegMethod: 'POST' });
  } catch (err) {
    throw toProviderError(err);
  }
}

export const plivoWarmTransfer: WarmTransferSupport<PlivoCredentials> = {
  async hold(creds, callUuid, req) {
    await transfer(creds, callUuid, req.holdUrl);
  },

  async dialHuman(creds, req) {
    const to = req.target.phoneNumber ? e164ToPlivoNumber(req.target.phoneNumber) : req.target.sipUri!;
    const ref = await createPlivoCall(creds, {
      to,
      from: e164ToPlivoNumber(req.from),
      answerUrl: req.answerUrl,
      hangupUrl: req.eventsUrl,
      ringUrl: req.eventsUrl,
      ringTimeoutSecs: Math.min(Math.max(1, Math.round(req.maxWaitSecs)), MAX_RING_SECS),
      syncMachineDetection: true,
    });
    return ref.sid;
  },

  async join(creds, humanCallUuid, _conferenceName, joinUrl) {
    await transfer(creds, humanCallUuid, joinUrl);
  },

  async giveBack(creds, callUuid, returnUrl) {
    try {
      await transfer(creds, callUuid, returnUrl);
    } catch (err) {
      // The caller hung up while on hold (Plivo knows no live call by that id): nothing to give back.
      if ((err as { kind?: string }).kind === 'not_found') return;
      throw err;
    }
  },

  holdDocument(audioUrl, at) {
    const url = new URL(at.url);
    if (url.searchParams.get(WAIT) === '1') return xml(holdAudioXml(audioUrl));
    return xml(holdConferenceXml(at.conferenceName, waitSoundUrl(at.url)));
  },

  joinDocument: (conferenceName) => xml(joinConferenceXml(conferenceName)),

  humanReport(req) {
    const params = webhookParams(req);
    const uuid = field(params, 'CallUUID') ?? null;
    // The synchronous detection's verdict rides on the answer URL request (`Machine=false`, or no
    // parameter at all, is a person).
    if (field(params, 'Machine')?.toLowerCase() === 'true') return { outcome: 'voicemail', humanCallId: uuid, detail: { machine: true } };
    const status = field(params, 'CallStatus');
    if (status === 'in-progress' && uuid) return { outcome: 'answered', humanCallId: uuid };
    const outcome = status ? HUMAN_STATUS[status] : undefined;
    if (!outcome) return null;
    const detail: Record<string, unknown> = { provider_status: status };
    const cause = field(params, 'HangupCause');
    if (cause) detail.hangup_cause = cause;
    const duration = field(params, 'Duration');
    if (duration) detail.duration = Number(duration);
    return { outcome, humanCallId: uuid, detail };
  },
};
