/**
 * Turn runs on the gateway (ArmedTurnRequest.carryOn): after a plain reply the armed turn arms
 * itself with the next plan, as the workflow would, and reports the run's turns together.
 */
import type { WorkflowHandle, AsyncCompletionClient } from '@temporalio/client';
import { UtteranceDelivery } from '../../src/gateway/workflow-link/utterance-delivery';
import { reply, turn } from '../support/voice-turns';
import { WorkflowReports } from '../../src/gateway/workflow-link/workflow-reports';
import { createLogger } from '../../src/shared/logger';
import type { ArmedTurnRequest, RunTurn, VoiceTurnRequest, VoiceTurnResult } from '../../workflows/call-definitions';


const SYSTEM = { role: 'system' as const, content: 'Be brief.' };

function plan(carryOn: Partial<NonNullable<ArmedTurnRequest['carryOn']>> = {}): ArmedTurnRequest {
  return {
    callId: 'c1',
    provider: 'openai',
    model: 'gpt-test',
    messages: [SYSTEM],
    tools: [],
    utteranceId: 'u2',
    armId: 'a1',
    afterSeq: 0,
    carryOn: { turns: 8, withinMs: 10_000, idleInMs: 60_000, minWords: 2, ...carryOn },
  };
}


function setUp(journal?: (turn: RunTurn) => Promise<void>) {
  const signals: unknown[] = [];
  const workflow = { signal: async (_def: unknown, payload: unknown) => void signals.push(payload) } as unknown as WorkflowHandle;
  const reports = new WorkflowReports({ callId: 'c1', workflow, activities: {} as AsyncCompletionClient, log: createLogger('test'), orphaned: () => undefined });
  const d = new UtteranceDelivery(reports, { heardWhole: () => true, ...(journal ? { journal } : {}) });
  const requests: VoiceTurnRequest[] = [];
  const answers: Array<(r: VoiceTurnResult) => void> = [];
  // Each reply is given when the test says so (answers[i]), as a real one ends when it has played.
  const run = (req: VoiceTurnRequest) => (requests.push(req), new Promise<VoiceTurnResult>((resolve) => answers.push(resolve)));
  return { d, reports, signals, requests, answers, run };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('turn runs on the gateway', () => {
  it('answer plain turns one after another with the history the workflow would build, and report them together', async () => {
    const { d, requests, answers, run } = setUp();
    const result = d.arm(plan({ turns: 3 }), run, new AbortController().signal);
    d.deliver(turn('When are you open?'));
    answers[0]!(reply('From nine.'));
    await settle();
    expect(d.isArmed).toBe(true);
    d.deliver(turn('And on Sunday?'));
    answers[1]!(reply('Closed on Sundays.', { heardText: 'Closed on', interrupted: true }));
    await settle();
    d.deliver(turn('Thanks'));
    answers[2]!(reply('Bye.'));
    const r = await result;
    expect(requests.map((q) => q.messages)).toEqual([
      [SYSTEM, { role: 'user', content: 'When are you open?' }],
      [SYSTEM, { role: 'user', content: 'When are you open?' }, { role: 'assistant', content: 'From nine.' }, { role: 'user', content: 'And on Sunday?' }],
      // A reply cut off goes into the history as far as the caller heard it.
      [SYSTEM, { role: 'user', content: 'When are you open?' }, { role: 'assistant', content: 'From nine.' }, { role: 'user', content: 'And on Sunday?' }, { role: 'assistant', content: 'Closed on' }, { role: 'user', content: 'Thanks' }],
    ]);
    // Each turn its own speech id; the plan's own fields stay on the gateway.
    expect(requests.map((q) => q.utteranceId)).toEqual(['u2', 'a1-2', 'a1-3']);
    expect(requests[1]).not.toHaveProperty('carryOn');
    expect(r.earlier?.map((t) => [t.utterance.text, t.utterance.seq, t.thought.heardText])).toEqual([
      ['When are you open?', 1, 'From nine.'],
      ['And on Sunday?', 2, 'Closed on'],
    ]);
    expect(r).toMatchObject({ utterance: { text: 'Thanks', seq: 3 }, thought: { content: 'Bye.' }, failure: null });
  });

  it('end at a reply that asks for a tool: only the workflow runs tools', async () => {
    const { d, answers, run } = setUp();
    const result = d.arm(plan(), run, new AbortController().signal);
    d.deliver(turn('Book me for nine'));
    answers[0]!(reply('Sure.'));
    await settle();
    d.deliver(turn('Yes please'));
    answers[1]!(reply('', { toolCalls: [{ id: 't1', name: 'book', arguments: {} }] }));
    const r = await result;
    expect(r.earlier).toHaveLength(1);
    expect(r.utterance?.text).toBe('Yes please');
    expect(r.thought?.toolCalls).toHaveLength(1);
    expect(d.isArmed).toBe(false);
  });

  it('report when the time is up while waiting for the caller, and before the idle deadline', async () => {
    const { d, answers, run } = setUp();
    const timed = d.arm(plan({ withinMs: 40 }), run, new AbortController().signal);
    d.deliver(turn('Hello there'));
    answers[0]!(reply('Hi.'));
    const r = await timed;
    expect(r).toMatchObject({ utterance: null, thought: null, earlier: [{ utterance: { text: 'Hello there' } }] });
    expect(d.isArmed).toBe(false);
    // The workflow's idle deadline in 0.9 s: a run reports 1 s before it, so at once after its first turn.
    const idle = d.arm({ ...plan({ idleInMs: 900 }), armId: 'a2', afterSeq: 1 }, run, new AbortController().signal);
    d.deliver(turn('Still there?'));
    await settle();
    answers[1]!(reply('Yes.'));
    expect(await idle).toMatchObject({ utterance: { text: 'Still there?' }, thought: { content: 'Yes.' } });
    expect((await idle).earlier).toBeUndefined();
  });

  it('give its turns back when disarmed, waiting or in the middle of a reply', async () => {
    const { d, answers, run } = setUp();
    const waiting = d.arm(plan(), run, new AbortController().signal);
    d.deliver(turn('One two'));
    answers[0]!(reply('A.'));
    await settle();
    d.disarm('a1');
    expect(await waiting).toMatchObject({ utterance: null, earlier: [{ utterance: { text: 'One two' } }] });

    const busy = d.arm({ ...plan(), armId: 'a2', afterSeq: 1 }, run, new AbortController().signal);
    d.deliver(turn('Three four'));
    answers[1]!(reply('B.'));
    await settle();
    d.deliver(turn('Five six'));
    d.disarm('a2'); // while B's successor plays
    answers[2]!(reply('C.'));
    const r = await busy;
    expect(r.earlier?.map((t) => t.utterance.text)).toEqual(['Three four']);
    expect(r).toMatchObject({ utterance: { text: 'Five six' }, thought: { content: 'C.' } });
  });

  it('judge words spoken over the agent as the workflow would (min_words), and end at a backchannel', async () => {
    const { d, answers, run, requests } = setUp();
    const result = d.arm(plan({ minWords: 2 }), run, new AbortController().signal);
    d.deliver(turn('Tell me everything'));
    answers[0]!(reply('Well, first…', { heardText: 'Well,', interrupted: true }));
    await settle();
    d.deliver(turn('Stop please', true)); // the barge-in: two words, answered in the run
    answers[1]!(reply('Of course.'));
    await settle();
    d.deliver(turn('mhm', true));
    const r = await result;
    expect(requests).toHaveLength(2);
    expect(r.earlier?.map((t) => t.utterance.text)).toEqual(['Tell me everything', 'Stop please']);
    expect(r).toMatchObject({ utterance: { text: 'mhm', duringAgentSpeech: true }, thought: null });
  });

  it('end when an utterance overtook the reply (it went to the workflow as a signal)', async () => {
    const { d, reports, signals, answers, run } = setUp();
    const result = d.arm(plan(), run, new AbortController().signal);
    d.deliver(turn('First thing'));
    d.deliver(turn('Second thing')); // while the first reply plays
    answers[0]!(reply('Done.'));
    const r = await result;
    expect(r).toMatchObject({ utterance: { text: 'First thing', seq: 1 }, thought: { content: 'Done.' } });
    expect(r.earlier).toBeUndefined();
    await reports.settled;
    expect(signals).toMatchObject([{ text: 'Second thing', seq: 2 }]);
  });

  it('are never released with the stream once they hold turns: the workflow must record them', async () => {
    const { d, answers, run } = setUp();
    const result = d.arm({ ...plan(), releasedWithMedia: true }, run, new AbortController().signal);
    d.deliver(turn('Good morning'));
    answers[0]!(reply('Morning!'));
    await settle();
    expect(d.close()).toBeUndefined();
    expect(await result).toMatchObject({ utterance: null, earlier: [{ utterance: { text: 'Good morning' } }] });
    // Without turns held, the plan is released as before.
    const { d: d2, run: run2 } = setUp();
    void d2.arm({ ...plan(), releasedWithMedia: true }, run2, new AbortController().signal);
    expect(d2.close()).toBe('a1');
  });

  it('journal each turn they hold, and report at once a turn that could not be journaled', async () => {
    const journaled: string[] = [];
    let refuse = false;
    const { d, answers, run } = setUp(async (t) => {
      if (refuse) throw new Error('database unreachable');
      journaled.push(t.utterance.text);
    });
    const result = d.arm(plan(), run, new AbortController().signal);
    d.deliver(turn('First question'));
    answers[0]!(reply('One.'));
    await settle();
    expect(journaled).toEqual(['First question']);
    expect(d.isArmed).toBe(true);
    refuse = true;
    d.deliver(turn('Second question'));
    answers[1]!(reply('Two.'));
    const r = await result;
    expect(r).toMatchObject({ utterance: null, earlier: [{ utterance: { text: 'First question' } }, { utterance: { text: 'Second question' }, answeredAtMs: expect.any(Number) }] });
    expect(d.isArmed).toBe(false);
  });
});
