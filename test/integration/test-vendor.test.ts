/**
 * The vendor seam, proven with vendors that exist only in the test suite (test/support/
 * test-vendor/): a telephony vendor (Toytel) and a speech vendor (Toyspeech, STT and TTS), each
 * added with one registry call below and nothing else — no file of src/ names them. Through the
 * real API, worker and media gateway they get settings, OpenAPI fields, configuration keys
 * validated at start-up, agent readiness, an inbound webhook, a media stream and a call with a
 * greeting and an answered turn, and an outbound call through their REST client.
 */
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { startGateway, type RunningGateway } from '../../src/gateway/server';
import { providerProblems } from '../../src/providers/agent-readiness';
import { registerSttVendor } from '../../src/providers/stt/registry';
import { registerTelephonyVendor } from '../../src/providers/telephony/registry';
import { registerTtsVendor } from '../../src/providers/tts/registry';
import { getFreePort } from '../../src/temporal/dev-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, type PhoneCaller } from '../fakes/phone-caller';
import { eventually } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { startFakeToyspeech, type FakeToyspeech } from '../support/test-vendor/toyspeech-fake';
import { toyspeechStt, toyspeechTts } from '../support/test-vendor/toyspeech';
import { toytel } from '../support/test-vendor/toytel';
import { startFakeToytel, type FakeToytel } from '../support/test-vendor/toytel-fake';
import { voiceCallApi } from '../support/voice-call-api';
import { inlineRefs } from '../support/openapi-doc';

// The one registry line of each vendor.
registerTelephonyVendor(toytel);
registerSttVendor(toyspeechStt);
registerTtsVendor(toyspeechTts);

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
const ACCOUNT = { accountId: 'acct-test-1', apiSecret: 'toytel-secret-abcd1234' };
const SPEECH_KEY = 'toyspeech-key';
const OUR_NUMBER = '+15005550042';
const MS_PER_CHAR = 60; // the speech fake's audio length per character

let h: Harness;
let toytelFake: FakeToytel;
let speech: FakeToyspeech;
let openai: FakeOpenAI;
let gateway: RunningGateway;

