import OpenAI from 'openai';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';

describe('fake OpenAI server against the official openai SDK', () => {
  let fake: FakeOpenAI;
  let client: OpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    client = new OpenAI({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0 });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.stop());

  it('answers non-streaming completions with message, finish_reason and deterministic usage', async () => {
    fake.enqueue({ content: 'Hello there, caller.' });
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('gpt-4o-mini');
    expect(completion.choices[0].message).toMatchObject({ role: 'assistant', content: 'Hello there, caller.' });
    expect(completion.choices[0].finish_reason).toBe('stop');
    // 'Say hello' = 9 chars → 3 tokens; reply 20 chars → 5 tokens.
    expect(completion.usage).toEqual({ prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0].body.messages[0].content).toBe('Say hello');
    expect(fake.requests[0].headers.authorization).toBe('Bearer sk-test');
  });

  it('returns non-streaming tool calls with JSON arguments', async () => {
    fake.enqueue({ tool_calls: [{ name: 'lookup_order', arguments: { order_id: 'A-17' } }], usage: { prompt_tokens: 40, completion_tokens: 7 } });
    const completion = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'Where is my order?' }],
      tools: [{ type: 'function', function: { name: 'lookup_order', parameters: { type: 'object', properties: { order_id: { type: 'string' } } } } }],
    });
    const choice = completion.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    const call = choice.message.tool_calls![0];
    expect(call.type).toBe('function');
    expect(call.id).toMatch(/^call_/);
    if (call.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('lookup_order');
    expect(JSON.parse(call.function.arguments)).toEqual({ order_id: 'A-17' });
    expect(completion.usage).toEqual({ prompt_tokens: 40, completion_tokens: 7, total_tokens: 47 });
  });

  it('streams text in several content deltas and ends with a usage chunk', async () => {
    fake.enqueue({ content: 'Your appointment is confirmed for Monday.' });
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'Confirm it' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const pieces: string[] = [];
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      if (chunk.choices.length === 0) usage = chunk.usage;
      for (const choice of chunk.choices) {
        if (choice.delta.content) pieces.push(choice.delta.content);
        if (choice.finish_reason) finish = choice.finish_reason;
      }
    }
    expect(pieces.length).toBeGreaterThan(3);
    expect(pieces.join('')).toBe('Your appointment is confirmed for Monday.');
    expect(finish).toBe('stop');
    expect(usage).toEqual({ prompt_tokens: 3, completion_tokens: 11, total_tokens: 14 });
  });

  it('streams tool calls as id/name first, then argument fragments per index', async () => {
    fake.enqueue({
      content: 'Let me check.',
      tool_calls: [
        { name: 'get_weather', arguments: { city: 'Mumbai', unit: 'celsius' } },
        { name: 'end_call', arguments: { reason: 'done' } },
      ],
    });
    const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Weather?' }], stream: true });
    const calls: Array<{ id?: string; name?: string; args: string; deltas: number }> = [];
    let finish: string | null = null;
    let text = '';
    let sawUsage = false;
    for await (const chunk of stream) {
      if (chunk.usage) sawUsage = true;
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? '';
        for (const tc of choice.delta.tool_calls ?? []) {
          const slot = (calls[tc.index] ??= { args: '', deltas: 0 });
          slot.deltas += 1;
          if (tc.id) {
            expect(slot.id).toBeUndefined();
            expect(tc.type).toBe('function');
            expect(tc.function?.arguments).toBe('');
            slot.id = tc.id;
            slot.name = tc.function?.name;
          }
          slot.args += tc.function?.arguments ?? '';
        }
        if (choice.finish_reason) finish = choice.finish_reason;
      }
    }
    expect(text).toBe('Let me check.');
    expect(finish).toBe('tool_calls');
    expect(sawUsage).toBe(false);
    expect(calls).toHaveLength(2);
    expect(calls[0].name).toBe('get_weather');
    expect(calls[0].deltas).toBeGreaterThan(2);
    expect(JSON.parse(calls[0].args)).toEqual({ city: 'Mumbai', unit: 'celsius' });
    expect(calls[1].name).toBe('end_call');
    expect(JSON.parse(calls[1].args)).toEqual({ reason: 'done' });
    expect(calls[0].id).not.toBe(calls[1].id);
  });

  it('is understood by the SDK stream helper, which reassembles the final completion', async () => {
    fake.enqueue({ tool_calls: [{ name: 'transfer', arguments: { to: '+919800000000', note: 'billing "priority"' } }] });
    const runner = client.chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'Transfer me' }] });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0].message.tool_calls![0];
    if (call.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('transfer');
    expect(JSON.parse(call.function.arguments)).toEqual({ to: '+919800000000', note: 'billing "priority"' });
  });

  it('computes replies from the request with a responder, which wins over the queue', async () => {
    fake.enqueue({ content: 'queued' });
    fake.setResponder((body) => ({ content: `You said: ${body.messages.at(-1).content}` }));
    const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'ping' }] });
    expect(completion.choices[0].message.content).toBe('You said: ping');
    fake.setResponder(undefined);
    const next = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(next.choices[0].message.content).toBe('queued');
    const fallback = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(fallback.choices[0].message.content).toBe('OK.');
  });

  it('fails the next requests with OpenAI error JSON, which SDK retries get past', async () => {
    fake.failNext(1, 429);
    const err = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(429);

    fake.failNext(2, 500);
    const retrying = new OpenAI({ apiKey: 'k', baseURL: fake.url, maxRetries: 2 });
    const before = fake.requests.length;
    const completion = await retrying.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(completion.choices[0].message.content).toBe('OK.');
    expect(fake.requests.length - before).toBe(3);
  });

  it('answers scripted HTTP errors with a message, honours delays and lists models', async () => {
    fake.enqueue({ status: 400, error_message: 'Invalid schema for response_format' });
    const err = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('Invalid schema for response_format');

    fake.enqueue({ content: '{"a":1}', delay_ms: 60 });
    const started = Date.now();
    const completion = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'json please' }],
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
    expect(JSON.parse(completion.choices[0].message.content!)).toEqual({ a: 1 });
    expect(fake.requests.at(-1)!.body.response_format.type).toBe('json_schema');

    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toContain('fake-model');
  });
  it('answers by rules on the system prompt or any message, newest rule first, before the responder and the queue', async () => {
    fake.setResponder(() => ({ content: 'from the responder' }));
    fake.addRule({ system: 'You are v1', reply: { content: 'version one' } });
    fake.addRule({ anyMessage: 'secret word', reply: (body) => ({ content: `heard ${body.messages.length} messages` }) });
    fake.addRule({ system: 'You are v1', reply: { content: 'newer rule' } });
    const ask = async (system: string, user: string) =>
      (await client.chat.completions.create({ model: 'm', messages: [{ role: 'system', content: system }, { role: 'user', content: user }] })).choices[0].message.content;
    expect(await ask('You are v1 of the agent', 'hi')).toBe('newer rule');
    expect(await ask('You are v2', 'the secret word')).toBe('heard 2 messages');
    expect(await ask('You are v2', 'hi')).toBe('from the responder');
    fake.reset();
    expect(await ask('You are v1', 'hi')).toBe('OK.');
  });
});

