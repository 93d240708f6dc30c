/**
 * The pure parts of a warm transfer (docs/phone-operations.md#warm-transfer): Twilio's conference
 * TwiML and the human leg's callbacks, the briefing's prompts and how the briefed person's answer
 * is read, the built-in hold tone, and the destination settings' defaults.
 */
import { holdAudioTwiml, holdConferenceTwiml, joinConferenceTwiml, twilioWarmTransfer } from '../../src/providers/telephony/twilio/warm';
import { briefingDecision, briefingInput, fallbackSummary, summaryInstruction, transcriptText } from '../../src/shared/warm-briefing';
import { holdToneSamples, holdToneWav } from '../../src/audio/hold-tone';
import { parseWav } from '../../src/audio/wav';
import { warmSettings } from '../../src/shared/transfer';
import { warmUrls } from '../../src/calls/warm-transfer';
import { parseTwiml } from '../fakes/twilio-twiml';
import { analysisMessages } from '../../src/analysis/prompt';
import type { WebhookRequest } from '../../src/providers/telephony/types';

const form = (body: Record<string, string>): WebhookRequest => ({ method: 'POST', originalUrl: '/x', headers: {}, body, query: {} });

describe('Twilio warm-transfer TwiML', () => {
  it('holds the caller alone in the conference with the wait URL, and joins the destination to start it', () => {
    const hold = holdConferenceTwiml('warm-abc', 'https://api.example.com/telephony/twilio/warm/abc/hold?audio=https%3A%2F%2Fa.example%2Ft.wav');
    expect(hold).toContain('startConferenceOnEnter="false"');
    expect(hold).toContain('endConferenceOnExit="true"');
    expect(hold).toContain('waitMethod="POST"');
    expect(hold).toContain('audio=https%3A%2F%2Fa.example%2Ft.wav'); // escaped into the attribute, not broken
    const [dial] = parseTwiml(hold);
    expect(dial).toMatchObject({ verb: 'Dial', dial: { noun: 'Conference', to: 'warm-abc', conference: { startConferenceOnEnter: false, endConferenceOnExit: true } } });

    const [join] = parseTwiml(joinConferenceTwiml('warm-abc'));
    expect(join).toMatchObject({ verb: 'Dial', dial: { conference: { name: 'warm-abc', startConferenceOnEnter: true, endConferenceOnExit: true } } });
    expect(parseTwiml(holdAudioTwiml('https://cdn.example.com/hold.mp3'))).toEqual([{ verb: 'Play', url: 'https://cdn.example.com/hold.mp3', loop: 0 }]);
  });

  it("reads the destination leg's answer and status callbacks", () => {
    const sid = `CA${'1'.repeat(32)}`;
    expect(twilioWarmTransfer.humanReport(form({ CallSid: sid, CallStatus: 'in-progress', AnsweredBy: 'human' }))).toEqual({ outcome: 'answered', humanCallId: sid });
    expect(twilioWarmTransfer.humanReport(form({ CallSid: sid, CallStatus: 'in-progress', AnsweredBy: 'machine_start' }))).toMatchObject({ outcome: 'voicemail', detail: { answered_by: 'machine_start' } });
    expect(twilioWarmTransfer.humanReport(form({ CallSid: sid, CallStatus: 'in-progress', AnsweredBy: 'fax' }))!.outcome).toBe('voicemail');
    expect(twilioWarmTransfer.humanReport(form({ CallSid: sid, CallStatus: 'no-answer' }))).toMatchObject({ outcome: 'no_answer', humanCallId: sid });
    expect(twilioWarmTransfer.humanReport(form({ CallSid: sid, CallStatus: 'busy' }))!.outcome).toBe('busy');
    expect(twilioWarmTransfer.humanReport(form({ CallSid: sid, CallStatus: 'completed', CallDuration: '12' }))).toMatchObject({ outcome: 'completed', detail: { duration: 12 } });
    expect(twilioWarmTransfer.humanReport(form({ CallSid: sid, CallStatus: 'ringing' }))).toBeNull();
  });

  it('builds the URLs of a transfer; the built-in tone is served by the API', () => {
    const urls = warmUrls('https://api.example.com', 'twilio', 'abc', 'tone');
    expect(urls).toEqual({
      holdUrl: 'https://api.example.com/telephony/twilio/warm/abc/hold?audio=https%3A%2F%2Fapi.example.com%2Ftelephony%2Ftwilio%2Fhold-tone.wav',
      answerUrl: 'https://api.example.com/telephony/twilio/warm/abc/answer',
      eventsUrl: 'https://api.example.com/telephony/twilio/warm/abc/events',
      returnUrl: 'https://api.example.com/telephony/twilio/warm/abc/return',
      joinUrl: 'https://api.example.com/telephony/twilio/warm/abc/join',
    });
    expect(new URL(warmUrls('https://x.example', 'twilio', 'abc', 'https://cdn.example.com/m.mp3').holdUrl).searchParams.get('audio')).toBe('https://cdn.example.com/m.mp3');
  });
});

