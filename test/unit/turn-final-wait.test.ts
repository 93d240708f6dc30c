/** The wait for the STT's final after the VAD stop is the adapter's to set (segment-based STT needs a round trip). */
import type { SttTranscript } from '../../src/providers/stt/types';
import { FINAL_WAIT_MS, TurnDetector, type CompletedTurn } from '../../src/gateway/turns/turn-detector';

const started = { type: 'speech_started' as const, at_ms: 1000, detected_at_ms: 1192 };
const stopped = { type: 'speech_stopped' as const, at_ms: 3000, detected_at_ms: 3192 };
const final = (text: string): SttTranscript => ({ text, isFinal: true, speechFinal: true, confidence: 1, fromFinalize: true, startSecs: 0, durationSecs: 1 });

function detector(finalWaitMs: (() => number | undefined) | undefined) {
  const turns: CompletedTurn[] = [];
  const d = new TurnDetector(3, { agentSpeaking: () => false, bargeIn: () => {}, finalize: () => {}, utterance: (t) => turns.push(t), finalWaitMs });
  return { d, turns };
}

describe('final wait per STT adapter', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('waits as long as the adapter asks for its final, so a 3 s REST round trip still completes the turn with its text', () => {
    const { d, turns } = detector(() => 4000);
    d.onVad(started);
    d.onVad(stopped, 10_000);
    jest.advanceTimersByTime(3000);
    expect(turns).toEqual([]);
    d.onTranscript(final('Book a table.'), 13_000);
    expect(turns.map((t) => [t.text, t.sttTtfbMs])).toEqual([['Book a table.', 3000]]);
  });

  it('uses FINAL_WAIT_MS when the adapter does not say', () => {
    const { d, turns } = detector(() => undefined);
    d.onVad(started);
    d.onTranscript({ ...final('hello there'), isFinal: false, fromFinalize: false, speechFinal: false });
    d.onVad(stopped);
    jest.advanceTimersByTime(FINAL_WAIT_MS - 1);
    expect(turns).toEqual([]);
    jest.advanceTimersByTime(2);
    expect(turns.map((t) => t.text)).toEqual(['hello there']);
  });
});
