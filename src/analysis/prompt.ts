/**
 * The messages of one analysis request: what to produce (from the agent's setting) and the call
 * itself (its facts and transcript). Only what the transcript says counts; relative dates are
 * resolved from the day of the call.
 */
import type { LlmMessage } from '../../workflows/call-definitions';
import type { AnalysisPlan } from './types';

export interface AnalysedCall {
  transcript: Array<{ role: 'user' | 'assistant'; text: string }>;
  /** The day the call took place (UTC), YYYY-MM-DD. */
  date: string;
  direction: string;
  status: string;
  endReason: string | null;
  durationSecs: number | null;
  context: Record<string, unknown>;
  /** A warm transfer's briefing: the summary the agent gave the destination (docs/phone-operations.md#warm-transfer). */
  transferSummary?: string | null;
}

// About 15,000 tokens: far more than a normal call, and a bound on what a runaway one costs.
export const MAX_TRANSCRIPT_CHARS = 60_000;

function fieldLines(plan: AnalysisPlan): string[] {
  return Object.entries(plan.fields).map(([name, def]) => {
    const kind = def.type === 'enum' ? `one of ${(def.enum ?? []).join(', ')}` : def.type === 'date' ? 'date YYYY-MM-DD' : def.type;
    const must = plan.required.includes(name) ? 'required' : 'null if the call did not establish it';
    return `- ${name} (${kind}; ${must}): ${def.description}`;
  });
}

function instructions(plan: AnalysisPlan, date: string): string {
  const parts = [
    'You analyse a finished phone call between an AI voice agent and a caller, from its transcript.',
    'Use only what the transcript says; never invent facts.',
    `Summary: ${plan.summaryPrompt}`,
  ];
  const fields = fieldLines(plan);
  if (fields.length) parts.push(`Fields to extract:\n${fields.join('\n')}`);
  if (plan.successCriteria) {
    parts.push(
      `Success criteria: ${plan.successCriteria}\nSet success to true only if the call met them, and give success_reason in one sentence.`,
    );
  }
  parts.push(`The call took place on ${date} (UTC): resolve relative dates such as "tomorrow" or "next Friday" from that day.`);
  return parts.join('\n\n');
}

function transcriptText(call: AnalysedCall): string {
  const lines = call.transcript.map((t) => `${t.role === 'user' ? 'Caller' : 'Agent'}: ${t.text}`);
  let text = lines.join('\n');
  if (text.length > MAX_TRANSCRIPT_CHARS) text = `[… the beginning of the call is left out …]\n${text.slice(-MAX_TRANSCRIPT_CHARS)}`;
  return text;
}

function factsLine(call: AnalysedCall): string {
  const facts = [`${call.direction} call`, `status ${call.status}${call.endReason ? ` (${call.endReason})` : ''}`];
  if (call.durationSecs !== null) facts.push(`${Math.round(call.durationSecs)} s`);
  const params = Object.entries(call.context).map(([k, v]) => `${k}=${String(v)}`);
  if (params.length) facts.push(`parameters: ${params.join(', ')}`);
  return facts.join(', ');
}

/** `rejected`: why the previous answer was refused, so the model can correct it. */
export function analysisMessages(plan: AnalysisPlan, call: AnalysedCall, rejected?: string): LlmMessage[] {
  let user = `${factsLine(call)}\n\nTranscript:\n${transcriptText(call)}`;
  if (call.transferSummary) user += `\n\nThe agent then briefed a colleague before transferring the caller (warm transfer): ${call.transferSummary}`;
  if (rejected) user += `\n\nYour previous answer was rejected (${rejected}). Answer again, following the schema exactly.`;
  return [
    { role: 'system', content: instructions(plan, call.date) },
    { role: 'user', content: user },
  ];
}