describe('fake OpenAI server: structured requests (json_schema response format, forced tool call)', () => {
  let fake: FakeOpenAI;
  let client: OpenAI;
  const schema = {
    type: 'object',
    properties: { booked: { type: 'boolean' }, date: { type: ['string', 'null'] }, mood: { type: 'string', enum: ['calm', 'angry'] } },
    required: ['booked', 'date', 'mood'],
    additionalProperties: false,
  };
  const asJsonSchema = (content: string) =>
    client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content }],
      response_format: { type: 'json_schema', json_schema: { name: 'outcome', strict: true, schema } },
    });

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    client = new OpenAI({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0 });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.stop());

  it('answers scripted objects as JSON content, apart from the ordinary reply queue', async () => {
    fake.enqueue({ content: 'A conversation reply.' });
    fake.enqueueStructured({ object: { booked: true, date: '2026-12-03', mood: 'calm' }, usage: { prompt_tokens: 90, completion_tokens: 12 } });
    const completion = await asJsonSchema('analyse');
    expect(JSON.parse(completion.choices[0].message.content!)).toEqual({ booked: true, date: '2026-12-03', mood: 'calm' });
    expect(completion.usage).toMatchObject({ prompt_tokens: 90, completion_tokens: 12 });
    const chat = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hello' }] });
    expect(chat.choices[0].message.content).toBe('A conversation reply.');
    expect(fake.structuredRequests).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
  });

  it('answers a forced tool call with the object as the function arguments', async () => {
    fake.setStructuredResponder((body) => ({ object: { booked: false, date: null, mood: body.tool_choice.function.name === 'outcome' ? 'angry' : 'calm' } }));
    const completion = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'analyse' }],
      tools: [{ type: 'function', function: { name: 'outcome', parameters: schema } }],
      tool_choice: { type: 'function', function: { name: 'outcome' } },
    });
    const message = completion.choices[0].message;
    expect(message.content).toBeNull();
    const call = message.tool_calls![0];
    if (call.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('outcome');
    expect(JSON.parse(call.function.arguments)).toEqual({ booked: false, date: null, mood: 'angry' });
  });

  it('samples a schema-valid object when nothing is scripted, sends raw text when asked, and fails only structured requests', async () => {
    expect(JSON.parse((await asJsonSchema('a')).choices[0].message.content!)).toEqual({ booked: false, date: null, mood: 'calm' });
    fake.enqueueStructured({ raw: '{"booked": tru' });
    expect((await asJsonSchema('b')).choices[0].message.content).toBe('{"booked": tru');

    fake.failStructuredNext(2, 503);
    expect(await asJsonSchema('c').catch((e: unknown) => (e as InstanceType<typeof OpenAI.APIError>).status)).toBe(503);
    const chat = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hello' }] });
    expect(chat.choices[0].message.content).toBe('OK.');
    expect(await asJsonSchema('d').catch((e: unknown) => (e as InstanceType<typeof OpenAI.APIError>).status)).toBe(503);
    expect(JSON.parse((await asJsonSchema('e')).choices[0].message.content!)).toMatchObject({ booked: false });
  });
});
