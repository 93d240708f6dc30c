/** Caller turns and LLM replies as the gateway's turn path sees them (unit tests of UtteranceDelivery). */
import type { CompletedTurn } from '../../src/gateway/turns/turn-detector';
import type { VoiceTurnResult } from '../../workflows/call-definitions';

export const turn = (text: string, duringAgentSpeech = false): CompletedTurn => ({ text, duringAgentSpeech, speechEndPerf: 1, vadStopPerf: 2, sttTtfbMs: null });

/** A reply the caller heard whole, unless `extra` says otherwise. */
export const reply = (content: string, extra: Partial<VoiceTurnResult> = {}): VoiceTurnResult => ({
  content,
  toolCalls: [],
  usage: { prompt_tokens: 1, completion_tokens: 1 },
  ttfbMs: 1,
  heardText: content,
  interrupted: false,
  characters: content.length,
  events: [],
  ...extra,
});
