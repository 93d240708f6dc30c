/**
 * Armed turns (voice calls): between turns the workflow hands the media gateway the next LLM
 * request — everything but the caller's words — as a long-running `armedTurn` activity. When the
 * caller's utterance ends, the gateway appends it and starts the LLM at once; the activity then
 * returns the utterance with the reply, and the workflow records it, runs tools and flow moves,
 * and arms the next turn.
 *
 * Who decides what. The workflow decides the conversation's state: the prompt, the tools offered,
 * the flow node, tool calls and their results, flow moves, the end, idle timers; nothing the
 * gateway did counts until the workflow has recorded it. The gateway decides, within the plan it
 * was given, the plain turns: it answers the caller's utterance with the armed request, and a
 * turn run (ArmedTurnRequest.carryOn) lets it answer the plain turns that follow the same way
 * (no tool calls: a reply that asks for tools ends the run and the workflow runs them), reported
 * together and recorded by the workflow in order as if each had come alone. While Temporal is
 * away it answers plain turns alone (`utterance.reply`) and reports them when Temporal is back.
 * What counts as a turn at all (min_words, backchannels, interruptions) is
 * src/shared/turn-policy.ts, the same module on both sides.
 *
 * Before the workflow does anything else (an utterance that came the signal way, an idle timer,
 * an end, continue-as-new) it disarms: the gateway either takes the armed turn back or has
 * already used it, in which case the activity's result is awaited and handled first. So the
 * prepared request is never used once the conversation has moved on. Workflow code.
 */
import { condition, workflowInfo } from '@temporalio/workflow';
import type { ArmedTurnRequest, ArmedTurnResult, LlmTurnRequest } from './call-definitions';
import type { VoiceChannel } from './channels';

/** A turn run reports at the latest this long after its first answered turn, and after this many turns. */
const TURN_RUN_REPORT_SECS = 10;
const TURN_RUN_MAX_TURNS = 8;

/**
 * How long a turn run may hold answered turns before reporting them: their events and webhooks
 * wait that long (a gateway that dies meanwhile leaves them in its run journal). At most half the idle
 * warning, and reported before the idle deadline (`msUntilIdle`), so idle timing stays the agent's.
 */
export function runLimits(pipeline: { idle_warn_secs: number; min_words: number }, msUntilIdle: number): NonNullable<ArmedTurnRequest['carryOn']> {
  const withinMs = Math.min(TURN_RUN_REPORT_SECS * 1000, (pipeline.idle_warn_secs * 1000) / 2);
  return { turns: TURN_RUN_MAX_TURNS, withinMs, idleInMs: msUntilIdle, minWords: pipeline.min_words };
}

interface Arming {
  armId: string;
  settled: boolean;
  /** The request armed and the speech id of its reply: the caller's turn is answered from it. */
  plan: { request: LlmTurnRequest; utteranceId: string };
}

export class TurnArming {
  private current: Arming | null = null;
  private count = 0;
  /** The armed activity failed (the gateway is gone): thrown by the next disarm. */
  failure: unknown = null;

  constructor(
    private readonly channel: () => VoiceChannel | null,
    private readonly deliver: (result: ArmedTurnResult, plan: Arming['plan']) => void,
  ) {}

  get armed(): boolean {
    return this.current !== null;
  }

  /**
   * Hands the gateway the next turn (no-op without a voice channel or while armed); with
   * `afterSpeech`, a plan that holds only if the caller hears that utterance whole.
   * `afterSeq`, `carryOn`: see ArmedTurnRequest. The media session's result releases a turn the
   * stream closed with untaken (`releasedWithMedia`).
   */
  arm(request: LlmTurnRequest, utteranceId: string, plan: { afterSeq: number; afterSpeech?: string; carryOn: NonNullable<ArmedTurnRequest['carryOn']> }): void {
    const { afterSeq, afterSpeech, carryOn } = plan;
    const channel = this.channel();
    if (!channel || this.current || this.failure) return;
    const arming: Arming = { armId: `${workflowInfo().runId.slice(0, 8)}-a${++this.count}`, settled: false, plan: { request, utteranceId } };
    this.current = arming;
    const settle = () => {
      arming.settled = true;
      if (this.current === arming) this.current = null;
    };
    const options = { ...(afterSpeech ? { afterSpeech } : {}), releasedWithMedia: true, carryOn };
    channel.arm({ ...request, utteranceId, armId: arming.armId, afterSeq, ...options }).then(
      (result) => {
        settle();
        this.deliver(result, arming.plan);
      },
      (err: unknown) => {
        settle();
        this.failure ??= err;
      },
    );
  }

  /** The stream closed with this turn untaken (the media session's result names it): settled. */
  releaseWithMedia(armId: string | undefined): void {
    const arming = this.current;
    if (!arming || arming.armId !== armId) return;
    arming.settled = true;
    this.current = null;
  }

  /** Takes the armed turn back; if the caller already used it, waits for its result (delivered). */
  async disarm(): Promise<void> {
    const arming = this.current;
    if (arming) {
      await this.channel()!.disarm(arming.armId);
      await condition(() => arming.settled);
    }
    if (this.failure) throw this.failure;
  }
}
