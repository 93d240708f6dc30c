/**
 * The gateway's side of a caller turn: the armed turn that starts the LLM the moment the
 * utterance ends (or hands the utterance back), the arrival clock that latency is measured
 * from, and the barge-in of an agent reply that starts while the caller is talking.
 */
import type { WorkflowHandle, AsyncCompletionClient } from '@temporalio/client';
import { register } from 'prom-client';
import { ArrivalClock } from '../../src/gateway/turns/arrival-clock';
import { TurnDetector, type CompletedTurn } from '../../src/gateway/turns/turn-detector';
import { UtteranceDelivery } from '../../src/gateway/workflow-link/utterance-delivery';
import { reply, turn } from '../support/voice-turns';
import { WorkflowReports } from '../../src/gateway/workflow-link/workflow-reports';
import { createLogger } from '../../src/shared/logger';
import type { ArmedTurnRequest, VoiceTurnRequest } from '../../workflows/call-definitions';


function plan(afterSeq: number): ArmedTurnRequest {
  return {
    callId: 'c1',
    provider: 'openai',
    model: 'gpt-test',
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'assistant', content: 'Hello.' }],
    tools: [],
    utteranceId: 'u2',
    armId: 'a1',
    afterSeq,
  };
}


function delivery(heardWhole: (id: string) => boolean = () => false) {
  const signals: unknown[] = [];
  const workflow = { signal: async (_def: unknown, payload: unknown) => void signals.push(payload) } as unknown as WorkflowHandle;
  const reports = new WorkflowReports({ callId: 'c1', workflow, activities: {} as AsyncCompletionClient, log: createLogger('test'), orphaned: () => undefined });
  const d = new UtteranceDelivery(reports, { heardWhole });
  return { d, reports, signals };
}

