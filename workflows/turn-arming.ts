/**
 * Armed turns (voice calls): between turns the workflow hands the media gateway the next LLM
 * request — everything but the caller's words — as a long-running `armedTurn` activity. When the
 * caller's utterance ends, the gateway appends it and starts the LLM at once; the activity then
 * returns the utterance with the reply, and the workflow records it, runs tools and flow moves,
 * and arms the next turn. The workflow stays the only place where the conversation is decided:
 * the gateway only runs the request it was given.
 *
 * Before the workflow does anything else (an utterance that came the signal way, an idle timer,
 * an end, continue-as-new) it disarms: the gateway either takes the armed turn back or has
 * already used it, in which case the activity's result is awaited and handled first. So the
 * prepared request is never used once the conversation has moved on.
 *
 * Calls started since `armed-turn-runs` let an armed turn carry on (ArmedTurnRequest.carryOn): the
 * gateway answers the plain turns that follow the same way and reports them with the run's result,
 * which the workflow records in order as if each had come alone. Workflow code.
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
  /** The media session's result releases it if the stream closes with it untaken. */
  releasedWithMedia: boolean;
}

export class TurnArming {
  private current: Arming | null = null;
  private count = 0;
  /** The armed activity failed (the gateway is gone): thrown by the next disarm. */
  failure: unknown = null;

  constructor(
    private readonly channel: () => VoiceChannel | null,
    private readonly deliver: (result: ArmedTurnResult) => void,
  ) {}

  get armed(): boolean {
    return this.current !== null;
  }

  /**
   * Hands the gateway the next turn (no-op without a voice channel or while armed); with
   * `afterSpeech`, a plan that holds only if the caller hears that utterance whole.
   * `afterSeq`, `releasedWithMedia`: see ArmedTurnRequest.
   */
  arm(request: LlmTurnRequest, utteranceId: string, plan: { afterSeq: number; afterSpeech?: string; releasedWithMedia?: boolean; carryOn?: ArmedTurnRequest['carryOn'] }): void {
    const { afterSeq, afterSpeech, releasedWithMedia = false, carryOn } = plan;
    const channel = this.channel();
    if (!channel || this.current || this.failure) return;
    const arming: Arming = { armId: `${workflowInfo().runId.slice(0, 8)}-a${++this.count}`, settled: false, releasedWithMedia };
    this.current = arming;
    const settle = () => {
      arming.settled = true;
      if (this.current === arming) this.current = null;
    };
    const options = { ...(afterSpeech ? { afterSpeech } : {}), ...(releasedWithMedia ? { releasedWithMedia } : {}), ...(carryOn ? { carryOn } : {}) };
    channel.arm({ ...request, utteranceId, armId: arming.armId, afterSeq, ...options }).then(
      (result) => {
        settle();
        this.deliver(result);
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
    if (!arming || !arming.releasedWithMedia || arming.armId !== armId) return;
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
