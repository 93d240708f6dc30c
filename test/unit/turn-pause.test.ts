/** Pause at once, decide after: speech over the agent holds its audio until the words decide. */
import type { SttTranscript } from '../../src/providers/stt/types';
import { TurnDetector, type CompletedTurn } from '../../src/gateway/turns/turn-detector';
import { turnPolicyOf } from '../../src/shared/turn-policy';

const started = { type: 'speech_started' as const, at_ms: 1000, detected_at_ms: 1192 };
const stopped = { type: 'speech_stopped' as const, at_ms: 3000, detected_at_ms: 3192 };
const final = (text: string): SttTranscript => ({ text, isFinal: true, speechFinal: true, confidence: 1, fromFinalize: true, startSecs: 0, durationSecs: 1 });
const interim = (text: string): SttTranscript => ({ ...final(text), isFinal: false, speechFinal: false, fromFinalize: false });

function detector(settings: Record<string, number> = {}) {
  const calls = { bargeIns: 0, resumed: [] as string[], turns: [] as CompletedTurn[], speaking: true };
  const d = new TurnDetector(turnPolicyOf({ min_words: 3, ...settings }, 'en'), {
    agentSpeaking: () => calls.speaking,
    bargeIn: () => calls.bargeIns++,
    finalize: () => {},
    utterance: (t) => calls.turns.push(t),
    resumed: (reason) => calls.resumed.push(reason),
  });
  return { d, calls };
}

describe('pause at once, decide after', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('pauses the agent at speech start and resumes it after a backchannel', () => {
    const { d, calls } = detector();
    expect(d.holdsAgent).toBe(false);
    d.onVad(started);
    expect(d.holdsAgent).toBe(true);
    d.onTranscript(interim('uh-huh'));
    d.onVad(stopped);
    expect(d.holdsAgent).toBe(true);
    d.onTranscript(final('Uh-huh.'));
    expect(d.holdsAgent).toBe(false);
    expect(calls.resumed).toEqual(['backchannel']);
    expect(calls.bargeIns).toBe(0);
    expect(calls.turns[0]).toMatchObject({ text: 'Uh-huh.', duringAgentSpeech: true });
  });

  it('an interruption cancels the paused agent instead', () => {
    const { d, calls } = detector();
    d.onVad(started);
    d.onTranscript(interim('wait'));
    expect(calls.bargeIns).toBe(1);
    expect(d.holdsAgent).toBe(false);
    expect(calls.resumed).toEqual([]);
  });

  it('resumes when no words come within false_interruption_secs; words after that still interrupt', () => {
    const { d, calls } = detector({ false_interruption_secs: 0.8 });
    d.onVad(started);
    jest.advanceTimersByTime(799);
    expect(d.holdsAgent).toBe(true);
    jest.advanceTimersByTime(2);
    expect(d.holdsAgent).toBe(false);
    expect(calls.resumed).toEqual(['no_words']);
    d.onTranscript(interim('I need the'));
    expect(calls.bargeIns).toBe(1);
  });

  it('does not pause with false_interruption_secs 0, nor when the agent is silent', () => {
    const off = detector({ false_interruption_secs: 0 });
    off.d.onVad(started);
    expect(off.d.holdsAgent).toBe(false);
    const silent = detector();
    silent.calls.speaking = false;
    silent.d.onVad(started);
    expect(silent.d.holdsAgent).toBe(false);
  });
});