describe('armed turns on the gateway', () => {
  it('start the LLM at once with the utterance appended, and report it with the reply', async () => {
    const { d, signals } = delivery();
    const runs: VoiceTurnRequest[] = [];
    const result = d.arm(plan(0), async (req) => (runs.push(req), reply('At nine.')), new AbortController().signal);
    d.deliver(turn('When are you open?'));
    const r = await result;
    expect(runs).toHaveLength(1);
    expect(runs[0]!.messages).toEqual([...plan(0).messages, { role: 'user', content: 'When are you open?' }]);
    expect(runs[0]!.utteranceId).toBe('u2');
    expect(r.utterance).toMatchObject({ text: 'When are you open?', seq: 1, duringAgentSpeech: false });
    expect(r.thought?.content).toBe('At nine.');
    expect(signals).toEqual([]);
  });

  it('hand a backchannel candidate or a stale plan back without an LLM request', async () => {
    const { d } = delivery();
    const run = jest.fn(async () => reply('no'));
    const over = d.arm(plan(0), run, new AbortController().signal);
    d.deliver(turn('uh-huh', true));
    expect((await over).thought).toBeNull();
    // The workflow armed after utterance 0, but the gateway already reported 1: a signal is in flight.
    const stale = d.arm(plan(0), run, new AbortController().signal);
    d.deliver(turn('And on Sunday?'));
    const r = await stale;
    expect(r.utterance).toMatchObject({ text: 'And on Sunday?', seq: 2 });
    expect(r.thought).toBeNull();
    expect(run).not.toHaveBeenCalled();
  });

  it('armed while the greeting plays: answered at once if the caller heard it whole, handed back if it was cut off', async () => {
    const heard = new Map<string, boolean>();
    const { d } = delivery((id) => heard.get(id) === true);
    const runs: VoiceTurnRequest[] = [];
    const run = async (req: VoiceTurnRequest) => (runs.push(req), reply('Sure.'));
    // The caller talked over the greeting (u1) and cut it off: the plan's history is not what they heard.
    heard.set('u1', false);
    const cut = d.arm({ ...plan(0), afterSpeech: 'u1' }, run, new AbortController().signal);
    d.deliver(turn('Sorry, who is this?'));
    expect(await cut).toMatchObject({ utterance: { text: 'Sorry, who is this?', seq: 1 }, thought: null });
    expect(runs).toEqual([]);
    // Heard whole: the LLM starts at once, and the plan's own fields stay on the gateway.
    heard.set('u1', true);
    const whole = d.arm({ ...plan(1), afterSpeech: 'u1' }, run, new AbortController().signal);
    d.deliver(turn('I would like an appointment.'));
    expect((await whole).thought?.content).toBe('Sure.');
    expect(runs).toHaveLength(1);
    expect(runs[0]).not.toHaveProperty('afterSpeech');
    expect(runs[0]).not.toHaveProperty('armId');
  });

  it('go back when disarmed; utterances then go as signals, numbered', async () => {
    const { d, reports, signals } = delivery();
    const armed = d.arm(plan(0), async () => reply('x'), new AbortController().signal);
    d.disarm('other-arm');
    expect(d.isArmed).toBe(true);
    d.disarm('a1');
    expect(await armed).toEqual({ utterance: null, thought: null, failure: null, events: [] });
    d.deliver(turn('Hello?'));
    await reports.settled;
    expect(signals).toEqual([{ text: 'Hello?', duringAgentSpeech: false, events: [], seq: 1 }]);
  });

  it('settle at once a turn whose disarm arrived before it (the two activities race after a Temporal restart), keeping the newer plan', async () => {
    const { d } = delivery();
    const run = jest.fn(async () => reply('x'));
    d.disarm('a1');
    expect(await d.arm(plan(0), run, new AbortController().signal)).toEqual({ utterance: null, thought: null, failure: null, events: [] });
    expect(d.isArmed).toBe(false);
    // A newer plan is armed; a late arm that was already taken back does not replace it.
    const newer = d.arm({ ...plan(0), armId: 'a2' }, run, new AbortController().signal);
    d.disarm('a3');
    expect(await d.arm({ ...plan(0), armId: 'a3' }, run, new AbortController().signal)).toMatchObject({ utterance: null });
    expect(d.isArmed).toBe(true);
    d.deliver(turn('Hi'));
    expect((await newer).thought?.content).toBe('x');
    // A disarm that comes after an utterance took the turn leaves nothing behind: the same id armed again waits.
    d.disarm('a2');
    const again = d.arm({ ...plan(1), armId: 'a2' }, run, new AbortController().signal);
    expect(d.isArmed).toBe(true);
    d.disarm('a2');
    expect(await again).toMatchObject({ utterance: null });
  });

  it('report a failed LLM request with the error type the workflow retries by', async () => {
    const { d } = delivery();
    const failing = d.arm(plan(0), async () => {
      throw new Error('connection refused');
    }, new AbortController().signal);
    d.deliver(turn('Hi'));
    expect((await failing).failure).toEqual({ type: 'LlmUnavailable', message: 'connection refused' });
  });

  it('count each turn by how its reply started (voice_turns_total), the first turn apart; backchannels not at all', async () => {
    register.resetMetrics();
    const { d, reports } = delivery();
    const run = async () => reply('Sure.');
    const first = d.arm(plan(0), run, new AbortController().signal);
    d.deliver(turn('Hi there'));
    await first;
    const over = d.arm(plan(1), run, new AbortController().signal);
    d.deliver(turn('uh-huh', true));
    await over;
    const stale = d.arm(plan(0), run, new AbortController().signal);
    d.deliver(turn('And on Sunday?'));
    await stale;
    d.deliver(turn('Hello?'));
    await reports.settled;
    const counts = (await register.getSingleMetric('voice_turns_total')!.get()).values.map((v) => ({ ...v.labels, n: v.value }));
    expect(counts).toEqual(
      expect.arrayContaining([
        { path: 'armed', first: 'true', n: 1 },
        { path: 'stale_plan', first: 'false', n: 1 },
        { path: 'not_armed', first: 'false', n: 1 },
      ]),
    );
    expect(counts.reduce((n, c) => n + c.n, 0)).toBe(3);
  });

  it('when the stream closes untaken: completed with no utterance, or named for the media session’s result to release', async () => {
    const outcome = async (armed: Promise<unknown>) => Promise.race([armed, new Promise((r) => setTimeout(() => r('pending'), 20))]);
    // A call started before releasedWithMedia: the turn completes with no utterance.
    const old = delivery();
    const oldArmed = old.d.arm(plan(0), async () => reply('x'), new AbortController().signal);
    expect(old.d.close()).toBeUndefined();
    expect(await outcome(oldArmed)).toEqual({ utterance: null, thought: null, failure: null, events: [] });
    // releasedWithMedia: never completed; its id goes with the media session's result.
    const now = delivery();
    const held = now.d.arm({ ...plan(0), releasedWithMedia: true }, async () => reply('x'), new AbortController().signal);
    expect(now.d.close()).toBe('a1');
    expect(await outcome(held)).toBe('pending');
    // A gateway shutting down fails the media session: the turn completes on its own then.
    const down = delivery();
    const shut = down.d.arm({ ...plan(0), releasedWithMedia: true }, async () => reply('x'), new AbortController().signal);
    expect(down.d.close(false)).toBeUndefined();
    expect((await outcome(shut)) as object).toMatchObject({ utterance: null });
    // Arming after the close: answered at once, as before.
    expect(await now.d.arm({ ...plan(1), releasedWithMedia: true }, async () => reply('x'), new AbortController().signal)).toMatchObject({ utterance: null });
  });
});

