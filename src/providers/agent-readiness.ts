/**
 * Whether an agent's speech and language providers can run with this installation's
 * configuration, worded for people: `stt_provider sarvam: SARVAM_API_KEY is not set`. The API
 * shows these as agent `warnings`, refuses outbound calls while there are any, and the inbound
 * route apologises and fails the call instead of answering with a silent agent.
 */
import { llmProblem } from './llm/registry';
import { sttProblem } from './stt/registry';
import type { AgentSttFields } from './stt/types';
import { ttsProblem } from './tts/registry';
import type { ProviderConfig } from './vendor';

export interface AgentProviderFields extends AgentSttFields {
  llm_provider: string;
  tts_provider: string;
}

/** Every reason the agent could not hold a voice call, one line each; empty when it can. */
export function providerProblems(agent: AgentProviderFields, config: ProviderConfig): string[] {
  const out: string[] = [];
  const stt = sttProblem(agent, config);
  if (stt) out.push(`stt_provider ${agent.stt_provider}: ${stt}`);
  const llm = llmProblem(agent, config);
  if (llm) out.push(`llm_provider ${agent.llm_provider}: ${llm}`);
  const tts = ttsProblem(agent, config);
  if (tts) out.push(`tts_provider ${agent.tts_provider}: ${tts}`);
  return out;
}
