/**
 * Plivo's warm-transfer documents and callbacks (src/providers/telephony/plivo/warm.ts): the hold
 * conference and its wait sound (both served by the hold URL), the join conference, and the
 * destination leg's answer and hangup callbacks read into the workflow's outcomes.
 */
import { holdAudioXml, holdConferenceXml, joinConferenceXml, plivoWarmTransfer, waitSoundUrl } from '../../src/providers/telephony/plivo/warm';
import { parseXml } from '../fakes/twilio-twiml';
import { conferenceProblem } from '../fakes/plivo-conference';
import type { WebhookRequest } from '../../src/providers/telephony/types';

const form = (body: Record<string, string>): WebhookRequest => ({ method: 'POST', originalUrl: '/x', headers: {}, body, query: {} });
const HOLD = 'https://api.example.com/telephony/plivo/warm/abc/hold?audio=https%3A%2F%2Fa.example%2Ft.wav';

describe('Plivo warm-transfer XML', () => {
  it('holds the caller alone in a conference not started, with the hold URL again as its wait sound', () => {
    const root = parseXml(holdConferenceXml('warm-abc', waitSoundUrl(HOLD)));
    const conference = root.children[0]!;
    expect(root.children).toHaveLength(1);
    expect(conference).toMatchObject({ name: 'Conference', text: 'warm-abc', attrs: { startConferenceOnEnter: 'false', endConferenceOnExit: 'true' } });
    expect(conference.attrs.waitSound).toBe(`${HOLD}&wait=1`);
    // Attributes Plivo documents, values it accepts (the fake checks them as Plivo does).
    expect(conferenceProblem(conference)).toBeNull();

    const join = parseXml(joinConferenceXml('warm-abc')).children[0]!;
    expect(join).toMatchObject({ name: 'Conference', text: 'warm-abc', attrs: { startConferenceOnEnter: 'true', endConferenceOnExit: 'true' } });
    expect(conferenceProblem(join)).toBeNull();
    expect(parseXml(holdAudioXml('https://cdn.example.com/hold.mp3')).children).toEqual([{ name: 'Play', attrs: { loop: '0' }, children: [], text: 'https://cdn.example.com/hold.mp3' }]);
  });

  it('serves the conference at the hold URL and the looped audio at its wait-sound URL', () => {
    const at = (url: string) => parseXml(plivoWarmTransfer.holdDocument('https://a.example/t.wav', { conferenceName: 'warm-abc', url }).body).children[0]!;
    expect(at(HOLD).name).toBe('Conference');
    expect(at(waitSoundUrl(HOLD))).toMatchObject({ name: 'Play', text: 'https://a.example/t.wav' });
    expect(parseXml(plivoWarmTransfer.joinDocument!('warm-abc').body).children[0]!.attrs.startConferenceOnEnter).toBe('true');
  });
});

describe("Plivo warm transfer: the destination leg's callbacks", () => {
  const uuid = '0b3c2d1e-0000-4000-8000-000000000001';
  it('reads the answer (the synchronous detection says Machine) and the hangup statuses', () => {
    expect(plivoWarmTransfer.humanReport(form({ CallUUID: uuid, CallStatus: 'in-progress', Machine: 'false' }))).toEqual({ outcome: 'answered', humanCallId: uuid });
    expect(plivoWarmTransfer.humanReport(form({ CallUUID: uuid, CallStatus: 'in-progress' }))).toEqual({ outcome: 'answered', humanCallId: uuid });
    expect(plivoWarmTransfer.humanReport(form({ CallUUID: uuid, CallStatus: 'in-progress', Machine: 'true' }))).toEqual({ outcome: 'voicemail', humanCallId: uuid, detail: { machine: true } });
    expect(plivoWarmTransfer.humanReport(form({ CallUUID: uuid, CallStatus: 'busy', HangupCause: 'USER_BUSY' }))).toEqual({ outcome: 'busy', humanCallId: uuid, detail: { provider_status: 'busy', hangup_cause: 'USER_BUSY' } });
    expect(plivoWarmTransfer.humanReport(form({ CallUUID: uuid, CallStatus: 'timeout', HangupCause: 'NO_ANSWER' }))!.outcome).toBe('no_answer');
    expect(plivoWarmTransfer.humanReport(form({ CallUUID: uuid, CallStatus: 'no-answer' }))!.outcome).toBe('no_answer');
    expect(plivoWarmTransfer.humanReport(form({ CallUUID: uuid, CallStatus: 'cancel' }))!.outcome).toBe('canceled');
    expect(plivoWarmTransfer.humanReport(form({ CallUUID: uuid, CallStatus: 'failed' }))!.outcome).toBe('failed');
    expect(plivoWarmTransfer.humanReport(form({ CallUUID: uuid, CallStatus: 'completed', Duration: '42' }))).toMatchObject({ outcome: 'completed', detail: { duration: 42 } });
    expect(plivoWarmTransfer.humanReport(form({ CallUUID: uuid, CallStatus: 'ringing' }))).toBeNull();
    expect(plivoWarmTransfer.humanReport(form({}))).toBeNull();
  });
});
