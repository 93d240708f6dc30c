/** Dictation-aware end of turn: a turn stopped mid-number waits dictation_wait_secs for the caller to go on. */
import type { SttTranscript } from '../../src/providers/stt/types';
import { TurnDetector, type CompletedTurn } from '../../src/gateway/turns/turn-detector';
import { turnPolicyOf } from '../../src/shared/turn-policy';

const started = { type: 'speech_started' as const, at_ms: 1000, detected_at_ms: 1192 };
const stopped = { type: 'speech_stopped' as const, at_ms: 3000, detected_at_ms: 3192 };
const final = (text: string): SttTranscript => ({ text, isFinal: true, speechFinal: true, confidence: 1, fromFinalize: true, startSecs: 0, durationSecs: 1 });

function detector(settings = { vad_stop_secs: 0.2, dictation_wait_secs: 1.2 }) {
  const turns: CompletedTurn[] = [];
  let finalizes = 0;
  const d = new TurnDetector(turnPolicyOf(settings, 'en'), {
    agentSpeaking: () => false,
    bargeIn: () => {},
    finalize: () => finalizes++,
    utterance: (t) => turns.push(t),
  });
  return { d, turns, finalizes: () => finalizes };
}

describe('dictation-aware end of turn', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('ends a complete sentence at the VAD stop, as soon as its final arrives', () => {
    const { d, turns } = detector();
    d.onVad(started);
    d.onVad(stopped);
    d.onTranscript(final('I would like to book a table.'));
    expect(turns.map((t) => t.text)).toEqual(['I would like to book a table.']);
  });

  it('keeps a number dictated with a pause in one turn', () => {
    const { d, turns, finalizes } = detector();
    d.onVad(started);
    d.onVad(stopped);
    d.onTranscript(final('My number is nine eight seven six five.'));
    jest.advanceTimersByTime(500); // the caller's 700 ms pause: 200 ms VAD stop + 500 ms
    expect(turns).toEqual([]);
    d.onVad(started);
    d.onVad(stopped);
    expect(finalizes()).toBe(2);
    d.onTranscript(final('Four three two one zero.'));
    expect(turns).toEqual([]); // still digits: the caller may go on
    jest.advanceTimersByTime(999);
    expect(turns).toEqual([]);
    jest.advanceTimersByTime(2);
    expect(turns.map((t) => t.text)).toEqual(['My number is nine eight seven six five. Four three two one zero.']);
  });

  it('ends a turn stopped mid-dictation after dictation_wait_secs of silence in all', () => {
    const { d, turns } = detector({ vad_stop_secs: 0.3, dictation_wait_secs: 1.5 });
    d.onVad(started);
    d.onVad(stopped);
    d.onTranscript(final('I want to book a table and'));
    jest.advanceTimersByTime(1199);
    expect(turns).toEqual([]);
    jest.advanceTimersByTime(2);
    expect(turns.map((t) => t.text)).toEqual(['I want to book a table and']);
    expect(turns[0]!.sttTtfbMs).not.toBeNull();
  });

  it('a final arriving during the hold joins the turn without ending it early', () => {
    const { d, turns } = detector();
    d.onVad(started);
    d.onVad(stopped);
    d.onTranscript(final('nine eight seven'));
    d.onTranscript(final(''));
    jest.advanceTimersByTime(500);
    expect(turns).toEqual([]);
    jest.advanceTimersByTime(501);
    expect(turns.map((t) => t.text)).toEqual(['nine eight seven']);
  });

  it('a judge can be plugged in (a semantic end-of-turn model)', () => {
    const turns: CompletedTurn[] = [];
    const d = new TurnDetector(
      turnPolicyOf({}, 'en'),
      { agentSpeaking: () => false, bargeIn: () => {}, finalize: () => {}, utterance: (t) => turns.push(t) },
      { silenceMs: (text) => (text.endsWith('?') ? 200 : 800) },
    );
    d.onVad(started);
    d.onVad(stopped);
    d.onTranscript(final('Well'));
    expect(turns).toEqual([]);
    jest.advanceTimersByTime(601);
    expect(turns.map((t) => t.text)).toEqual(['Well']);
  });
});
