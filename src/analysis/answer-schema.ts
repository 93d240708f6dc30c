/**
 * The shape the model must answer in, built from the agent's field definitions: a JSON schema for
 * the provider's structured-output (or tool-call) mode, and the check every answer passes before
 * it is accepted. The check does not trust the provider: a best-effort mode, a tool call or an
 * OpenAI-compatible server without constrained decoding may answer anything.
 */
import type { AnalysisAnswer, AnalysisFieldDef, AnalysisPlan } from './types';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function fieldSchema(def: AnalysisFieldDef, required: boolean): Record<string, unknown> {
  const base = def.type === 'enum' || def.type === 'date' ? 'string' : def.type;
  // Strict mode wants every property listed as required: an optional field is a nullable one.
  const type = required ? base : [base, 'null'];
  if (def.type === 'enum') return { type, enum: required ? def.enum : [...(def.enum ?? []), null], description: def.description };
  // A date is described rather than constrained (`format`/`pattern` are not accepted by every
  // provider's strict mode); the check below enforces it.
  const description = def.type === 'date' ? `${def.description} (a calendar date, YYYY-MM-DD)` : def.description;
  return { type, description };
}

/** The JSON schema of an answer (strict-mode compatible: all properties required, no others). */
export function answerJsonSchema(plan: AnalysisPlan): Record<string, unknown> {
  const properties: Record<string, unknown> = {
    summary: { type: 'string', description: plan.summaryPrompt },
  };
  const names = Object.keys(plan.fields);
  if (names.length) {
    properties.fields = {
      type: 'object',
      description: 'What the call established; null for what it did not tell',
      properties: Object.fromEntries(names.map((n) => [n, fieldSchema(plan.fields[n]!, plan.required.includes(n))])),
      required: names,
      additionalProperties: false,
    };
  }
  if (plan.successCriteria) {
    properties.success = { type: 'boolean', description: 'true when the call met the success criteria' };
    properties.success_reason = { type: 'string', description: 'one sentence saying why' };
  }
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

export type AnswerCheck = { ok: true; answer: AnalysisAnswer } | { ok: false; problem: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isCalendarDate(v: string): boolean {
  if (!DATE.test(v)) return false;
  const d = new Date(`${v}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v;
}

/** Why `value` is not a valid `def`, or null. */
function fieldProblem(def: AnalysisFieldDef, value: unknown): string | null {
  const shown = JSON.stringify(value)?.slice(0, 60);
  switch (def.type) {
    case 'string':
      return typeof value === 'string' ? null : `must be a string, got ${shown}`;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : `must be a number, got ${shown}`;
    case 'boolean':
      return typeof value === 'boolean' ? null : `must be true or false, got ${shown}`;
    case 'enum':
      return typeof value === 'string' && (def.enum ?? []).includes(value) ? null : `must be one of ${(def.enum ?? []).join(', ')}, got ${shown}`;
    case 'date':
      return typeof value === 'string' && isCalendarDate(value) ? null : `must be a date YYYY-MM-DD, got ${shown}`;
  }
}

/**
 * The answer as the platform stores it, or every reason it is not acceptable. Keys the schema
 * does not know are dropped; a field the call did not tell is null unless it is required.
 */
export function checkAnswer(plan: AnalysisPlan, raw: unknown): AnswerCheck {
  if (!isObject(raw)) return { ok: false, problem: 'the answer is not a JSON object' };
  const problems: string[] = [];
  const summary = typeof raw.summary === 'string' ? raw.summary.trim() : '';
  if (!summary) problems.push('summary: must be a non-empty string');
  const given = isObject(raw.fields) ? raw.fields : {};
  if (Object.keys(plan.fields).length && !isObject(raw.fields)) problems.push('fields: must be an object');
  const fields: AnalysisAnswer['fields'] = {};
  for (const [name, def] of Object.entries(plan.fields)) {
    const value = given[name];
    if (value === undefined || value === null) {
      if (plan.required.includes(name)) problems.push(`fields.${name}: is required`);
      fields[name] = null;
      continue;
    }
    const problem = fieldProblem(def, value);
    if (problem) problems.push(`fields.${name}: ${problem}`);
    else fields[name] = value as string | number | boolean;
  }
  let success: boolean | null = null;
  let reason: string | null = null;
  if (plan.successCriteria) {
    if (typeof raw.success !== 'boolean') problems.push('success: must be true or false');
    else success = raw.success;
    reason = typeof raw.success_reason === 'string' && raw.success_reason.trim() ? raw.success_reason.trim() : null;
    if (!reason) problems.push('success_reason: must be a non-empty string');
  }
  if (problems.length) return { ok: false, problem: problems.join('; ') };
  return { ok: true, answer: { summary, fields, success, success_reason: reason } };
}
