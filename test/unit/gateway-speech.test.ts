/**
 * The gateway's speech logic without sockets: sentence splitting of streamed LLM text, paced
 * playback and what the caller heard, and turn detection / barge-in decisions.
 */
import { PCM16_16K, PCM16_8K } from '../../src/audio/format';
import type { Pacer } from '../../src/gateway/speech/pacer';
import type { AgentSpeech, SpeechResult } from '../../src/gateway/speech/agent-speech';
import { LEAD_MS, Playback, type PlaybackFraming } from '../../src/gateway/speech/playback';
import { MAX_SENTENCE_CHARS, SentenceSplitter, splitSentences } from '../../src/gateway/speech/sentences';
import { FINAL_WAIT_MS, TurnDetector, type CompletedTurn } from '../../src/gateway/turns/turn-detector';
import type { SttTranscript } from '../../src/providers/stt/types';

describe('sentence splitting', () => {
  it('emits each sentence as soon as it is known to have ended', () => {
    const s = new SentenceSplitter();
    expect(s.push('Sure, I can')).toEqual([]);
    expect(s.push(' help.')).toEqual([]); // a period alone does not prove the end
    expect(s.push(' What')).toEqual(['Sure, I can help.']);
    expect(s.push(' time?! Great…')).toEqual(['What time?!']);
    expect(s.push(' Bye\nNext')).toEqual(['Great…', 'Bye']);
    expect(s.flush()).toBe('Next');
    expect(s.flush()).toBeNull();
  });

  it('does not split abbreviations, decimals or list numbers', () => {
    expect(splitSentences('Dr. Smith costs 3.5 dollars, e.g. cash. Thanks.')).toEqual(['Dr. Smith costs 3.5 dollars, e.g. cash.', 'Thanks.']);
    expect(splitSentences('1. Bring your card. 2. Arrive early.')).toEqual(['1. Bring your card.', '2. Arrive early.']);
    expect(splitSentences('He said "stop." Then left.')).toEqual(['He said "stop."', 'Then left.']);
  });

  it('splits CJK sentences and cuts run-ons at a comma or space', () => {
    expect(splitSentences('你好。请问？')).toEqual(['你好。', '请问？']);
    const runOn = `${'word '.repeat(30)}and, ${'more '.repeat(40)}`;
    const parts = splitSentences(runOn);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(MAX_SENTENCE_CHARS);
    expect(parts.join(' ')).toBe(runOn.trim());
    expect(parts[0]!.endsWith('and,')).toBe(true);
  });
});

const inertPacer = { add() {}, remove() {} } as unknown as Pacer;

function makePlayback(hold = () => false, framing: PlaybackFraming = {}) {
  const sent: Array<{ kind: string; name?: string; slot?: number; bytes?: number }> = [];
  const finished: Array<{ id: string; result: SpeechResult }> = [];
  const playback = new Playback(
    {
      media: (frame) => sent.push({ kind: 'media', bytes: frame.length }),
      mark: (name) => sent.push({ kind: 'mark', name }),
      clear: () => sent.push({ kind: 'clear' }),
      sent: () => undefined,
    },
    { started: () => undefined, finished: (s: AgentSpeech, result) => finished.push({ id: s.id, result }) },
    hold,
    framing,
    inertPacer,
  );
  return { playback, sent, finished, frames: () => sent.filter((m) => m.kind === 'media').length };
}

/** mu-law audio of `ms` milliseconds (content does not matter here). */
const audio = (ms: number) => Buffer.alloc(ms * 8, 0x55);

