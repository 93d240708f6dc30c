/**
 * Turns local VAD events and streaming STT results into caller utterances, and decides barge-in.
 *
 * A turn begins at VAD `speech_started` and ends at `speech_stopped`, when the STT is asked to
 * finalize; the utterance is every final transcript since the turn began, emitted when the
 * final that answers the finalize (or an endpointing final) arrives. Finals may come before the
 * VAD stop (they are collected), after it (awaited, at most FINAL_WAIT_MS, then the last interim
 * stands in for a missing final), or with no VAD turn at all (speech too quiet for the VAD:
 * emitted after ORPHAN_WAIT_MS) — an utterance is never dropped, and empty text never emitted.
 * Speech resuming before the final arrives continues the same turn.
 *
 * End of turn: a turn whose words stop in the middle of dictation (a number, an e-mail address,
 * a trailing "and"; the policy's end-of-turn judge says so) is held open after its final until
 * the caller has been silent `dictation_wait_secs` in all, counted from the VAD's stop: speech
 * resuming within it (the VAD's next speech_started) continues the same turn. Other turns end
 * at the VAD's stop as before.
 *
 * Barge-in, while the agent is speaking, follows the call's turn policy (src/shared/turn-policy/:
 * interruption words, backchannel phrases, min_words, in the agent's language), applied to the
 * caller's transcript (finals + interim) of this turn as it grows, at the latest when the turn
 * completes. A turn that overlapped the agent, did not interrupt it and ended while
 * the agent was still speaking is reported `duringAgentSpeech` (the policy's backchannel
 * candidate: "uh-huh"); one that outlasted the agent's speech is a normal turn.
 *
 * Pause at once, decide after (policy `pausesOnSpeech`): from the VAD's speech start over the
 * agent, `holdsAgent` is true and the gateway sends no more agent audio (the caller stops
 * hearing it within the provider's ~60 ms buffer; the position is kept). An interruption
 * cancels the agent as before; a backchannel, or no words within `false_interruption_secs`,
 * resumes it where it stopped (`resumed(reason)`).
 */
import type { SttTranscript } from '../../providers/stt/types';
import { interruptsAgent, interruptsOnSpeechStart, pausesOnSpeech, ruleEndOfTurn, turnPolicyOf, type EndOfTurnJudge, type TurnPolicy } from '../../shared/turn-policy';
import type { VadEvent } from '../vad/vad-analyzer';

/** Longest wait for a streaming STT's final after the VAD said the caller stopped (an adapter may ask for longer). */
export const FINAL_WAIT_MS = 1000;
/** A final transcript outside any VAD turn is emitted after this much quiet. */
export const ORPHAN_WAIT_MS = 600;

export interface CompletedTurn {
  text: string;
  duringAgentSpeech: boolean;
  /**
   * performance.now() when the caller's last speech frame arrived at the gateway (VAD), null
   * without a VAD turn: latency measured from here includes any queueing in the gateway.
   */
  speechEndPerf: number | null;
  /** performance.now() when the frame that let the VAD decide the caller stopped arrived. */
  vadStopPerf: number | null;
  /** VAD stop → the final transcript that completed the turn, when that came after the stop. */
  sttTtfbMs: number | null;
}

export interface TurnDetectorHooks {
  /** Is the agent speaking (an utterance generating, queued or playing)? */
  agentSpeaking(): boolean;
  /** Interrupt the agent now. */
  bargeIn(): void;
  /** Ask the STT for the final transcript of what it has heard. */
  finalize(): void;
  /** How long the STT needs to answer finalize() (segment-based adapters need a round trip); default FINAL_WAIT_MS. */
  finalWaitMs?(): number | undefined;
  utterance(turn: CompletedTurn): void;
  /** The agent, paused by speech over it, plays on: the speech was a backchannel, or had no words. */
  resumed?(reason: 'backchannel' | 'no_words'): void;
  /** The agent is paused (speech over it, the decision pending): silence the line now. */
  paused?(): void;
  /** When the caller audio at `audioMs` (the VAD's clock) arrived; null if unknown. */
  arrivalPerf?(audioMs: number): number | null;
  /**
   * The VAD says the caller stopped: what the STT has heard of the turn so far (finals and the
   * interim), before the final arrives — for work the reply will need (knowledge prefetch).
   */
  heardSoFar?(text: string): void;
}

