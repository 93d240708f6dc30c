/**
 * The gateway's per-call outbox to the workflow (docs/call-lifecycle.md): order, retries while
 * Temporal is unreachable, reports whose content comes later, deliveries that can never succeed,
 * and the utterance Temporal stopped taking just before the outage showed, answered by the gateway.
 */
import { ActivityNotFoundError, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { AsyncCompletionClient, WorkflowHandle } from '@temporalio/client';
import { ConversationMirror } from '../../src/gateway/turns/conversation-mirror';
import { UtteranceDelivery } from '../../src/gateway/workflow-link/utterance-delivery';
import { WorkflowOutbox } from '../../src/gateway/workflow-link/workflow-outbox';
import { WorkflowReports } from '../../src/gateway/workflow-link/workflow-reports';
import { createLogger } from '../../src/shared/logger';
import type { UtteranceSignal, VoiceTurnResult } from '../../workflows/call-definitions';

const log = createLogger('test');
const unavailable = () => Object.assign(new Error('14 UNAVAILABLE: connection refused'), { code: 14 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function outbox(opts: { stalled?: () => void } = {}) {
  const orphaned = jest.fn();
  return { box: new WorkflowOutbox({ callId: 'c1', log, orphaned, stalled: opts.stalled }), orphaned };
}

describe('the workflow outbox', () => {
  it('delivers in the order queued; a report waiting for its content holds the ones after it', async () => {
    const { box } = outbox();
    const sent: string[] = [];
    let release!: () => void;
    const ready = new Promise<void>((r) => (release = r));
    box.push('a', async () => void sent.push('a'));
    box.push('b', async () => void sent.push('b'), ready);
    box.push('c', async () => void sent.push('c'));
    await sleep(20);
    expect(sent).toEqual(['a']);
    release();
    await box.drained();
    expect(sent).toEqual(['a', 'b', 'c']);
  });

  it('retries while Temporal is unreachable, says it is stalled once, and delivers when it is back', async () => {
    const stalled = jest.fn();
    const { box } = outbox({ stalled });
    let failures = 3;
    const sent: string[] = [];
    box.push('a', async () => {
      if (failures-- > 0) throw unavailable();
      sent.push('a');
    });
    box.push('b', async () => void sent.push('b'));
    await sleep(50);
    expect(box.stalled).toBe(true);
    expect(stalled).toHaveBeenCalledTimes(1);
    await box.drained();
    expect(sent).toEqual(['a', 'b']);
    expect(box.stalled).toBe(false);
  });

  it('drops what can never be delivered: an activity gone, a workflow gone (and closes the stream)', async () => {
    const { box, orphaned } = outbox();
    const sent: string[] = [];
    box.push('completion', async () => {
      throw new ActivityNotFoundError('not found');
    });
    box.push('signal', async () => {
      throw new WorkflowNotFoundError('gone', 'call-1', undefined);
    });
    box.push('next', async () => void sent.push('next'));
    await box.drained();
    expect(sent).toEqual(['next']);
    expect(orphaned).toHaveBeenCalledTimes(1);
  });

  it('takes a mediaConnected signal-with-start refused because the call workflow has ended as the workflow gone', async () => {
    const { box, orphaned } = outbox();
    box.push('mediaConnected', async () => {
      throw new WorkflowExecutionAlreadyStartedError('Workflow execution already started', 'call-1', 'callWorkflow');
    });
    await box.drained();
    expect(orphaned).toHaveBeenCalledTimes(1);
  });
});

describe('an utterance reported just before the outage showed', () => {
  it('is answered by the gateway from the mirrored conversation and reported with its reply', async () => {
    const signals: UtteranceSignal[] = [];
    let down = true;
    const workflow = {
      signal: async (_def: unknown, payload: UtteranceSignal) => {
        if (down) throw unavailable();
        signals.push(JSON.parse(JSON.stringify(payload)));
      },
    } as unknown as WorkflowHandle;
    const reports = new WorkflowReports({ callId: 'c1', workflow, activities: {} as AsyncCompletionClient, log, orphaned: () => undefined });
    const mirror = new ConversationMirror();
    mirror.planned({ callId: 'c1', provider: 'p', model: 'm', messages: [{ role: 'system', content: 'Be brief.' }], tools: [], utteranceId: 'u2' });
    mirror.said('Hello.');
    const asked: string[][] = [];
    const reply: VoiceTurnResult = { content: 'We open at nine.', toolCalls: [], usage: { prompt_tokens: 5, completion_tokens: 4 }, ttfbMs: 10, heardText: 'We open at nine.', interrupted: false, characters: 16, events: [] };
    const delivery = new UtteranceDelivery(reports, {
      conversation: mirror,
      answerAlone: async (req) => {
        asked.push(req.messages.map((m) => `${m.role}: ${m.content}`));
        return reply;
      },
    });
    reports.onStalled = () => delivery.answerPendingAlone();
    delivery.deliver({ text: 'When do you open?', duringAgentSpeech: false } as never);
    await sleep(150); // the first delivery attempt finds Temporal away
    expect(asked).toEqual([['system: Be brief.', 'assistant: Hello.', 'user: When do you open?']]);
    down = false;
    await reports.settled;
    expect(signals).toHaveLength(1);
    expect(signals[0]).toMatchObject({ text: 'When do you open?', seq: 1, reply: { heardText: 'We open at nine.' } });
    expect(typeof signals[0]!.timestampMs).toBe('number');
  });
});
