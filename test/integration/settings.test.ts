import { startHarness, type Harness } from '../support/harness';
import { loadTelephonySettings } from '../../src/providers/telephony/settings-store';
import { DEFAULT_MAX_CONCURRENT } from '../../src/api/telephony/provider-fields';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { PUBLIC_BASE_URL: 'https://config.example.com' } });
});
afterAll(async () => {
  await h.stop();
});

const ALL_FIELDS = [
  'twilio_account_sid',
  'twilio_auth_token',
  'twilio_phone_number',
  'twilio_max_concurrent',
  'exotel_account_sid',
  'exotel_api_key',
  'exotel_api_token',
  'exotel_phone_number',
  'exotel_api_base',
  'exotel_max_concurrent',
  'plivo_auth_id',
  'plivo_auth_token',
  'plivo_phone_number',
  'plivo_max_concurrent',
];

const put = (body: Record<string, unknown>) => h.request('PUT', '/api/settings/telephony', { body });

describe('telephony settings', () => {
  it('returns every field of every provider, null when unset, before anything is stored', async () => {
    const res = await h.request('GET', '/api/settings/telephony');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['provider', 'public_base_url', ...ALL_FIELDS].sort());
    expect(res.body.provider).toBeNull();
    expect(res.body.public_base_url).toBeNull();
    for (const field of ALL_FIELDS) expect(res.body[field]).toBeNull();
  });

  it('stores the active provider fields, masks secrets and keeps them encrypted at rest', async () => {
    const res = await put({
      provider: 'twilio',
      public_base_url: 'https://voice.example.com/',
      twilio_account_sid: 'AC0123456789',
      twilio_auth_token: 'tw-secret-token-9876',
      twilio_phone_number: '+14155550123',
      twilio_max_concurrent: 5,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      provider: 'twilio',
      public_base_url: 'https://voice.example.com',
      twilio_account_sid: 'AC0123456789',
      twilio_auth_token: '****9876',
      twilio_phone_number: '+14155550123',
      twilio_max_concurrent: 5,
      plivo_auth_token: null,
      exotel_max_concurrent: null,
    });
    const get = await h.request('GET', '/api/settings/telephony');
    expect(get.body).toEqual(res.body);
    expect(JSON.stringify(get.body)).not.toContain('tw-secret-token-9876');

    const row = (await h.db.models.TelephonyProviderSettings.findByPk('twilio'))!.get({ plain: true });
    expect(row.secrets.auth_token).toMatch(/^v1:/);
    expect(JSON.stringify(row)).not.toContain('tw-secret-token-9876');

    const loaded = await loadTelephonySettings(h.db, h.box);
    expect(loaded.provider).toBe('twilio');
    expect(loaded.vendors.twilio).toEqual({ account_sid: 'AC0123456789', auth_token: 'tw-secret-token-9876', phone_number: '+14155550123', max_concurrent: 5 });
    expect(loaded.vendors.plivo!.max_concurrent).toBe(DEFAULT_MAX_CONCURRENT);
  });

  it('updates partially: fields not sent are kept, a masked secret sent back is not stored, null clears', async () => {
    const res = await put({ provider: 'twilio', public_base_url: 'https://voice.example.com', twilio_auth_token: '****9876', twilio_max_concurrent: null });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ twilio_account_sid: 'AC0123456789', twilio_auth_token: '****9876', twilio_max_concurrent: null });
    const loaded = await loadTelephonySettings(h.db, h.box);
    expect(loaded.vendors.twilio!.auth_token).toBe('tw-secret-token-9876');
    expect(loaded.vendors.twilio!.max_concurrent).toBe(DEFAULT_MAX_CONCURRENT);

    const cleared = await put({ provider: 'twilio', public_base_url: 'https://voice.example.com', twilio_account_sid: null });
    expect(cleared.body.twilio_account_sid).toBeNull();
    expect(cleared.body.twilio_phone_number).toBe('+14155550123');
  });

  it('accepts provider_a/b/c as the provider value and as field prefixes, storing real names', async () => {
    const res = await put({
      provider: 'provider_b',
      public_base_url: 'https://voice.example.com',
      provider_b_account_sid: 'acme1',
      provider_b_api_key: 'key-123',
      provider_b_api_token: 'ex-token-abcd',
      provider_b_phone_number: '+919876543210',
      exotel_api_base: 'https://api.in.exotel.com',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      provider: 'exotel',
      exotel_account_sid: 'acme1',
      exotel_api_key: 'key-123',
      exotel_api_token: '****abcd',
      exotel_phone_number: '+919876543210',
      exotel_api_base: 'https://api.in.exotel.com',
      // Earlier provider's fields stay stored.
      twilio_phone_number: '+14155550123',
    });
    const row = (await h.db.models.TelephonySettings.findByPk(1))!.get({ plain: true });
    expect(row.provider).toBe('exotel');
    const exotelRow = (await h.db.models.TelephonyProviderSettings.findByPk('exotel'))!.get({ plain: true });
    expect(exotelRow.secrets.api_token).not.toContain('ex-token-abcd');

    const plivo = await put({ provider: 'provider_c', public_base_url: 'https://voice.example.com', provider_c_auth_id: 'MA123', plivo_auth_token: 'pl-secret-wxyz' });
    expect(plivo.status).toBe(200);
    expect(plivo.body).toMatchObject({ provider: 'plivo', plivo_auth_id: 'MA123', plivo_auth_token: '****wxyz' });
  });

  it('allows http only for localhost base URLs', async () => {
    const local = await put({ provider: 'plivo', public_base_url: 'http://localhost:8000' });
    expect(local.status).toBe(200);
    expect(local.body.public_base_url).toBe('http://localhost:8000');
    const loopback = await put({ provider: 'plivo', public_base_url: 'http://127.0.0.1:8000' });
    expect(loopback.status).toBe(200);
    const remote = await put({ provider: 'plivo', public_base_url: 'http://voice.example.com' });
    expect(remote.status).toBe(422);
    expect(remote.body.detail).toMatch(/^public_base_url: must be an https:\/\/ URL/);
  });

  it.each([
    [{ public_base_url: 'https://voice.example.com' }, /^provider: /],
    [{ provider: 'twilio' }, /^public_base_url: /],
    [{ provider: 'vonage', public_base_url: 'https://voice.example.com' }, /^provider: must be one of twilio, exotel, plivo/],
    [{ provider: 'twilio', public_base_url: 'ftp://voice.example.com' }, /^public_base_url: /],
    [{ provider: 'twilio', public_base_url: 'https://v.example.com', twilio_phone_number: '4155550123' }, /^twilio_phone_number: must be an E\.164/],
    [{ provider: 'twilio', public_base_url: 'https://v.example.com', provider_a_phone_number: '+0123' }, /^provider_a_phone_number: must be an E\.164/],
    [{ provider: 'twilio', public_base_url: 'https://v.example.com', twilio_max_concurrent: 0 }, /^twilio_max_concurrent: /],
    [{ provider: 'twilio', public_base_url: 'https://v.example.com', provider_a_max_concurrent: 1.5 }, /^provider_a_max_concurrent: /],
    [{ provider: 'twilio', public_base_url: 'https://v.example.com', twilio_account_sid: '' }, /^twilio_account_sid: /],
    [{ provider: 'exotel', public_base_url: 'https://v.example.com', exotel_api_base: 'not a url' }, /^exotel_api_base: /],
    [{ provider: 'twilio', public_base_url: 'https://v.example.com', plivo_auth_id: 'x', provider_b_api_key: 'y' }, /^plivo_auth_id, provider_b_api_key: only fields of the active provider \(twilio\)/],
    [{ provider: 'twilio', public_base_url: 'https://v.example.com', twilio_colour: 'red' }, /^twilio_colour: unknown field/],
    [{ provider: 'twilio', public_base_url: 'https://v.example.com', twilio_account_sid: 'a', provider_a_account_sid: 'b' }, /^provider_a_account_sid: given twice/],
  ])('rejects %j with 422 naming the field', async (body, detail) => {
    const before = (await h.request('GET', '/api/settings/telephony')).body;
    const res = await put(body);
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(detail);
    expect((await h.request('GET', '/api/settings/telephony')).body).toEqual(before);
  });

  it('requires credentials', async () => {
    expect((await h.request('GET', '/api/settings/telephony', { token: null })).status).toBe(401);
    expect((await h.request('PUT', '/api/settings/telephony', { token: null, body: { provider: 'twilio' } })).status).toBe(401);
  });
});

