/**
 * The three LLM providers of the registry, each pointed at the OpenAI fake (OpenAI through
 * OPENAI_BASE_URL, Groq through GROQ_BASE_URL, Azure through AZURE_OPENAI_ENDPOINT): an agent's
 * llm_settings (temperature, max_tokens) and its provider's default model reach the request each
 * vendor receives, with that vendor's own auth header and URL. Through the real API, workflow and
 * worker (the text test channel runs the same turn code as a phone call).
 */
import { DEFAULT_LLM_MODEL } from '../../src/shared/catalog';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startHarness, type Harness } from '../support/harness';

let h: Harness;
let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  h = await startHarness({
    env: {
      OPENAI_API_KEY: 'sk-openai-key',
      OPENAI_BASE_URL: fake.url,
      GROQ_API_KEY: 'gsk-groq-key',
      GROQ_BASE_URL: fake.url,
      AZURE_OPENAI_ENDPOINT: fake.url.replace(/\/v1$/, ''),
      AZURE_OPENAI_API_KEY: 'azure-key',
      AZURE_OPENAI_API_VERSION: '2024-10-21',
    },
  });
  await h.startWorker();
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await fake?.stop();
});

async function oneTurn(agentName: string) {
  const call = await h.request('POST', '/api/calls/test', { body: { agent_name: agentName } });
  expect(call.status).toBe(201);
  fake.reset();
  fake.enqueue({ content: 'Sure, Friday it is.' });
  const reply = await h.request('POST', `/api/calls/${call.body.call_id}/test/messages`, { body: { text: 'Friday please' } });
  expect(reply.status).toBe(200);
  expect(reply.body.replies).toEqual(['Sure, Friday it is.']);
  await h.request('POST', '/api/calls/end', { body: { call_id: call.body.call_id } });
  expect(fake.requests).toHaveLength(1);
  return fake.requests[0]!;
}

describe.each([
  ['openai', (r: { headers: any; url: string }) => {
    expect(r.headers.authorization).toBe('Bearer sk-openai-key');
    expect(r.url).toBe('/v1/chat/completions');
  }],
  ['groq', (r: { headers: any; url: string }) => {
    expect(r.headers.authorization).toBe('Bearer gsk-groq-key');
    expect(r.url).toBe('/v1/chat/completions');
  }],
  ['azure', (r: { headers: any; url: string }) => {
    expect(r.headers['api-key']).toBe('azure-key');
    expect(r.url).toBe(`/openai/deployments/${DEFAULT_LLM_MODEL.azure}/chat/completions?api-version=2024-10-21`);
  }],
] as const)('llm_provider %s', (provider, checkTransport) => {
  it('sends the default model, temperature and max_tokens, streamed, with its own auth and URL', async () => {
    const created = await h.request('POST', '/api/agents', {
      body: { name: `llm-${provider}`, prompt: 'You book tables.', llm_provider: provider, llm_settings: { temperature: 0.3, max_tokens: 77 } },
    });
    expect(created.status).toBe(201);
    expect(created.body.llm_model).toBe(DEFAULT_LLM_MODEL[provider]);
    const request = await oneTurn(`llm-${provider}`);
    expect(request.body).toMatchObject({ model: DEFAULT_LLM_MODEL[provider], temperature: 0.3, max_tokens: 77, stream: true });
    checkTransport(request);
  });

  it('an explicit llm_model wins, and without llm_settings neither temperature nor max_tokens is sent', async () => {
    await h.request('POST', '/api/agents', { body: { name: `llm-${provider}-plain`, prompt: 'You book tables.', llm_provider: provider, llm_model: 'my-model' } });
    const request = await oneTurn(`llm-${provider}-plain`);
    expect(request.body.model).toBe('my-model');
    expect(request.body).not.toHaveProperty('temperature');
    expect(request.body).not.toHaveProperty('max_tokens');
  });
});
