/**
 * The post-call analysis's answer shape: the JSON schema sent to the provider (strict-mode rules)
 * and the check every answer passes before it is stored, including enum values and calendar dates.
 */
import { answerJsonSchema, checkAnswer } from '../../src/analysis/answer-schema';
import { analysisEnabled, analysisPlan } from '../../src/analysis/plan';
import { DEFAULT_SUMMARY_PROMPT, type AnalysisPlan, type AnalysisSettings } from '../../src/analysis/types';

const plan: AnalysisPlan = {
  summaryPrompt: 'Summarise briefly.',
  fields: {
    booked: { type: 'boolean', description: 'an appointment was booked' },
    date: { type: 'date', description: 'the appointment day' },
    service: { type: 'enum', description: 'what for', enum: ['checkup', 'cleaning'] },
    party: { type: 'number', description: 'how many people' },
    note: { type: 'string', description: 'anything else' },
  },
  required: ['booked'],
  successCriteria: 'An appointment was booked.',
  provider: 'openai',
  model: 'gpt-4o-mini',
};

describe('answer schema', () => {
  it('lists every property as required with no others, optional fields nullable (strict mode)', () => {
    const schema = answerJsonSchema(plan) as any;
    expect(schema).toMatchObject({ type: 'object', additionalProperties: false, required: ['summary', 'fields', 'success', 'success_reason'] });
    expect(schema.properties.fields).toMatchObject({ additionalProperties: false, required: ['booked', 'date', 'service', 'party', 'note'] });
    expect(schema.properties.fields.properties.booked.type).toBe('boolean');
    expect(schema.properties.fields.properties.date.type).toEqual(['string', 'null']);
    expect(schema.properties.fields.properties.date.description).toContain('YYYY-MM-DD');
    expect(schema.properties.fields.properties.service).toMatchObject({ type: ['string', 'null'], enum: ['checkup', 'cleaning', null] });
  });

  it('leaves out fields and the verdict when the agent asks for neither', () => {
    const schema = answerJsonSchema({ ...plan, fields: {}, required: [], successCriteria: null }) as any;
    expect(schema.required).toEqual(['summary']);
  });
});

describe('answer check', () => {
  const good = { summary: 'Booked a checkup.', fields: { booked: true, date: '2026-12-03', service: 'checkup', party: 2, note: null }, success: true, success_reason: 'A slot was booked.' };

  it('accepts a valid answer, drops unknown keys and fills missing optional fields with null', () => {
    const checked = checkAnswer(plan, { ...good, fields: { booked: true, extra: 'x' }, mood: 'calm' });
    expect(checked).toEqual({
      ok: true,
      answer: { summary: 'Booked a checkup.', fields: { booked: true, date: null, service: null, party: null, note: null }, success: true, success_reason: 'A slot was booked.' },
    });
  });

  it.each([
    [{ ...good, fields: { ...good.fields, date: '03/12/2026' } }, 'fields.date: must be a date YYYY-MM-DD, got "03/12/2026"'],
    [{ ...good, fields: { ...good.fields, date: '2026-02-30' } }, 'fields.date: must be a date YYYY-MM-DD'],
    [{ ...good, fields: { ...good.fields, service: 'surgery' } }, 'fields.service: must be one of checkup, cleaning, got "surgery"'],
    [{ ...good, fields: { ...good.fields, booked: 'yes' } }, 'fields.booked: must be true or false'],
    [{ ...good, fields: { ...good.fields, booked: null } }, 'fields.booked: is required'],
    [{ ...good, fields: { ...good.fields, party: '2' } }, 'fields.party: must be a number'],
    [{ ...good, success: 'true' }, 'success: must be true or false'],
    [{ ...good, summary: '  ' }, 'summary: must be a non-empty string'],
    [[good], 'the answer is not a JSON object'],
  ])('refuses %j', (answer, problem) => {
    const checked = checkAnswer(plan, answer);
    expect(checked.ok).toBe(false);
    expect(!checked.ok && checked.problem).toContain(problem);
  });
});

describe('analysis plan from the agent setting', () => {
  const none: AnalysisSettings = { enabled: null, summary_prompt: null, fields: {}, required: [], success_criteria: null, llm_provider: null, llm_model: null };
  const agent = { llm_provider: 'openai', llm_model: 'gpt-4.1' };

  it('is on when anything is set, unless disabled, and off for an empty or absent setting', () => {
    expect(analysisEnabled(null)).toBe(false);
    expect(analysisEnabled(none)).toBe(false);
    expect(analysisEnabled({ ...none, enabled: true })).toBe(true);
    expect(analysisEnabled({ ...none, success_criteria: 'Booked.' })).toBe(true);
    expect(analysisEnabled({ ...none, success_criteria: 'Booked.', enabled: false })).toBe(false);
  });

  it("takes the agent's LLM by default, the other provider's default model when only the provider differs", () => {
    expect(analysisPlan({ ...none, enabled: true }, agent)).toMatchObject({ summaryPrompt: DEFAULT_SUMMARY_PROMPT, provider: 'openai', model: 'gpt-4.1' });
    expect(analysisPlan({ ...none, enabled: true, llm_provider: 'groq' }, agent)).toMatchObject({ provider: 'groq', model: 'llama-3.1-8b-instant' });
    expect(analysisPlan({ ...none, enabled: true, llm_model: 'gpt-4o' }, agent)).toMatchObject({ provider: 'openai', model: 'gpt-4o' });
    expect(analysisPlan({ ...none, enabled: false, summary_prompt: 'x' }, agent)).toBeNull();
  });
});