describe('arrival clock', () => {
  it('gives the arrival of the frame that holds an audio position', () => {
    const clock = new ArrivalClock(8000);
    for (let i = 0; i < 1000; i++) clock.add(160, 5 + i * 20); // 20 ms frames, arriving 5 ms late
    expect(clock.arrivalOf(19_990)).toBe(5 + 999 * 20);
    expect(clock.arrivalOf(19_980)).toBe(5 + 998 * 20);
    expect(clock.arrivalOf(20_001)).toBeNull(); // not arrived yet
    expect(clock.arrivalOf(100)).toBeNull(); // forgotten
  });
});

describe('turn timing and barge-in', () => {
  function detector(minWords: number, arrivals?: ArrivalClock) {
    const calls = { bargeIns: 0, turns: [] as CompletedTurn[], speaking: false };
    const d = new TurnDetector(minWords, {
      agentSpeaking: () => calls.speaking,
      bargeIn: () => void calls.bargeIns++,
      finalize: () => undefined,
      utterance: (t) => calls.turns.push(t),
      arrivalPerf: arrivals ? (ms) => arrivals.arrivalOf(ms) : undefined,
    });
    return { d, calls };
  }

  it('times the end of speech from the arrival of its last frame, queueing included', () => {
    const clock = new ArrivalClock(8000);
    for (let i = 0; i < 200; i++) clock.add(160, 1000 + i * 20);
    const { d, calls } = detector(3, clock);
    d.onVad({ type: 'speech_started', at_ms: 1000, detected_at_ms: 1192 });
    // The VAD decides 300 ms after the deciding frame arrived (a busy event loop).
    d.onVad({ type: 'speech_stopped', at_ms: 3000, detected_at_ms: 3200 }, 1000 + 160 * 20 + 300);
    d.onTranscript({ text: 'Hello.', isFinal: true, speechFinal: true, confidence: 1, fromFinalize: true, startSecs: 0, durationSecs: 1 }, 4500);
    expect(calls.turns[0]).toMatchObject({ speechEndPerf: 1000 + 149 * 20, vadStopPerf: 1000 + 159 * 20, sttTtfbMs: 4500 - 4500 });
  });

  it('with min_words ≤ 1 cuts an agent reply that starts while the caller is talking', () => {
    const { d, calls } = detector(1);
    d.onVad({ type: 'speech_started', at_ms: 0, detected_at_ms: 192 });
    expect(calls.bargeIns).toBe(0); // the agent was silent
    calls.speaking = true;
    d.onAgentSpeech();
    expect(calls.bargeIns).toBe(1);
    // Larger min_words: the caller's words decide, as for any overlap.
    const three = detector(3);
    three.d.onVad({ type: 'speech_started', at_ms: 0, detected_at_ms: 192 });
    three.d.onAgentSpeech();
    expect(three.calls.bargeIns).toBe(0);
  });
});