describe('paced playback', () => {
  it('frames 16-bit PCM at 16 kHz in 640-byte 20 ms frames, with the same lead, marks and heard text', () => {
    const { playback, sent, frames, finished } = makePlayback(() => false, { format: PCM16_16K });
    const s = playback.start('u1', 'u1');
    playback.addSentence(s, 'One two three.');
    playback.addSentence(s, 'Four five six.');
    // 1680 ms of 16 kHz PCM, arriving in odd-sized chunks (a sample split across two of them).
    const pcm = Buffer.alloc(1680 * 32, 0x11);
    for (let i = 0; i < pcm.length; i += 999) playback.audio('u1', pcm.subarray(i, i + 999));
    playback.ttsFinished('u1', true);
    const t0 = performance.now();
    expect(frames()).toBe(LEAD_MS / 20);
    for (let t = 20; t <= 2000; t += 20) playback.pace(t0 + t);
    expect(frames()).toBe(84);
    expect(sent.filter((m) => m.kind === 'media').every((m) => m.bytes === 640)).toBe(true);
    expect(sent.findIndex((m) => m.name === 'u1:0')).toBe(42);
    playback.onMark('u1:end');
    expect(finished[0]!.result).toEqual({ heardText: 'One two three. Four five six.', interrupted: false, playedMs: 1680, whole: true });
    expect(s.audioMs).toBe(1680);
  });

  it('sends a vendor\'s longer frames (100 ms of 8 kHz PCM) at most two frames ahead of the line', () => {
    const { playback, sent, frames } = makePlayback(() => false, { format: PCM16_8K, frameMs: 100 });
    const s = playback.start('u1', 'u1');
    playback.addSentence(s, 'A long enough sentence to fill a second.');
    playback.audio('u1', Buffer.alloc(1000 * 16, 0x22));
    playback.ttsFinished('u1', true);
    const t0 = performance.now();
    expect(frames()).toBe(2); // 200 ms queued at the vendor
    playback.pace(t0 + 50);
    expect(frames()).toBe(2);
    playback.pace(t0 + 100);
    expect(frames()).toBe(3);
    for (let t = 120; t <= 1200; t += 20) playback.pace(t0 + t);
    expect(frames()).toBe(10);
    expect(sent.filter((m) => m.kind === 'media').every((m) => m.bytes === 1600)).toBe(true);
    // Barge-in after 500 ms: what is still buffered at the vendor (up to two frames) was not heard.
    const { playback: p2, finished } = makePlayback(() => false, { format: PCM16_8K, frameMs: 100 });
    const s2 = p2.start('u2', 'u2');
    p2.addSentence(s2, 'x'.repeat(20));
    p2.audio('u2', Buffer.alloc(2000 * 16, 0x22));
    const t1 = performance.now();
    for (let t = 20; t <= 500; t += 20) p2.pace(t1 + t);
    p2.interrupt(t1 + 500);
    expect(finished[0]!.result.interrupted).toBe(true);
    expect(finished[0]!.result.playedMs).toBeGreaterThanOrEqual(400);
    expect(finished[0]!.result.playedMs).toBeLessThanOrEqual(600);
  });

  it('keeps only LEAD_MS ahead of real time and marks sentences and the end', () => {
    const { playback, sent, frames, finished } = makePlayback();
    const s = playback.start('u1', 'u1');
    playback.addSentence(s, 'One two three.'); // 14 chars
    playback.addSentence(s, 'Four five six.'); // 14 chars
    playback.audio('u1', audio(14 * 60 * 2));
    playback.ttsFinished('u1', true);
    const t0 = performance.now();
    expect(frames()).toBe(LEAD_MS / 20); // sent at once on arrival
    playback.pace(t0 + 40); // two frames played: topped up to the lead again
    expect(frames()).toBe(LEAD_MS / 20 + 2);
    for (let t = 120; t <= 2000; t += 20) playback.pace(t0 + t);
    expect(frames()).toBe(84); // 1680 ms
    const marks = sent.filter((m) => m.kind === 'mark').map((m) => m.name);
    expect(marks).toEqual(['u1:0', 'u1:end']);
    // Sentence mark right after the first sentence's 840 ms of audio.
    expect(sent.findIndex((m) => m.name === 'u1:0')).toBe(42);
    expect(finished).toEqual([]);
    playback.onMark('u1:end');
    expect(finished).toEqual([{ id: 'u1', result: { heardText: 'One two three. Four five six.', interrupted: false, playedMs: 1680, whole: true } }]);
    expect(playback.speaking).toBe(false);
  });

  it('on barge-in clears and reports whole sentences plus the played share of the current one', () => {
    const { playback, sent, finished, frames } = makePlayback();
    const s = playback.start('u1', 'u1');
    playback.addSentence(s, 'One two three.'); // 14 chars = 840 ms at 60 ms/char
    playback.addSentence(s, 'Four five six seven eight nine.'); // 31 chars
    playback.audio('u1', audio(45 * 60));
    playback.ttsFinished('u1', true);
    const t0 = performance.now();
    for (let t = 20; t <= 1400; t += 20) playback.pace(t0 + t);
    const cut = playback.interrupt(t0 + 1400);
    expect(cut.map((c) => c.id)).toEqual(['u1']);
    expect(sent.at(-1)).toEqual({ kind: 'clear' });
    const { result } = finished[0]!;
    expect(result.interrupted).toBe(true);
    // Frames still buffered at the provider (the lead) were not heard.
    expect(result.playedMs).toBeGreaterThanOrEqual(1400 - 20);
    expect(result.playedMs).toBeLessThanOrEqual(1420);
    // 1400 ms ≈ 23 chars: sentence one (14) and 9/31 of sentence two → 1 of its 6 words.
    expect(result.heardText).toBe('One two three. Four');
    // Late audio of the cancelled utterance is dropped; the line stays quiet.
    const before = frames();
    playback.audio('u1', audio(500));
    playback.pace(t0 + 1500);
    expect(frames()).toBe(before);
  });

  it('sends nothing new while held, and resumes after', () => {
    let held = false;
    const { playback, frames } = makePlayback(() => held);
    const s = playback.start('u1', 'u1');
    playback.addSentence(s, 'Hello there.');
    playback.audio('u1', audio(720));
    const t0 = performance.now();
    held = true;
    for (let t = 20; t <= 200; t += 20) playback.pace(t0 + t);
    expect(frames()).toBe(LEAD_MS / 20); // what went out before the hold, nothing more
    held = false;
    playback.pace(t0 + 220);
    expect(frames()).toBe((2 * LEAD_MS) / 20); // the buffer ran dry during the hold: a new lead
  });

  it('a pause takes back what a deep-buffered vendor still holds: cleared now, sent again when the hold ends', () => {
    let held = false;
    const { playback, sent, frames } = makePlayback(() => held, { format: PCM16_8K, frameMs: 200 });
    const s = playback.start('u1', 'u1');
    playback.addSentence(s, 'A long enough sentence to fill two seconds of audio.');
    // Numbered frames: each carries its index, so the order the caller hears can be checked.
    const sentFrames: number[] = [];
    (playback as any).out.media = (frame: Buffer) => {
      sentFrames.push(frame[0]!);
      sent.push({ kind: 'media', bytes: frame.length });
    };
    for (let k = 0; k < 10; k++) playback.audio('u1', Buffer.alloc(3200, k));
    const t0 = performance.now();
    expect(frames()).toBe(2); // 400 ms at the vendor: Exotel's chunks are 200 ms
    playback.pace(t0 + 200);
    expect(sentFrames).toEqual([0, 1, 2]); // frame 0 played, 1 playing, 2 queued
    held = true;
    expect(playback.takeBack(t0 + 250)).toBe(true);
    expect(sent.at(-1)).toEqual({ kind: 'clear' });
    // Frame 2 had not begun (its slot starts at 400 ms) and 150 ms of frame 1 were left: both are
    // taken back, and frame 1 will be heard again from its start.
    expect(playback.bufferedMs(t0 + 250)).toBe(0);
    for (let t = 260; t <= 1000; t += 20) playback.pace(t0 + t);
    expect(sentFrames).toEqual([0, 1, 2]);
    held = false;
    playback.pace(t0 + 1020);
    expect(sentFrames).toEqual([0, 1, 2, 1, 2]); // the caller hears frame 1 next, where it stopped
    // A frame with at most 40 ms left plays out: nothing is taken back.
    held = true;
    expect(playback.takeBack(t0 + 1020 + 370)).toBe(false);
    // Nothing to take back once the line ran dry, or once the end mark is out.
    expect(playback.takeBack(t0 + 5000)).toBe(false);
  });

  it('plays utterances in order and ends one without audio at once', () => {
    const { playback, finished } = makePlayback();
    const a = playback.start('a', 'a');
    const b = playback.start('b', 'b');
    playback.addSentence(b, 'Second.');
    playback.audio('b', audio(400));
    playback.ttsFinished('b', true);
    playback.ttsFinished('a', true); // nothing to say
    expect(a.state).toBe('finished');
    expect(finished[0]).toMatchObject({ id: 'a', result: { heardText: '', interrupted: false, whole: true } });
    expect(b.framesSent).toBe(LEAD_MS / 20);
  });
});

