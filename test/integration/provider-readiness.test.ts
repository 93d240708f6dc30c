/**
 * No silent failure: an agent whose STT, LLM or TTS cannot run on this installation says so
 * (`warnings` on create, patch, get, list and import), is refused outbound calls before anything
 * is dialled, and an incoming call for it — whatever the telephony vendor — hears a short apology
 * and is recorded `failed` with an `error` event naming the provider. Real API, worker, PostgreSQL
 * and the Twilio and Plivo fakes; the installation has Deepgram and an LLM but no TTS key.
 */
import { UNAVAILABLE_MESSAGE } from '../../src/api/routes/telephony';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startFakePlivo, type FakePlivo } from '../fakes/plivo-server';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { startHarness, type Harness } from '../support/harness';
import { startMediaStandIn, type MediaStandIn, STAND_IN_ENV } from '../support/media-stand-in';
import { configurePlivo, configureTwilio } from '../support/telephony';
import { inlineRefs } from '../support/openapi-doc';

const ACCOUNT_SID = `AC${'5e'.repeat(16)}`;
const TWILIO_TOKEN = 'readiness-test-auth-token-0123456';
const PLIVO_ID = 'MAREADINESSTESTAUTH1';
const PLIVO_TOKEN = 'readiness-plivo-auth-token-012345';
const TWILIO_NUMBER = '+15005550006';
const PLIVO_NUMBER = '+918035735900';
const NO_TTS = 'tts_provider cartesia: CARTESIA_API_KEY is not set';

let h: Harness;
let twilio: FakeTwilio;
let plivo: FakePlivo;
let llm: FakeOpenAI;
let gateway: MediaStandIn;

beforeAll(async () => {
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: TWILIO_TOKEN });
  plivo = await startFakePlivo({ authId: PLIVO_ID, authToken: PLIVO_TOKEN });
  llm = await startFakeOpenAI();
  gateway = await startMediaStandIn();
  h = await startHarness({
    env: {
      ...STAND_IN_ENV,
      TWILIO_API_BASE_URL: twilio.apiBaseUrl,
      PLIVO_API_BASE_URL: plivo.apiBaseUrl,
      GATEWAY_PUBLIC_URL: gateway.url,
      DEEPGRAM_API_KEY: 'dg-key',
      OPENAI_BASE_URL: llm.url,
    },
    worker: true,
  });
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: TWILIO_TOKEN, phoneNumber: TWILIO_NUMBER });
  await configurePlivo(h, { authId: PLIVO_ID, authToken: PLIVO_TOKEN, phoneNumber: PLIVO_NUMBER });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await Promise.all([twilio?.stop(), plivo?.stop(), llm?.stop(), gateway?.stop()]);
});

async function createAgent(body: Record<string, unknown>) {
  const res = await h.request('POST', '/api/agents', { body: { prompt: 'You help.', ...body } });
  expect(res.status).toBe(201);
  return res.body;
}

describe('agent warnings', () => {
  it('name every provider that cannot run, on create, patch, get, list and import; none when all can', async () => {
    const agent = await createAgent({ name: 'mute-bot' });
    expect(agent.warnings).toEqual([NO_TTS]);
    expect((await h.request('GET', `/api/agents/${agent.id}`)).body.warnings).toEqual([NO_TTS]);

    const patched = await h.request('PATCH', `/api/agents/${agent.id}`, { body: { tts_provider: 'elevenlabs', llm_provider: 'groq' } });
    expect(patched.status).toBe(200);
    expect(patched.body.warnings).toEqual(['llm_provider groq: GROQ_API_KEY is not set', 'tts_provider elevenlabs: ELEVENLABS_API_KEY is not set']);

    const list = await h.request('GET', '/api/agents');
    expect(list.body.find((a: { name: string }) => a.name === 'mute-bot').warnings).toHaveLength(2);

    const bundle = (await h.request('GET', `/api/agents/${agent.id}/export`)).body;
    expect(bundle.agent).not.toHaveProperty('warnings');
    const imported = await h.request('POST', '/api/agents/import', { body: { ...bundle, agent: { ...bundle.agent, name: 'mute-copy', warnings: ['ignored'] } } });
    expect(imported.status).toBe(201);
    expect(imported.body.agent.warnings).toEqual(['llm_provider groq: GROQ_API_KEY is not set', 'tts_provider elevenlabs: ELEVENLABS_API_KEY is not set']);

    // Deepgram also speaks (Aura): with its key set, this agent can hold a call.
    const fine = await h.request('PATCH', `/api/agents/${agent.id}`, { body: { tts_provider: 'deepgram', llm_provider: 'openai' } });
    expect(fine.body.warnings).toEqual([]);
  });

  it('are in the OpenAPI document', async () => {
    const doc = inlineRefs((await h.request('GET', '/api/openapi.json', { token: null })).body);
    const schemaText = JSON.stringify(doc.paths['/api/agents/{agent_id}'].get.responses['200']);
    expect(schemaText).toContain('warnings');
  });
});

describe('outbound calls for an agent that cannot run', () => {
  it('are refused with 422 naming the provider, before anything is dialled or recorded', async () => {
    await createAgent({ name: 'silent-caller' });
    const callsBefore = await h.db.models.Call.count();
    const res = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+14155550100', agent_name: 'silent-caller', provider: 'twilio' } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: `Agent silent-caller cannot take calls: ${NO_TTS}` });
    expect(twilio.calls).toHaveLength(0);
    expect(await h.db.models.Call.count()).toBe(callsBefore);
  });
});

describe('incoming calls for an agent that cannot run', () => {
  async function expectFailedCall(from: string) {
    const row = (await h.db.models.Call.findOne({ where: { phone_number: from } }))!.get({ plain: true });
    expect(row).toMatchObject({ status: 'failed', end_reason: 'error', direction: 'inbound', agent_name: 'unready-bot' });
    const events = (await h.request('GET', `/api/calls/${row.id}/events`)).body as Array<{ event_type: string; data: any }>;
    expect(events.map((e) => e.event_type)).toEqual(['error', 'call_ended']);
    expect(events[0]!.data.message).toBe(`The agent cannot take calls: ${NO_TTS}`);
    const call = (await h.request('GET', `/api/calls/${row.id}`)).body;
    expect(call).toMatchObject({ status: 'failed', end_reason: 'error' });
  }

  beforeAll(async () => {
    await createAgent({ name: 'unready-bot' });
  });

  it('Twilio: the caller hears an apology and the call is recorded failed with the reason', async () => {
    const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/unready-bot`, from: '+14155550177', to: TWILIO_NUMBER });
    expect(fake.verbs).toEqual([{ verb: 'Say', text: UNAVAILABLE_MESSAGE }, { verb: 'Hangup' }]);
    await expectFailedCall('+14155550177');
  });

  it('Plivo: the same, in Plivo XML', async () => {
    const fake = await plivo.simulateInbound({ answerUrl: `${h.api.url}/telephony/plivo/inbound/unready-bot`, from: '+919812345600', to: PLIVO_NUMBER });
    await fake.ended;
    expect(fake.said).toEqual([UNAVAILABLE_MESSAGE]);
    await expectFailedCall('+919812345600');
  });
});
