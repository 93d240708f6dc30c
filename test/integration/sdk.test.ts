/**
 * The TypeScript SDK (clients/typescript) against the real platform over its socket, walking the
 * flow of its README: log in, make an API key, create an agent with it, hold a text test call and
 * read the call back; errors come back as ApiError with the API's detail.
 */
import { ApiError, createVapClient, login, unwrap, type Call } from '../../clients/typescript/src';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from '../support/harness';
import { h, llm, useTextCallStack } from '../support/text-call-stack';

useTextCallStack();

it("walks the README's flow: login, API key, agent, text test call, the call read back", async () => {
  const baseUrl = h.api.url;
  const jwt = await login(baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const admin = createVapClient({ baseUrl, token: jwt });
  const { key } = await unwrap(admin.POST('/api/auth/api-keys', { body: { name: 'sdk-test' } }));
  expect(key).toMatch(/^vap_/);
  const vap = createVapClient({ baseUrl, token: key });

  const agent = await unwrap(
    vap.POST('/api/agents', {
      body: { name: 'sdk-receptionist', prompt: 'You answer the phone for a dental clinic.', greeting: 'Hello {{first_name}}, how can I help?' },
    }),
  );
  expect(agent).toMatchObject({ name: 'sdk-receptionist', stt_provider: 'deepgram', webhook_secret: expect.stringMatching(/^whsec_/) });

  const call = await unwrap(vap.POST('/api/calls/test', { body: { agent_name: agent.name, custom_parameters: { first_name: 'Asha' } } }));
  expect(call.greeting).toBe('Hello Asha, how can I help?');
  llm.enqueue({ content: 'Of course. Which day suits you?' });
  const turn = await unwrap(
    vap.POST('/api/calls/{call_id}/test/messages', { params: { path: { call_id: call.call_id } }, body: { text: 'I need an appointment.' } }),
  );
  expect(turn).toMatchObject({ replies: ['Of course. Which day suits you?'], status: 'in_progress' });
  const ended: Call = await unwrap(vap.POST('/api/calls/end', { body: { call_id: call.call_id } }));
  expect(ended).toMatchObject({ id: call.call_id, status: 'completed', end_reason: 'user_ended' });

  const record = await unwrap(vap.GET('/api/calls/{call_id}', { params: { path: { call_id: call.call_id } } }));
  expect(record).toMatchObject({ agent_name: 'sdk-receptionist', channel: 'text', context: { first_name: 'Asha' } });
  expect(record.transcript?.map((t) => [t.role, t.text])).toEqual([
    ['assistant', 'Hello Asha, how can I help?'],
    ['user', 'I need an appointment.'],
    ['assistant', 'Of course. Which day suits you?'],
  ]);
  // The list answers the same Call, its flags sent as booleans.
  const page = await unwrap(vap.GET('/api/calls', { params: { query: { agent_name: agent.name, include_transcript: false } } }));
  expect(page.calls.map((c) => [c.id, c.transcript])).toEqual([[call.call_id, undefined]]);
  expect(Object.keys(page.calls[0]!).sort()).toEqual(Object.keys(record).filter((k) => k !== 'transcript').sort());
});

it('throws ApiError with the status, the detail and the request', async () => {
  const vap = createVapClient({ baseUrl: h.api.url, token: await login(h.api.url, ADMIN_EMAIL, ADMIN_PASSWORD) });
  const refused = await unwrap(vap.POST('/api/agents', { body: { name: 'has spaces', prompt: 'p' } })).catch((err: unknown) => err);
  expect(refused).toBeInstanceOf(ApiError);
  expect(refused).toMatchObject({ status: 422, detail: expect.stringMatching(/^name: /), message: expect.stringMatching(/^POST \/api\/agents → 422: name: /) });
  const anonymous = await unwrap(createVapClient({ baseUrl: h.api.url }).GET('/api/agents')).catch((err: unknown) => err);
  expect(anonymous).toMatchObject({ status: 401, body: { detail: expect.any(String) } });
  await expect(login(h.api.url, ADMIN_EMAIL, 'wrong-password')).rejects.toMatchObject({ status: 401 });
});
