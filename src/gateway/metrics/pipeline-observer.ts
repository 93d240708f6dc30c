/**
 * What a call's pipeline tells an observer as it happens, so measurements (latency-metrics.ts)
 * watch it from the side instead of living in it. Every method is called synchronously on the
 * turn path, never once per audio frame: an observer does cheap bookkeeping only — no I/O, no
 * awaits — and does not throw.
 */
import type { AgentSpeech } from '../speech/agent-speech';
import type { CompletedTurn } from '../turns/turn-detector';

export interface PipelineObserver {
  /**
   * The VAD decided the caller started speaking (`atPerf`: performance.now()); `onsetPerf`: when
   * the audio where it places the start of that speech arrived (null if no longer known).
   */
  callerSpeechStarted(atPerf: number, onsetPerf?: number | null): void;
  /** A caller utterance is complete; it is delivered right after this. */
  utterance(turn: CompletedTurn): void;
  /** A voice turn (an LLM reply) started on this gateway: the utterance's trip through the workflow is over. */
  turnStarted(): void;
  /** The first frame of an agent utterance went out at `atPerf`. */
  agentSpeechStarted(speech: AgentSpeech, atPerf: number): void;
  /** Barge-in cut these utterances off (the line was cleared iff one of them had frames out). */
  bargedIn(cut: readonly AgentSpeech[]): void;
}

/** Several observers as one (the latency metrics and the turn spans), called in order. */
export function fanOut(...observers: PipelineObserver[]): PipelineObserver {
  return {
    callerSpeechStarted: (atPerf, onsetPerf) => observers.forEach((o) => o.callerSpeechStarted(atPerf, onsetPerf)),
    utterance: (turn) => observers.forEach((o) => o.utterance(turn)),
    turnStarted: () => observers.forEach((o) => o.turnStarted()),
    agentSpeechStarted: (speech, atPerf) => observers.forEach((o) => o.agentSpeechStarted(speech, atPerf)),
    bargedIn: (cut) => observers.forEach((o) => o.bargedIn(cut)),
  };
}
