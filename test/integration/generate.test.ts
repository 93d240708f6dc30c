import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startHarness, type Harness } from '../support/harness';
import { inlineRefs } from '../support/openapi-doc';

const draft = {
  name: 'Clinic Appointment Reminder',
  prompt: 'You are Asha, calling patients of Sunrise Clinic to confirm their appointment with {{doctor_name}} on {{appointment_date}}. Speak Hindi.',
  greeting: 'नमस्ते {{patient_name}}, मैं सनराइज़ क्लिनिक से आशा बोल रही हूँ।',
  context_variables: [
    { name: 'patient_name', type: 'string', description: 'patient first name' },
    { name: 'doctor_name', type: 'string', description: 'doctor of the appointment' },
    { name: 'appointment_date', type: 'string', description: 'date and time, spoken form' },
  ],
  pipeline_settings: { idle_warn_secs: null, idle_end_secs: null, min_words: 1, backchannel_phrases: ['ji haan', ' '], dictation_wait_secs: 1.5 },
  llm_settings: { temperature: 0.3 },
  suggested_tools: [
    {
      name: 'reschedule_appointment',
      description: 'Moves the appointment when the patient cannot come.',
      parameters: [{ name: 'new_date', type: 'string', description: 'requested date' }],
    },
  ],
};

