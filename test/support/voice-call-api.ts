/**
 * What the voice-call suites ask of the API about a call: its events, its final state, and a
 * voice agent with the pipeline settings they all use (VAD stop 0.4 s, one word interrupts).
 */
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { eventually } from './fixtures';
import type { Harness } from './harness';

export type CallEvent = { id: number; event_type: string; data: any; timestamp: string };

/** `harness` is read at each call: suites assign theirs in beforeAll. */
export function voiceCallApi(harness: () => Harness) {
  return {
    async events(callId: string): Promise<CallEvent[]> {
      return (await harness().request('GET', `/api/calls/${callId}/events`)).body;
    },

    async finalCall(callId: string, timeoutMs = 20_000) {
      return eventually(async () => {
        const call = (await harness().request('GET', `/api/calls/${callId}`)).body;
        return ['completed', 'failed', 'no_answer'].includes(call.status) && call.end_time ? call : null;
      }, timeoutMs);
    },

    async createVoiceAgent(body: Record<string, unknown>) {
      const res = await harness().request('POST', '/api/agents', {
        body: { pipeline_settings: { ...PIPELINE_DEFAULTS, vad_stop_secs: 0.4, min_words: 1 }, ...body },
      });
      expect(res.status).toBe(201);
      return res.body;
    },
  };
}
