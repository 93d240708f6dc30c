/** From the agent's `analysis` setting to what one analysis runs with (defaults resolved). */
import { DEFAULT_LLM_MODEL } from '../shared/catalog';
import { DEFAULT_SUMMARY_PROMPT, type AnalysisPlan, type AnalysisSettings } from './types';

/** `enabled` when set; otherwise on as soon as anything that shapes the analysis is set. */
export function analysisEnabled(s: AnalysisSettings | null | undefined): boolean {
  if (!s) return false;
  if (s.enabled !== null && s.enabled !== undefined) return s.enabled;
  return s.summary_prompt !== null || Object.keys(s.fields).length > 0 || s.success_criteria !== null || s.llm_provider !== null || s.llm_model !== null;
}

/** null when the agent has no (enabled) analysis. The LLM defaults to the agent's own. */
export function analysisPlan(s: AnalysisSettings | null | undefined, agent: { llm_provider: string; llm_model: string }): AnalysisPlan | null {
  if (!s || !analysisEnabled(s)) return null;
  const provider = s.llm_provider ?? agent.llm_provider;
  const otherProvider = provider !== agent.llm_provider;
  const model = s.llm_model ?? (otherProvider ? (DEFAULT_LLM_MODEL[provider] ?? agent.llm_model) : agent.llm_model);
  return {
    summaryPrompt: s.summary_prompt ?? DEFAULT_SUMMARY_PROMPT,
    fields: s.fields,
    required: s.required.filter((name) => name in s.fields),
    successCriteria: s.success_criteria,
    provider,
    model,
  };
}