describe('POST /api/agents/generate', () => {
  let fake: FakeOpenAI;
  let h: Harness;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    h = await startHarness({ env: { OPENAI_BASE_URL: fake.url, LLM_MODEL: 'test-model' } });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await h.stop();
    await fake.stop();
  });

  const generate = (body: unknown, query = '') => h.request('POST', `/api/agents/generate${query}`, { body });

  it('drafts a config from the LLM structured output that POST /api/agents accepts unchanged', async () => {
    fake.enqueue({ content: JSON.stringify(draft) });
    const res = await generate({ description: 'Call patients a day before to confirm appointments; offer to reschedule.', language: 'hi' });
    expect(res.status).toBe(200);
    const config = res.body;
    expect(config).toMatchObject({
      name: 'clinic-appointment-reminder',
      prompt: draft.prompt,
      greeting: draft.greeting,
      stt_language: 'hi-IN',
      tts_language: 'hi',
      llm_model: 'test-model',
      llm_settings: { temperature: 0.3 },
      // The turn policy's settings: the draft's backchannels added to the built-in ones.
      pipeline_settings: { idle_warn_secs: 25, idle_end_secs: 50, min_words: 1, vad_confidence: 0.5, backchannel_phrases: { mode: 'add', phrases: ['ji haan'] }, dictation_wait_secs: 1.5 },
      context_variables: {
        patient_name: { type: 'string', description: 'patient first name' },
        appointment_date: { type: 'string', description: 'date and time, spoken form' },
      },
      tool_ids: [],
    });
    expect(config).not.toHaveProperty('id');
    expect(config).not.toHaveProperty('suggested_tools');

    // What the LLM was asked: the configured model, strict JSON schema output, the description and language.
    const sent = fake.requests[0].body;
    expect(sent.model).toBe('test-model');
    expect(sent.response_format.type).toBe('json_schema');
    expect(sent.response_format.json_schema.strict).toBe(true);
    expect(sent.response_format.json_schema.schema.required).toEqual(expect.arrayContaining(['name', 'prompt', 'greeting', 'context_variables']));
    expect(sent.response_format.json_schema.schema.properties.pipeline_settings.required).toEqual(expect.arrayContaining(['backchannel_phrases', 'dictation_wait_secs']));
    expect(sent.messages.at(-1).content).toContain('offer to reschedule');
    expect(sent.messages.at(-1).content).toContain('Hindi (hi-IN)');

    // Nothing was saved; the draft is submittable as is.
    expect((await h.request('GET', '/api/agents')).body).toEqual([]);
    const created = await h.request('POST', '/api/agents', { body: config });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'clinic-appointment-reminder', stt_language: 'hi-IN', greeting: draft.greeting });

    // A second draft with the same name does not collide with the saved agent.
    fake.enqueue({ content: JSON.stringify(draft) });
    const again = await generate({ description: 'Same again', language: 'hi' }, '?with_suggestions=true');
    expect(again.status).toBe(200);
    expect(again.body.config.name).toBe('clinic-appointment-reminder-2');
    expect(again.body.suggested_tools).toEqual([
      { name: 'reschedule_appointment', description: 'Moves the appointment when the patient cannot come.', parameters: [{ name: 'new_date', type: 'string', description: 'requested date' }] },
    ]);
    expect(again.body.notes.join(' ')).toContain('an agent with that name exists');
    expect((await h.request('POST', '/api/agents', { body: again.body.config })).status).toBe(201);
  });

  it('keeps a regional language as given and maps world languages', async () => {
    fake.setResponder(() => ({ content: JSON.stringify({ ...draft, name: 'ta-agent', greeting: null }) }));
    const tamil = await generate({ description: 'Collect feedback', language: 'ta-in' });
    expect(tamil.status).toBe(200);
    expect(tamil.body).toMatchObject({ stt_language: 'ta-IN', tts_language: 'ta', greeting: null });
    const english = await generate({ description: 'Collect feedback', language: 'en' });
    expect(english.body).toMatchObject({ stt_language: 'en-US', tts_language: 'en' });
  });

  it('answers 502 naming the problem when the LLM output is not JSON', async () => {
    fake.enqueue({ content: 'Sure! Here is your agent: name=clinic' });
    const res = await generate({ description: 'A clinic agent', language: 'hi' });
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/not valid JSON/);
  });

  it('answers 502 naming the field when the LLM output does not fit the agent schema', async () => {
    fake.enqueue({ content: JSON.stringify({ ...draft, prompt: undefined }) });
    const missing = await generate({ description: 'A clinic agent', language: 'hi' });
    expect(missing.status).toBe(502);
    expect(missing.body.detail).toMatch(/prompt/);

    fake.enqueue({ content: JSON.stringify({ ...draft, pipeline_settings: { idle_warn_secs: 40, idle_end_secs: 30, min_words: null } }) });
    const inconsistent = await generate({ description: 'A clinic agent', language: 'hi' });
    expect(inconsistent.status).toBe(502);
    expect(inconsistent.body.detail).toMatch(/pipeline_settings\.idle_end_secs: must be greater than idle_warn_secs/);

    fake.enqueue({ content: JSON.stringify({ ...draft, llm_settings: { temperature: 7 } }) });
    const outOfRange = await generate({ description: 'A clinic agent', language: 'hi' });
    expect(outOfRange.status).toBe(502);
    expect(outOfRange.body.detail).toMatch(/llm_settings\.temperature/);
  });

  it('answers 502 when the LLM answers an error', async () => {
    fake.enqueue({ status: 401, error_message: 'Incorrect API key provided' });
    const res = await generate({ description: 'A clinic agent', language: 'hi' });
    expect(res.status).toBe(502);
    expect(res.body.detail).toContain('Incorrect API key provided');
  });

  it('validates the request body with 422 naming the field', async () => {
    const empty = await generate({ description: '', language: 'hi' });
    expect(empty.status).toBe(422);
    expect(empty.body.detail).toMatch(/^description: /);
    const long = await generate({ description: 'x'.repeat(4001), language: 'hi' });
    expect(long.status).toBe(422);
    expect(long.body.detail).toMatch(/^description: /);
    const noLanguage = await generate({ description: 'A clinic agent' });
    expect(noLanguage.status).toBe(422);
    expect(noLanguage.body.detail).toMatch(/^language: /);
    const badLanguage = await generate({ description: 'A clinic agent', language: 'Hindi please' });
    expect(badLanguage.status).toBe(422);
    expect(badLanguage.body.detail).toMatch(/^language: must be a BCP-47 language tag/);
    expect(fake.requests).toHaveLength(0);
  });

  it('is documented in the OpenAPI document with its error statuses', async () => {
    const doc = inlineRefs((await h.request('GET', '/api/openapi.json')).body);
    const op = doc.paths['/api/agents/generate'].post;
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '401', '422', '502', '503']));
    expect(op.requestBody.content['application/json'].schema.required).toEqual(['description', 'language']);
    expect(Object.keys(doc.paths['/api/sidechat'].post.responses)).toEqual(expect.arrayContaining(['200', '404', '422', '502', '503']));
  });

  it('requires authentication', async () => {
    const res = await h.request('POST', '/api/agents/generate', { body: { description: 'x', language: 'hi' }, token: null });
    expect(res.status).toBe(401);
  });
});

describe('POST /api/agents/generate without a usable LLM', () => {
  it('answers 503 when no LLM is configured', async () => {
    const h = await startHarness();
    try {
      const res = await h.request('POST', '/api/agents/generate', { body: { description: 'A clinic agent', language: 'hi' } });
      expect(res.status).toBe(503);
      expect(res.body.detail).toMatch(/OPENAI_API_KEY or OPENAI_BASE_URL/);
    } finally {
      await h.stop();
    }
  });

  it('answers 502 when the LLM server is unreachable', async () => {
    const gone = await startFakeOpenAI();
    await gone.stop();
    const h = await startHarness({ env: { OPENAI_BASE_URL: gone.url } });
    try {
      const res = await h.request('POST', '/api/agents/generate', { body: { description: 'A clinic agent', language: 'hi' } });
      expect(res.status).toBe(502);
      expect(res.body.detail).toMatch(/unreachable/);
    } finally {
      await h.stop();
    }
  });
});