type Phase = 'idle' | 'speaking' | 'finalizing';


export class TurnDetector {
  private phase: Phase = 'idle';
  private finals: string[] = [];
  private interim = '';
  private overlapped = false;
  private interrupted = false;
  private speechEndPerf: number | null = null;
  private vadStopPerf: number | null = null;
  /** When the VAD's stop decision was processed (the STT's time to final counts from here). */
  private vadDecidedPerf: number | null = null;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Held open for more dictation (see the header); `heldFinalPerf`: when the final that would have ended it came. */
  private holding = false;
  private heldFinalPerf: number | null = null;
  /** The agent is paused by the caller's speech over it, words undecided (see the header). */
  private paused = false;
  private pauseTimer: NodeJS.Timeout | undefined;

  private readonly policy: TurnPolicy;
  private readonly endOfTurn: EndOfTurnJudge;

  /**
   * `policy`: the call's (turnPolicyOf); a bare min_words for the built-in phrases of every
   * language. `endOfTurn`: how long a turn's silence lasts before it ends (default: the policy's rules).
   */
  constructor(
    policy: TurnPolicy | number,
    private readonly hooks: TurnDetectorHooks,
    endOfTurn?: EndOfTurnJudge,
  ) {
    this.policy = typeof policy === 'number' ? turnPolicyOf({ min_words: policy }) : policy;
    this.endOfTurn = endOfTurn ?? ruleEndOfTurn(this.policy);
  }

  /** Should the agent's audio be held (paused) now? */
  get holdsAgent(): boolean {
    return this.paused;
  }

  /** True between VAD speech start and the turn's completion. */
  get inTurn(): boolean {
    return this.phase !== 'idle';
  }

  onVad(event: VadEvent, nowPerf = performance.now()): void {
    if (this.closed) return;
    if (event.type === 'speech_started') {
      this.clearTimer();
      if (this.phase === 'idle' && this.finals.length === 0) this.resetTurn();
      this.phase = 'speaking';
      this.holding = false;
      this.heldFinalPerf = null;
      if (this.hooks.agentSpeaking()) {
        this.overlapped = true;
        if (interruptsOnSpeechStart(this.policy)) this.interrupt();
        else {
          if (!this.interrupted && !this.paused && pausesOnSpeech(this.policy)) this.pause();
          this.checkWords();
        }
      }
      return;
    }
    // speech_stopped
    if (this.phase !== 'speaking') return;
    this.phase = 'finalizing';
    this.vadDecidedPerf = nowPerf;
    const estimate = (audioMs: number) => this.hooks.arrivalPerf?.(audioMs) ?? nowPerf - (event.detected_at_ms - audioMs);
    this.vadStopPerf = estimate(event.detected_at_ms);
    this.speechEndPerf = estimate(event.at_ms);
    this.hooks.finalize();
    this.arm(this.hooks.finalWaitMs?.() ?? FINAL_WAIT_MS);
    const soFar = `${this.finals.join(' ')} ${this.interim}`.trim();
    if (soFar) this.hooks.heardSoFar?.(soFar);
  }

  onTranscript(t: SttTranscript, nowPerf = performance.now()): void {
    if (this.closed) return;
    const text = t.text.trim();
    if (!t.isFinal) {
      this.interim = text;
      if (this.phase !== 'idle') this.checkWords();
      return;
    }
    if (text) this.finals.push(text);
    this.interim = '';
    if (this.phase === 'speaking') {
      this.checkWords();
    } else if (this.phase === 'finalizing') {
      this.checkWords();
      // Held for dictation: the hold's timer ends the turn, unless the caller goes on.
      if ((t.fromFinalize || t.speechFinal) && !this.holding) this.complete(nowPerf, true);
    } else if (text) {
      // No VAD turn: speech below the VAD's thresholds, or a final arriving after a turn timed out.
      // Never a barge-in (the VAD heard no speech), but over the agent it is a backchannel.
      if (this.hooks.agentSpeaking()) this.overlapped = true;
      this.arm(ORPHAN_WAIT_MS);
    }
  }

