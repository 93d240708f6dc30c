/**
 * The agent setting `analysis` (post-call analysis): what to summarise, which fields to extract,
 * what counts as success, and with which LLM. See docs/post-call-analysis.md.
 */
import { z } from 'zod';
import { ANALYSIS_FIELD_TYPES, DEFAULT_SUMMARY_PROMPT } from '../../analysis/types';
import { strictObject } from './flow';
import { LlmProvider } from './common';

/** Field names go into JSON schemas and into `GET /api/calls?field.<name>=`: identifiers only. */
export const ANALYSIS_FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
// A schema the model can fill in one answer; more is a sign of a form, not a call outcome.
const MAX_FIELDS = 50;

const FieldSchema = strictObject({
  type: z.enum(ANALYSIS_FIELD_TYPES).meta({ id: 'AnalysisFieldType' }).describe('`date` answers are calendar dates YYYY-MM-DD'),
  description: z.string().max(2_000).default('').describe('what the field means; the model reads it'),
  enum: z.array(z.string().min(1).max(200)).min(1).max(100).optional().describe('the allowed values of an `enum` field'),
}).superRefine((f, ctx) => {
  if (f.type === 'enum' && !f.enum?.length) ctx.addIssue({ code: 'custom', path: ['enum'], message: 'an enum field needs its values' });
  if (f.type !== 'enum' && f.enum) ctx.addIssue({ code: 'custom', path: ['enum'], message: 'only an enum field has values' });
}).meta({ id: 'AnalysisField' });

/** Each setting's rule; defaults (create) and nullability (PATCH) are added below. */
const rules = {
  enabled: z.boolean().describe('default (null): on when any other setting is given'),
  summary_prompt: z.string().min(1).max(5_000).describe(`how to summarise; null: "${DEFAULT_SUMMARY_PROMPT}"`),
  fields: z
    .record(z.string().regex(ANALYSIS_FIELD_NAME, 'field names are letters, digits and _, starting with a letter or _'), FieldSchema)
    .refine((f) => Object.keys(f).length <= MAX_FIELDS, `at most ${MAX_FIELDS} fields`)
    .describe('the outcome schema: name -> {type, description, enum?}'),
  required: z.array(z.string()).max(MAX_FIELDS).transform((r) => [...new Set(r)]).describe('fields the answer must fill; the others may be null'),
  success_criteria: z.string().min(1).max(5_000).describe('what a successful call is; null: no success evaluation'),
  llm_provider: LlmProvider.describe("null: the agent's llm_provider"),
  llm_model: z.string().min(1).max(200).describe("null: the agent's llm_model (or the provider's default with another llm_provider)"),
};

const shape = {
  enabled: rules.enabled.nullable().default(null),
  summary_prompt: rules.summary_prompt.nullable().default(null),
  fields: rules.fields.default({}),
  required: rules.required.default([]),
  success_criteria: rules.success_criteria.nullable().default(null),
  llm_provider: rules.llm_provider.nullable().default(null),
  llm_model: rules.llm_model.nullable().default(null),
};

/** The setting with its defaults; `required` must name defined fields. */
export const AnalysisSettingsSchema = strictObject(shape).superRefine((a, ctx) => {
  a.required.forEach((name, i) => {
    if (!(name in a.fields)) ctx.addIssue({ code: 'custom', path: ['required', i], message: `"${name}" is not one of the fields` });
  });
}).meta({ id: 'AnalysisConfig', description: 'post-call analysis as configured; enabled null: on when any other setting is given' });

/** PATCH: merged key by key into the stored setting; null for a key restores its default. */
export const AnalysisPatchSchema = strictObject({
  enabled: rules.enabled.nullable().optional(),
  summary_prompt: rules.summary_prompt.nullable().optional(),
  fields: rules.fields.nullable().optional(),
  required: rules.required.nullable().optional(),
  success_criteria: rules.success_criteria.nullable().optional(),
  llm_provider: rules.llm_provider.nullable().optional(),
  llm_model: rules.llm_model.nullable().optional(),
}).meta({ id: 'AnalysisSettingsPatch' });

/** As answered: `enabled` resolved. */
export const AnalysisSettingsOutSchema = z.object({ ...shape, enabled: z.boolean().describe('whether calls of this agent are analysed') }).meta({ id: 'AnalysisSettings' });
