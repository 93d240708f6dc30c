/**
 * The agent form's Analysis section (post-call analysis): its values and their conversion to and
 * from the API's `analysis` setting. Fields are rows (name, type, description, enum values,
 * required) in the order the user gives them; the API keeps that order.
 */
import type { Agent } from '../api/types';

type Settings = NonNullable<Agent['analysis']>;
type FieldType = Settings['fields'][string]['type'];

export interface AnalysisFieldRow {
  name: string;
  type: FieldType;
  description: string;
  /** Enum values, comma-separated. */
  values: string;
  required: boolean;
}

export interface AnalysisFormValues {
  enabled: boolean;
  summary_prompt: string;
  success_criteria: string;
  llm_provider: string | null;
  llm_model: string;
  fields: AnalysisFieldRow[];
}

export const ANALYSIS_FIELD_TYPES: FieldType[] = ['string', 'number', 'boolean', 'enum', 'date'];

export const emptyField = (): AnalysisFieldRow => ({ name: '', type: 'string', description: '', values: '', required: false });

export function analysisFormValues(a: Settings | null | undefined): AnalysisFormValues {
  // A list the API transforms (deduplicates) is `unknown` in its response schema.
  const required = (a?.required as string[] | undefined) ?? [];
  return {
    enabled: a?.enabled ?? false,
    summary_prompt: a?.summary_prompt ?? '',
    success_criteria: a?.success_criteria ?? '',
    llm_provider: a?.llm_provider ?? null,
    llm_model: a?.llm_model ?? '',
    fields: Object.entries(a?.fields ?? {}).map(([name, f]) => ({
      name,
      type: f.type,
      description: f.description ?? '',
      values: (f.enum ?? []).join(', '),
      required: required.includes(name),
    })),
  };
}

/**
 * The `analysis` of the request body, or undefined when nothing changed. Switched off, an agent
 * that had an analysis keeps its settings with `enabled: false`; switched on, every setting is
 * sent (an empty text restores the default).
 */
export function analysisRequest(values: AnalysisFormValues, initial: AnalysisFormValues, hadAnalysis: boolean): Record<string, unknown> | undefined {
  if (JSON.stringify(values) === JSON.stringify(initial)) return undefined;
  if (!values.enabled) return hadAnalysis ? { enabled: false } : undefined;
  const rows = values.fields.filter((f) => f.name.trim());
  return {
    enabled: true,
    summary_prompt: values.summary_prompt.trim() || null,
    success_criteria: values.success_criteria.trim() || null,
    llm_provider: values.llm_provider,
    llm_model: values.llm_model.trim() || null,
    fields: Object.fromEntries(
      rows.map((f) => {
        const enumValues = f.values.split(',').map((v) => v.trim()).filter(Boolean);
        return [f.name.trim(), { type: f.type, description: f.description, ...(f.type === 'enum' ? { enum: enumValues } : {}) }];
      }),
    ),
    required: rows.filter((f) => f.required).map((f) => f.name.trim()),
  };
}

/** Where the API's `analysis.*` errors are shown. */
export const ANALYSIS_FORM_PATHS = ['analysis', 'analysis.summary_prompt', 'analysis.success_criteria', 'analysis.llm_provider', 'analysis.llm_model', 'analysis.fields'];

/** `analysis.required.0` and `analysis.fields.<name>.enum` go with the field rows. */
export const analysisFormPath = (apiField: string) => apiField.replace(/^analysis\.required(\..*)?$/, 'analysis.fields');