  /**
   * An agent utterance begins. With `min_words` ≤ 1, if the caller is talking right now (a reply
   * to an earlier turn arriving late, the next round after a tool call), that is a barge-in as
   * much as the caller starting over the agent: the VAD will not announce this speech again, so
   * without this the agent would talk over the caller until their turn ends.
   */
  onAgentSpeech(): void {
    if (this.closed || this.phase !== 'speaking' || !interruptsOnSpeechStart(this.policy)) return;
    this.overlapped = true;
    this.interrupt();
  }

  /** The call ended: pending timers stop, nothing more is emitted. */
  close(): void {
    this.closed = true;
    this.clearTimer();
    this.clearPause();
  }

  private pause(): void {
    this.paused = true;
    this.hooks.paused?.();
    this.pauseTimer = setTimeout(() => {
      this.pauseTimer = undefined;
      // No words yet: a cough, a door, the line. The agent plays on; words later still interrupt.
      if (this.paused && !`${this.finals.join(' ')} ${this.interim}`.trim()) this.resume('no_words');
    }, this.policy.falseInterruptionMs);
  }

  private resume(reason: 'backchannel' | 'no_words'): void {
    if (!this.paused) return;
    this.clearPause();
    if (this.hooks.agentSpeaking()) this.hooks.resumed?.(reason);
  }

  private clearPause(): void {
    this.paused = false;
    if (this.pauseTimer) clearTimeout(this.pauseTimer);
    this.pauseTimer = undefined;
  }

  private checkWords(): void {
    if (this.interrupted || interruptsOnSpeechStart(this.policy) || !this.overlapped || !this.hooks.agentSpeaking()) return;
    if (interruptsAgent(`${this.finals.join(' ')} ${this.interim}`, this.policy)) this.interrupt();
  }

  private interrupt(): void {
    this.clearPause();
    this.interrupted = true;
    this.hooks.bargeIn();
  }

  private complete(nowPerf: number, viaFinal: boolean): void {
    this.clearTimer();
    const wasFinalizing = this.phase === 'finalizing';
    let text = this.finals.join(' ').trim();
    if (!text) text = this.interim;
    if (wasFinalizing && !this.holding && text && this.vadDecidedPerf !== null) {
      // Mid-dictation: wait for more, `silenceMs` of silence in all (the VAD's stop already waited vad_stop_secs).
      const holdMs = this.endOfTurn.silenceMs(text) - this.policy.vadStopMs - (nowPerf - this.vadDecidedPerf);
      if (holdMs > 0) {
        this.holding = true;
        this.heldFinalPerf = viaFinal ? nowPerf : null;
        this.arm(holdMs);
        return;
      }
    }
    const finalPerf = this.holding ? this.heldFinalPerf : viaFinal ? nowPerf : null;
    if (wasFinalizing && text && this.overlapped && !this.interrupted && this.hooks.agentSpeaking()) {
      // The final transcript may be what first shows min_words.
      if (!interruptsOnSpeechStart(this.policy) && interruptsAgent(text, this.policy)) this.interrupt();
    }
    const duringAgentSpeech = this.overlapped && !this.interrupted && this.hooks.agentSpeaking();
    this.resume(text ? 'backchannel' : 'no_words');
    const turn: CompletedTurn = {
      text,
      duringAgentSpeech,
      speechEndPerf: wasFinalizing ? this.speechEndPerf : null,
      vadStopPerf: wasFinalizing ? this.vadStopPerf : null,
      sttTtfbMs: finalPerf !== null && wasFinalizing && this.vadDecidedPerf !== null ? Math.round(finalPerf - this.vadDecidedPerf) : null,
    };
    this.phase = 'idle';
    this.holding = false;
    this.heldFinalPerf = null;
    this.resetTurn();
    if (text) this.hooks.utterance(turn);
  }

  private resetTurn(): void {
    this.finals = [];
    this.interim = '';
    this.overlapped = false;
    this.interrupted = false;
    this.speechEndPerf = null;
    this.vadStopPerf = null;
    this.vadDecidedPerf = null;
  }

  private arm(ms: number): void {
    this.clearTimer();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.phase !== 'speaking') this.complete(performance.now(), false);
    }, ms);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