describe('ready TTS sessions', () => {
  it('hand a call the voice’s connected spare and open the next one; other voices get their own', async () => {
    const { TtsSpares } = await import('../../src/gateway/speech/tts-spares');
    const opened: Array<{ voice: string; closed: boolean }> = [];
    const open = (voice: string) => () => {
      const s = { voice, closed: false, close: async () => void (s.closed = true) };
      opened.push(s);
      return s as never;
    };
    const spares = new TtsSpares();
    const first = spares.take('cartesia:a', open('a')).session as unknown as { voice: string };
    expect(opened).toHaveLength(1); // nothing was ready: opened for the call
    await new Promise((r) => setImmediate(r));
    expect(opened).toHaveLength(2); // the spare for the next call
    const second = spares.take('cartesia:a', open('a')).session as unknown as { voice: string };
    expect(second).toBe(opened[1]); // already connected
    expect(second).not.toBe(first);
    await new Promise((r) => setImmediate(r));
    spares.take('eleven:b', open('b'));
    await new Promise((r) => setImmediate(r));
    expect(opened.map((s) => s.voice)).toEqual(['a', 'a', 'a', 'b', 'b']);
    await spares.close();
    expect(opened.filter((s) => s.closed).map((s) => s.voice)).toEqual(['a', 'b']); // the two spares
  });

  it('count a spare’s sockets as tts_spare until a call takes it, and close a spare no call took within the idle time', async () => {
    const { TtsSpares } = await import('../../src/gateway/speech/tts-spares');
    const opened: Array<{ role: { kind: string }; closed: boolean }> = [];
    const open = (role: { kind: string }) => {
      const s = { role, closed: false, close: async () => void (s.closed = true) };
      opened.push(s);
      return s as never;
    };
    const spares = new TtsSpares(60);
    spares.take('v', open);
    expect(opened[0]!.role.kind).toBe('tts'); // opened for the call
    await new Promise((r) => setImmediate(r));
    expect(opened[1]!.role.kind).toBe('tts_spare');
    spares.take('v', open);
    expect(opened[1]!.role.kind).toBe('tts'); // taken: now the call's
    await new Promise((r) => setImmediate(r));
    expect(spares.size).toBe(1);
    await new Promise((r) => setTimeout(r, 120));
    expect(spares.size).toBe(0); // idle too long: closed, not replaced
    expect(opened.map((s) => s.closed)).toEqual([false, false, true]);
    await spares.close();
  });

  it('close a voice’s spare when its last call ends, and open none for a call that ended before the refill ran', async () => {
    const { TtsSpares } = await import('../../src/gateway/speech/tts-spares');
    const opened: Array<{ voice: string; closed: boolean }> = [];
    const open = (voice: string) => () => {
      const s = { voice, closed: false, close: async () => void (s.closed = true) };
      opened.push(s);
      return s as never;
    };
    const spares = new TtsSpares();
    const one = spares.take('a', open('a'));
    const two = spares.take('a', open('a'));
    await new Promise((r) => setImmediate(r));
    expect(spares.size).toBe(1); // the spare for a third call of the voice
    one.release();
    one.release(); // twice is once
    expect(spares.size).toBe(1); // a call of the voice is still up
    two.release();
    expect(spares.size).toBe(0); // the voice's last call ended: its spare went with it
    expect(opened.filter((s) => !s.closed).map((s) => s.voice)).toEqual(['a', 'a']); // the calls' own sessions (their links close them)
    // A call over before its refill ran (a stream closed at once) leaves nothing open behind it.
    spares.take('b', open('b')).release();
    await new Promise((r) => setImmediate(r));
    expect(opened.filter((s) => s.voice === 'b')).toHaveLength(1);
    expect(spares.size).toBe(0);
    await spares.close();
  });

  it('keep no spare at all when the idle time is 0', async () => {
    const { TtsSpares } = await import('../../src/gateway/speech/tts-spares');
    let opened = 0;
    const spares = new TtsSpares(0);
    spares.take('v', () => (opened++, { close: async () => undefined }) as never);
    await new Promise((r) => setImmediate(r));
    expect(opened).toBe(1);
    expect(spares.size).toBe(0);
  });
});
