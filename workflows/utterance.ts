/**
 * A caller utterance as the call's queue holds it, and one turn of an armed activity's result.
 * Workflow code.
 */
import type { ArmedTurnResult, GatewayEvent, LlmTurnRequest } from './call-definitions';
import type { Thought } from './channels';

export interface Utterance {
  id: number;
  text: string;
  duringAgentSpeech: boolean;
  /** The gateway's utterance number (voice calls). */
  seq?: number;
  /** Gateway events that came with it, recorded when it is handled (a turn run's later turns). */
  events?: GatewayEvent[];
  /** An armed turn's reply, started by the gateway the moment the caller stopped. */
  prepared?: {
    thought: Thought | null;
    failure: { type: string; message: string } | null;
    /** The armed turn's speech id and request (absent for a reply the gateway gave alone). */
    utteranceId?: string;
    request?: LlmTurnRequest;
    /** When the gateway had the utterance: its reply's events come after. */
    atMs: number;
    /** A turn run's earlier turn: when its reply had played (its events are recorded at that time). */
    answeredAtMs?: number;
  };
}

/** One turn of an armed activity's result: its own, or one of a run's earlier turns. */
export type ArmedTurn = Omit<ArmedTurnResult, 'events' | 'earlier'> & { answeredAtMs?: number };

export const answeredAt = (ms: number | undefined) => (ms !== undefined && Number.isFinite(ms) ? { answeredAtMs: ms } : {});
