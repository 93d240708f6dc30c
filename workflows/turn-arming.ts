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
 * prepared request is never used once the conversation has moved on. Workflow code.
 */
import { condition, workflowInfo } from '@temporalio/workflow';
import type { ArmedTurnResult, LlmTurnRequest } from './call-definitions';
import type { VoiceChannel } from './channels';

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
  arm(request: LlmTurnRequest, utteranceId: string, plan: { afterSeq: number; afterSpeech?: string; releasedWithMedia?: boolean }): void {
    const { afterSeq, afterSpeech, releasedWithMedia = false } = plan;
    const channel = this.channel();
    if (!channel || this.current || this.failure) return;
    const arming: Arming = { armId: `${workflowInfo().runId.slice(0, 8)}-a${++this.count}`, settled: false, releasedWithMedia };
    this.current = arming;
    const settle = () => {
      arming.settled = true;
      if (this.current === arming) this.current = null;
    };
    const options = { ...(afterSpeech ? { afterSpeech } : {}), ...(releasedWithMedia ? { releasedWithMedia } : {}) };
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