beforeAll(async () => {
  toytelFake = await startFakeToytel(ACCOUNT);
  speech = await startFakeToyspeech(SPEECH_KEY);
  openai = await startFakeOpenAI();
  const gatewayPort = await getFreePort();
  h = await startHarness({
    worker: true,
    env: {
      TOYTEL_API_BASE_URL: toytelFake.apiBaseUrl,
      TOYSPEECH_API_KEY: SPEECH_KEY,
      TOYSPEECH_BASE_URL: speech.url,
      GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}`,
      OPENAI_BASE_URL: openai.url,
      OPENAI_API_KEY: 'sk-test',
    },
  });
  gateway = await startGateway(
    h.gatewayDeps(),
    gatewayPort,
    '127.0.0.1',
  );
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await h?.stop();
  await Promise.all([toytelFake?.stop(), speech?.stop(), openai?.stop()]);
});

const { events, finalCall, createVoiceAgent } = voiceCallApi(() => h);
const heardMs = (caller: PhoneCaller) => caller.speechFrames().length * FRAME_MS;
const put = (body: Record<string, unknown>) => h.request('PUT', '/api/settings/telephony', { body });

describe('a vendor registered only in the tests', () => {
  it('has settings: every field flat in GET, PUT for the active provider, the secret encrypted and masked', async () => {
    const before = await h.request('GET', '/api/settings/telephony');
    expect(before.body).toMatchObject({ toytel_account_id: null, toytel_api_secret: null, toytel_phone_number: null, toytel_max_concurrent: null, twilio_auth_token: null });

    const res = await put({ provider: 'toytel', public_base_url: h.api.url, toytel_account_id: ACCOUNT.accountId, toytel_api_secret: ACCOUNT.apiSecret, toytel_phone_number: OUR_NUMBER });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ provider: 'toytel', toytel_account_id: ACCOUNT.accountId, toytel_api_secret: '****1234', toytel_phone_number: OUR_NUMBER, toytel_max_concurrent: null });
    const row = (await h.db.models.TelephonyProviderSettings.findByPk('toytel'))!.get({ plain: true });
    expect(h.box.decrypt(row.secrets.api_secret!)).toBe(ACCOUNT.apiSecret);
    expect(JSON.stringify(row)).not.toContain(ACCOUNT.apiSecret);

    const badNumber = await put({ provider: 'toytel', public_base_url: h.api.url, toytel_phone_number: '555' });
    expect(badNumber.status).toBe(422);
    expect(badNumber.body.detail).toMatch(/^toytel_phone_number: must be an E\.164/);
    const foreign = await put({ provider: 'toytel', public_base_url: h.api.url, twilio_auth_token: 'x' });
    expect(foreign.status).toBe(422);
    expect(foreign.body.detail).toMatch(/^twilio_auth_token: only fields of the active provider \(toytel\)/);
  });

  it('is described with its fields and capabilities, and in the OpenAPI document', async () => {
    const providers = (await h.request('GET', '/api/settings/telephony/providers')).body as any[];
    const described = providers.find((p) => p.name === 'toytel');
    expect(described).toMatchObject({ label: 'Toytel', alias: null, capabilities: { transfer: { supported: false }, audio_formats: ['pcm16/8000'] } });
    expect(described.fields.map((f: any) => [f.name, f.kind, f.secret])).toEqual([
      ['toytel_account_id', 'text', false],
      ['toytel_api_secret', 'secret', true],
      ['toytel_phone_number', 'phone', false],
      ['toytel_max_concurrent', 'int', false],
    ]);

    const doc = inlineRefs((await h.request('GET', '/api/openapi.json', { token: null })).body);
    const putBody = doc.paths['/api/settings/telephony'].put.requestBody.content['application/json'].schema;
    expect(putBody.properties.toytel_api_secret.description).toMatch(/signs every webhook/i);
    expect(putBody.properties.provider.description).toContain('toytel');
    const agentBody = doc.paths['/api/agents'].post.requestBody.content['application/json'].schema;
    expect(agentBody.properties.stt_provider.enum).toContain('toyspeech');
    expect(agentBody.properties.tts_provider.enum).toContain('toyspeech');
  });

  it('declares its configuration keys, validated at start-up and named in agent warnings', async () => {
    expect(() => loadConfig({ TOYTEL_API_BASE_URL: 'not a url' })).toThrow(ConfigError);
    expect(() => loadConfig({ TOYTEL_API_BASE_URL: 'not a url' })).toThrow(/TOYTEL_API_BASE_URL/);
    expect(loadConfig({ TOYSPEECH_BASE_URL: speech.url }).TOYSPEECH_BASE_URL).toBe(speech.url);

    const agent = await createVoiceAgent({ name: 'toy-ready', prompt: 'p', stt_provider: 'toyspeech', tts_provider: 'toyspeech' });
    expect(agent.warnings).toEqual([]);
    const withoutKey = providerProblems(agent, { ...h.config, TOYSPEECH_API_KEY: undefined });
    expect(withoutKey).toEqual(['stt_provider toyspeech: TOYSPEECH_API_KEY is not set', 'tts_provider toyspeech: TOYSPEECH_API_KEY is not set']);
    const unready = await h.request('POST', '/api/agents', { body: { name: 'toy-unknown', prompt: 'p', stt_provider: 'toyspeeech' } });
    expect(unready.status).toBe(422);
    expect(unready.body.detail).toMatch(/^stt_provider: .*"toyspeech"/);
  });

  it('takes an inbound call: signed webhook, media stream through the gateway, greeting heard, a turn answered', async () => {
    const greeting = 'Hello, this is the toy shop.';
    const reply = 'We open at nine tomorrow.';
    await createVoiceAgent({ name: 'toy-shop', prompt: 'You answer for the toy shop.', greeting, stt_provider: 'toyspeech', tts_provider: 'toyspeech' });
    speech.script(['When do you open tomorrow?']);
    openai.setResponder(() => ({ content: reply }));

    const forged = await fetch(`${h.api.url}/telephony/toytel/inbound/toy-shop`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-toytel-signature': '0'.repeat(64) },
      body: JSON.stringify({ call_id: 'tt-forged', from: '+14155550100', to: OUR_NUMBER }),
    });
    expect(forged.status).toBe(403);

    const call = await toytelFake.simulateInbound({ webhookUrl: `${h.api.url}/telephony/toytel/inbound/toy-shop`, from: '+14155550100', to: OUR_NUMBER });
    expect(call.answer).toMatchObject({ status: 200, body: { action: 'stream', url: `${h.config.GATEWAY_PUBLIC_URL}/media/toytel` } });
    const caller = call.caller!;
    const callId = call.answer!.body.params.call_id as string;

    await eventually(async () => heardMs(caller) >= (greeting.length - 2) * MS_PER_CHAR - 100, 15_000, 20);
    const beforeReply = heardMs(caller);
    await caller.say(HELLO_WAV);
    await eventually(async () => heardMs(caller) >= beforeReply + (reply.length - 2) * MS_PER_CHAR - 100, 20_000, 20);
    await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke' && e.data.text === reply), 10_000);
    await caller.hangup();

    const final = await finalCall(callId);
    expect(final).toMatchObject({ status: 'completed', end_reason: 'user_ended', provider: 'toytel', direction: 'inbound', provider_call_sid: call.id });
    expect(final.transcript.map((t: any) => t.text)).toEqual([greeting, 'When do you open tomorrow?', reply]);
    expect(speech.spoken).toEqual(expect.arrayContaining([greeting, reply]));
  }, 90_000);

  it('places an outbound call through its REST client, and is hung up through it when the call ends', async () => {
    await createVoiceAgent({ name: 'toy-caller', prompt: 'You call about orders.', greeting: 'Hi, your order is ready.', stt_provider: 'toyspeech', tts_provider: 'toyspeech' });
    const placed = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+14155550199', agent_name: 'toy-caller' } });
    expect(placed.status).toBe(201);
    const dialed = await toytelFake.nextDialed();
    expect(placed.body.provider_response).toEqual({ sid: dialed.id, status: 'queued' });
    expect(dialed).toMatchObject({ to: '+14155550199', from: OUR_NUMBER });
    await eventually(async () => heardMs(dialed.caller!) >= 1000, 15_000, 20);

    const ended = await h.request('POST', '/api/calls/end', { body: { call_id: placed.body.call_id } });
    expect(ended.status).toBe(200);
    await dialed.caller!.closed;
    await eventually(async () => dialed.status === 'completed', 10_000);
    expect((await finalCall(placed.body.call_id)).status).toBe('completed');

    // The vendor's refusal, in its own words, through the REST client's error mapping.
    const refused = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+14155550199', agent_name: 'toy-caller', caller_id: 'nope' } });
    expect(refused.status).toBe(502);
    expect(refused.body.detail).toMatch(/from: "nope" is not a phone number/);
  }, 90_000);
});