function transcript(text: string, flags: Partial<SttTranscript> = {}): SttTranscript {
  return { text, isFinal: true, speechFinal: false, confidence: 0.9, fromFinalize: false, startSecs: 0, durationSecs: 1, ...flags };
}

function detector(minWords: number, agentSpeaking = false) {
  const calls = { bargeIns: 0, finalizes: 0, turns: [] as CompletedTurn[], speaking: agentSpeaking };
  const d = new TurnDetector(minWords, {
    agentSpeaking: () => calls.speaking,
    bargeIn: () => {
      calls.bargeIns++;
      calls.speaking = false;
    },
    finalize: () => calls.finalizes++,
    utterance: (t) => calls.turns.push(t),
  });
  return { d, calls };
}

const started = { type: 'speech_started' as const, at_ms: 1000, detected_at_ms: 1192 };
const stopped = { type: 'speech_stopped' as const, at_ms: 3000, detected_at_ms: 3192 };

describe('turn detection', () => {
  afterEach(() => jest.useRealTimers());

  it('collects finals from speech start and emits them when the finalize answer arrives', () => {
    const { d, calls } = detector(3);
    d.onVad(started);
    d.onTranscript(transcript('I would like', { isFinal: false }));
    d.onTranscript(transcript('I would like to book.'));
    d.onVad(stopped, 5000);
    expect(calls.finalizes).toBe(1);
    expect(calls.turns).toEqual([]);
    d.onTranscript(transcript('Tomorrow.', { fromFinalize: true, speechFinal: true }), 5040);
    expect(calls.turns).toEqual([
      { text: 'I would like to book. Tomorrow.', duringAgentSpeech: false, speechEndPerf: 5000 - 192, vadStopPerf: 5000, sttTtfbMs: 40 },
    ]);
  });

  it('emits nothing for empty speech and falls back to the interim when no final comes', () => {
    jest.useFakeTimers();
    const { d, calls } = detector(3);
    d.onVad(started);
    d.onVad(stopped);
    d.onTranscript(transcript('', { fromFinalize: true }));
    expect(calls.turns).toEqual([]);
    d.onVad(started);
    d.onTranscript(transcript('hello there', { isFinal: false }));
    d.onVad(stopped);
    jest.advanceTimersByTime(FINAL_WAIT_MS + 1);
    expect(calls.turns.map((t) => [t.text, t.sttTtfbMs])).toEqual([['hello there', null]]);
  });

  it('continues the same turn when speech resumes before the final', () => {
    const { d, calls } = detector(3);
    d.onVad(started);
    d.onVad(stopped);
    d.onVad(started);
    d.onTranscript(transcript('Hello,', { fromFinalize: true }));
    d.onTranscript(transcript('I need help.'));
    d.onVad(stopped);
    d.onTranscript(transcript('', { fromFinalize: true }));
    expect(calls.turns.map((t) => t.text)).toEqual(['Hello, I need help.']);
  });

  it('barges in at speech start when min_words ≤ 1', () => {
    const { d, calls } = detector(1, true);
    d.onVad(started);
    expect(calls.bargeIns).toBe(1);
    d.onVad(stopped);
    d.onTranscript(transcript('Stop.', { fromFinalize: true }));
    expect(calls.turns[0]).toMatchObject({ text: 'Stop.', duringAgentSpeech: false });
  });

  it('barges in once the transcript reaches min_words, or at an interruption word; fewer words over the agent are a backchannel', () => {
    const a = detector(3, true);
    a.d.onVad(started);
    a.d.onTranscript(transcript('I think', { isFinal: false }));
    expect(a.calls.bargeIns).toBe(0);
    a.d.onTranscript(transcript('I think so', { isFinal: false }));
    expect(a.calls.bargeIns).toBe(1);

    // "Stop," as the first interim: at once, not at the third word.
    const s = detector(3, true);
    s.d.onVad(started);
    s.d.onTranscript(transcript('Stop,', { isFinal: false }));
    expect(s.calls.bargeIns).toBe(1);

    // Assent of any length is a backchannel.
    const h = detector(3, true);
    h.d.onVad(started);
    h.d.onTranscript(transcript('haan ji, theek hai', { isFinal: false }));
    h.d.onVad(stopped);
    h.d.onTranscript(transcript('haan ji, theek hai', { fromFinalize: true }));
    expect(h.calls.bargeIns).toBe(0);
    expect(h.calls.turns[0]).toMatchObject({ text: 'haan ji, theek hai', duringAgentSpeech: true });

    const b = detector(3, true);
    b.d.onVad(started);
    b.d.onVad(stopped);
    b.d.onTranscript(transcript('Uh-huh.', { fromFinalize: true }));
    expect(b.calls.bargeIns).toBe(0);
    expect(b.calls.turns[0]).toMatchObject({ text: 'Uh-huh.', duringAgentSpeech: true });

    // Started over the agent, but the agent finished first: an ordinary turn.
    const c = detector(3, true);
    c.d.onVad(started);
    c.calls.speaking = false;
    c.d.onVad(stopped);
    c.d.onTranscript(transcript('Yes.', { fromFinalize: true }));
    expect(c.calls.turns[0]).toMatchObject({ text: 'Yes.', duringAgentSpeech: false });

    // The final (after the VAD stop) is the first to show enough words: interrupt then.
    const e = detector(3, true);
    e.d.onVad(started);
    e.d.onVad(stopped);
    e.d.onTranscript(transcript('No, that is wrong.', { fromFinalize: true }));
    expect(e.calls.bargeIns).toBe(1);
    expect(e.calls.turns[0]).toMatchObject({ duringAgentSpeech: false });
  });

  it('emits a final that arrives outside any VAD turn after a short wait', () => {
    jest.useFakeTimers();
    const { d, calls } = detector(3);
    d.onTranscript(transcript('quiet words'));
    expect(calls.turns).toEqual([]);
    jest.advanceTimersByTime(1000);
    expect(calls.turns).toEqual([{ text: 'quiet words', duringAgentSpeech: false, speechEndPerf: null, vadStopPerf: null, sttTtfbMs: null }]);
  });
});