describe('telephony endpoints', () => {
  const agentBase = { prompt: 'p', stt_provider: 'deepgram', stt_language: 'en', llm_provider: 'openai', llm_model: 'gpt-4o-mini', tts_provider: 'cartesia' };
  beforeAll(async () => {
    await h.db.models.Agent.create({ ...agentBase, name: 'support-bot' });
    await h.db.models.Agent.create({ ...agentBase, name: 'sales-bot' });
  });
  beforeEach(async () => {
    await h.db.models.TelephonyEndpoint.destroy({ where: {} });
    await h.db.models.TelephonySettings.destroy({ where: {} });
  });

  it('creates an active endpoint with its inbound webhook URL, lists it, and uses the stored base URL', async () => {
    const res = await h.request('POST', '/api/settings/endpoints', {
      body: { phone_number: '+14155550100', provider: 'provider_a', inbound_agent_name: 'support-bot', outbound_agent_name: 'sales-bot', label: 'Main line' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      phone_number: '+14155550100',
      provider: 'twilio',
      inbound_agent_name: 'support-bot',
      outbound_agent_name: 'sales-bot',
      label: 'Main line',
      is_active: true,
      // No stored setting yet: the server's PUBLIC_BASE_URL.
      inbound_webhook_url: 'https://config.example.com/telephony/twilio/inbound/support-bot',
    });
    expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);

    await put({ provider: 'twilio', public_base_url: 'https://voice.example.com/' });
    const list = await h.request('GET', '/api/settings/endpoints');
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toMatchObject({ id: res.body.id, inbound_webhook_url: 'https://voice.example.com/telephony/twilio/inbound/support-bot' });
  });

  it('has no inbound webhook URL without an inbound agent', async () => {
    const res = await h.request('POST', '/api/settings/endpoints', { body: { phone_number: '+14155550101', provider: 'plivo', outbound_agent_name: 'sales-bot' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ inbound_agent_name: null, label: null, inbound_webhook_url: null });
  });

  it('rejects a duplicate phone number for the same provider with 409, but allows it for another provider', async () => {
    const body = { phone_number: '+14155550102', provider: 'twilio' };
    expect((await h.request('POST', '/api/settings/endpoints', { body })).status).toBe(201);
    const dup = await h.request('POST', '/api/settings/endpoints', { body: { ...body, provider: 'provider_a' } });
    expect(dup.status).toBe(409);
    expect(dup.body.detail).toMatch(/\+14155550102/);
    expect((await h.request('POST', '/api/settings/endpoints', { body: { ...body, provider: 'exotel' } })).status).toBe(201);
  });

  it.each([
    [{ provider: 'twilio' }, /^phone_number: /],
    [{ phone_number: '555-0100', provider: 'twilio' }, /^phone_number: must be an E\.164/],
    [{ phone_number: '+14155550103' }, /^provider: /],
    [{ phone_number: '+14155550103', provider: 'provider_z' }, /^provider: must be one of/],
    [{ phone_number: '+14155550103', provider: 'twilio', inbound_agent_name: 'ghost-bot' }, /^inbound_agent_name: no agent named ghost-bot/],
    [{ phone_number: '+14155550103', provider: 'twilio', outbound_agent_name: 'ghost-bot' }, /^outbound_agent_name: no agent named ghost-bot/],
  ])('rejects %j with 422 naming the field', async (body, detail) => {
    const res = await h.request('POST', '/api/settings/endpoints', { body });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(detail);
  });

  it('updates agents, label and is_active, refuses phone/provider changes and unknown agents, and deletes', async () => {
    const created = (await h.request('POST', '/api/settings/endpoints', { body: { phone_number: '+14155550104', provider: 'twilio', inbound_agent_name: 'support-bot' } })).body;
    const url = `/api/settings/endpoints/${created.id}`;

    const updated = await h.request('PUT', url, { body: { inbound_agent_name: 'sales-bot', label: 'Night line', is_active: false } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      id: created.id,
      phone_number: '+14155550104',
      inbound_agent_name: 'sales-bot',
      label: 'Night line',
      is_active: false,
      inbound_webhook_url: 'https://config.example.com/telephony/twilio/inbound/sales-bot',
    });

    const cleared = await h.request('PUT', url, { body: { inbound_agent_name: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ inbound_agent_name: null, inbound_webhook_url: null, label: 'Night line', is_active: false });

    const ghost = await h.request('PUT', url, { body: { outbound_agent_name: 'ghost-bot' } });
    expect(ghost.status).toBe(422);
    expect(ghost.body.detail).toMatch(/^outbound_agent_name: /);
    const phone = await h.request('PUT', url, { body: { phone_number: '+14155550999' } });
    expect(phone.status).toBe(422);
    expect(phone.body.detail).toMatch(/^phone_number: cannot be changed/);
    const badActive = await h.request('PUT', url, { body: { is_active: 'yes' } });
    expect(badActive.status).toBe(422);
    expect(badActive.body.detail).toMatch(/^is_active: /);

    expect((await h.request('DELETE', url)).status).toBe(204);
    expect((await h.request('DELETE', url)).status).toBe(404);
    const missing = await h.request('PUT', url, { body: { label: 'x' } });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: 'Endpoint not found' });
    expect((await h.request('GET', '/api/settings/endpoints')).body).toEqual([]);
  });

  it('requires credentials and a UUID id', async () => {
    expect((await h.request('GET', '/api/settings/endpoints', { token: null })).status).toBe(401);
    const bad = await h.request('DELETE', '/api/settings/endpoints/123');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^path\.endpoint_id: /);
  });
});
