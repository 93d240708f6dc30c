/**
 * Warm transfer on Twilio (docs/phone-operations.md#warm-transfer), with Twilio's conference:
 *
 * - **hold**: the caller's live call is updated (Call resource update) with TwiML
 *   `<Dial><Conference startConferenceOnEnter="false" endConferenceOnExit="true" waitUrl=…>`: the
 *   running `<Connect><Stream>` ends and the caller waits alone in the conference, where Twilio
 *   plays the `waitUrl` document (ours: `<Play loop="0">` of the hold audio) until it starts;
 * - **the human**: a call of its own (Calls API) with synchronous answering-machine detection
 *   (`MachineDetection=Enable`: Twilio fetches the answer URL once it knows, with `AnsweredBy`),
 *   whose answer is a `<Connect><Stream>` to the media gateway — the briefing, the agent alone with
 *   the human; its status callback reports busy / no-answer / failed / the end;
 * - **join**: the human's call is updated with `<Dial><Conference startConferenceOnEnter="true"
 *   endConferenceOnExit="true">` of the same name: the briefing stream ends (the agent leaves), the
 *   conference starts, the hold audio stops and the two talk;
 * - **give back**: the caller's call is updated with our return URL (a new `<Connect><Stream>`).
 *
 * The Participants API (`POST /Conferences/{sid}/Participants`) would dial the human straight into
 * the conference, where the agent could only brief them with the caller listening (or with
 * coaching on a third leg); a separate call keeps the briefing private and reuses the stream.
 */
import twilio from 'twilio';
import type { HttpAnswer, WarmHumanReport, WarmTransferSupport } from '../types';
import { field, webhookParams } from '../webhook-fields';
import { createTwilioCall, toProviderError, twilioClient, type TwilioCredentials } from './client';

const { VoiceResponse } = twilio.twiml;
const twiml = (body: string): HttpAnswer => ({ status: 200, contentType: 'text/xml', body });

// Twilio answers 21220 when the call is no longer active.
const CALL_NOT_ACTIVE = 21220;

/** `AnsweredBy` words of a machine (synchronous AMD). */
const MACHINE = /^(machine_|fax$)/;

/** The human leg's final CallStatus → the report's outcome. */
const HUMAN_STATUS: Record<string, Exclude<WarmHumanReport['outcome'], 'answered'>> = {
  busy: 'busy',
  'no-answer': 'no_answer',
  failed: 'failed',
  canceled: 'canceled',
  completed: 'completed',
};

/** The caller on hold: alone in the conference, hearing `holdUrl`'s document until the human joins. */
export function holdConferenceTwiml(conferenceName: string, holdUrl: string): string {
  const response = new VoiceResponse();
  response.dial().conference(
    { startConferenceOnEnter: false, endConferenceOnExit: true, beep: 'false', waitUrl: holdUrl, waitMethod: 'POST' },
    conferenceName,
  );
  return response.toString();
}

/** The human joining the caller: the conference starts (the hold audio stops). */
export function joinConferenceTwiml(conferenceName: string): string {
  const response = new VoiceResponse();
  response.dial().conference({ startConferenceOnEnter: true, endConferenceOnExit: true, beep: 'false' }, conferenceName);
  return response.toString();
}

/** The waitUrl document: the hold audio on a loop (Twilio fetches the waitUrl again when it ends). */
export function holdAudioTwiml(audioUrl: string): string {
  const response = new VoiceResponse();
  response.play({ loop: 0 }, audioUrl);
  return response.toString();
}

async function update(creds: TwilioCredentials, callSid: string, params: { twiml: string } | { url: string; method: 'POST' }): Promise<void> {
  try {
    await twilioClient(creds).calls(callSid).update(params);
  } catch (err) {
    throw toProviderError(err);
  }
}

export const twilioWarmTransfer: WarmTransferSupport<TwilioCredentials> = {
  async hold(creds, callSid, req) {
    await update(creds, callSid, { twiml: holdConferenceTwiml(req.conferenceName, req.holdUrl) });
  },

  async dialHuman(creds, req) {
    const to = req.target.phoneNumber ?? req.target.sipUri!;
    const ref = await createTwilioCall(creds, {
      to,
      from: req.from,
      twimlUrl: req.answerUrl,
      statusCallbackUrl: req.eventsUrl,
      statusCallbackEvents: ['completed'],
      timeoutSecs: req.maxWaitSecs,
      syncMachineDetection: true,
    });
    return ref.sid;
  },

  async join(creds, humanSid, conferenceName) {
    await update(creds, humanSid, { twiml: joinConferenceTwiml(conferenceName) });
  },

  async giveBack(creds, callSid, returnUrl) {
    try {
      await update(creds, callSid, { url: returnUrl, method: 'POST' });
    } catch (err) {
      // The caller hung up while on hold: nothing to give back.
      if ((err as { code?: number }).code === CALL_NOT_ACTIVE) return;
      throw err;
    }
  },

  holdDocument: (audioUrl) => twiml(holdAudioTwiml(audioUrl)),

  humanReport(req) {
    const params = webhookParams(req);
    const sid = field(params, 'CallSid') ?? null;
    const answeredBy = field(params, 'AnsweredBy');
    const status = field(params, 'CallStatus');
    if (answeredBy && MACHINE.test(answeredBy)) return { outcome: 'voicemail', humanCallId: sid, detail: { answered_by: answeredBy } };
    if (status === 'in-progress' && sid) return { outcome: 'answered', humanCallId: sid };
    const outcome = status ? HUMAN_STATUS[status] : undefined;
    if (!outcome) return null;
    const detail: Record<string, unknown> = { provider_status: status };
    const duration = field(params, 'CallDuration');
    if (duration) detail.duration = Number(duration);
    return { outcome, humanCallId: sid, detail };
  },
};