describe('the briefing', () => {
  it('reads 1 / connect / yes as connect, 2 / no as decline, anything else as a question', () => {
    for (const text of ['The caller pressed: 1', 'The caller pressed: 1 #', 'Connect them.', 'Yes, put them through', 'okay', 'No, connect them'])
      expect([text, briefingDecision(text)]).toEqual([text, 'connect']);
    for (const text of ['The caller pressed: 2', 'No.', 'I cannot take it now', "I can't take this one", 'decline'])
      expect([text, briefingDecision(text)]).toEqual([text, 'decline']);
    for (const text of ['What is the invoice number?', 'The caller pressed: 5', 'Hmm, which account?'])
      expect([text, briefingDecision(text)]).toEqual([text, 'question']);
  });

  it('gives the LLM the summary prompt and the transcript; falls back to the caller\'s words', () => {
    const transcript = transcriptText([
      { role: 'assistant', text: 'Hello.' },
      { role: 'user', text: 'I was charged twice.' },
    ]);
    expect(transcript).toBe('Agent: Hello.\nCaller: I was charged twice.');
    expect(summaryInstruction('the invoice number', 'billing')).toContain('tell them: the invoice number.');
    expect(briefingInput(transcript, 'Which invoice?')).toBe('The call so far:\nAgent: Hello.\nCaller: I was charged twice.\n\nYour colleague asks: Which invoice?');
    expect(briefingInput('')).toContain('(nothing was said yet)');
    expect(fallbackSummary('I was charged twice.')).toBe('A caller is waiting. Their last words were: I was charged twice.');
    expect(fallbackSummary(null)).toBe('A caller is waiting.');
  });

  it("puts the briefing's summary in the post-call analysis input", () => {
    const plan = { summaryPrompt: 'Summarise.', fields: {}, required: [], successCriteria: null, provider: 'openai', model: 'm' };
    const call = { transcript: [{ role: 'user' as const, text: 'I was charged twice.' }], date: '2026-12-02', direction: 'inbound', status: 'completed', endReason: 'transferred', durationSecs: 30, context: {} };
    expect(analysisMessages(plan, { ...call, transferSummary: 'A double charge on invoice 1234.' })[1]!.content).toContain('(warm transfer): A double charge on invoice 1234.');
    expect(analysisMessages(plan, call)[1]!.content).not.toContain('warm transfer');
  });

  it('fills the warm settings of a destination with their defaults', () => {
    expect(warmSettings({ name: 'b', phone_number: '+14155550123', description: 'd', message: '' })).toEqual({
      summaryPrompt: 'who is calling, what they want, what has been done',
      holdAudio: 'tone',
      maxWaitSecs: 30,
    });
  });
});

describe('the built-in hold tone', () => {
  it('is a 4 s 8 kHz WAV that is never silent for a 20 ms frame', () => {
    const wav = parseWav(holdToneWav());
    expect(wav).toMatchObject({ sampleRate: 8000, channels: 1, encoding: 'pcm16' });
    const samples = holdToneSamples();
    expect(samples.length).toBe(32_000);
    let quietest = Infinity;
    for (let at = 0; at + 160 <= samples.length; at += 160) {
      let sum = 0;
      for (let i = at; i < at + 160; i++) sum += samples[i]! * samples[i]!;
      quietest = Math.min(quietest, Math.sqrt(sum / 160));
    }
    // The hum alone (800 peak) is ~565 RMS: never below that, never clipping.
    expect(quietest).toBeGreaterThan(400);
    expect(Math.max(...samples.map(Math.abs))).toBeLessThan(8_000);
  });
});
