/**
 * Keypresses in and out, and the status a caller's first word reads, on every telephony vendor
 * with a fake: the caller's keys (sent as the vendor sends them on its media stream) reach the
 * LLM as one input and interrupt the agent like speech; the agent's send_dtmf goes out as tones
 * the fake decodes from the audio it receives (Goertzel); the call reads `in_progress` as soon as
 * its caller hears the greeting. Real API, call worker, PostgreSQL, Temporal and media gateway;
 * the vendor, Deepgram, Cartesia and OpenAI are local fakes.
 */
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { setLogLevel } from '../../src/shared/logger';
import type { FakeDeepgram } from '../fakes/deepgram-server';
import type { FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, tonePcm } from '../fakes/phone-caller';
import { fakeTelephonyProviders, startFakeTelephony, type FakeTelephony } from '../fakes/telephony-fakes';
import { createAgent, eventually } from '../support/fixtures';
import type { Harness } from '../support/harness';
import { startVoiceStack, type VoiceStack } from '../support/voice-stack';

const OUR_NUMBER = '+15005550006';
// Long enough to still be playing when the caller starts typing (60 ms of audio per character).
const GREETING = 'Hello, you are through to the clinic. To confirm your appointment, please type the four digit code from your message, then wait a moment.';
const CODE_REPLY = 'Thank you, your appointment is confirmed.';
const lastMessage = (body: any) => body.messages[body.messages.length - 1];

describe.each(fakeTelephonyProviders())('%s: keypresses in and out', (provider) => {
  let h: Harness;
  let phone: FakeTelephony;
  let deepgram: FakeDeepgram;
  let openai: FakeOpenAI;
  let stack: VoiceStack;

  beforeAll(async () => {
    setLogLevel('error');
    phone = await startFakeTelephony(provider);
    const configure = async (h: Harness) => {
      const res = await h.request('PUT', '/api/settings/telephony', { body: { provider, public_base_url: h.api.url, ...phone.settings(OUR_NUMBER) } });
      expect(res.status).toBe(200);
    };
    stack = await startVoiceStack({ telephony: [{ fake: phone, env: phone.env, configure }] });
    ({ h, deepgram, openai } = stack);
  }, 120_000);

  afterAll(() => stack?.stop());

  const events = async (callId: string): Promise<Array<{ event_type: string; data: any; timestamp: string }>> =>
    (await h.request('GET', `/api/calls/${callId}/events`)).body;

  /** An inbound call to `to`, a number of ours answered by the agent. */
  async function ring(agentName: string, from: string, to: string) {
    const endpoint = await h.request('POST', '/api/settings/endpoints', { body: { phone_number: to, provider, inbound_agent_name: agentName } });
    expect(endpoint.status).toBe(201);
    const call = await phone.ringInbound({ webhookUrl: `${h.api.url}/telephony/${provider}/inbound/${agentName}`, from, to });
    expect(call.callId).toBeDefined();
    return { caller: call.caller!, callId: call.callId! };
  }

  it('reads in_progress at the first greeting audio; a typed code interrupts the greeting and reaches the LLM as one input', async () => {
    await createAgent(h.db, h.box, { name: `keys-${provider}`, greeting: GREETING, pipeline_settings: { ...PIPELINE_DEFAULTS, dtmf_timeout_secs: 1.5 } });
    openai.setResponder((body) => {
      const last = lastMessage(body);
      return { content: last.role === 'user' && last.content.startsWith('The caller pressed') ? CODE_REPLY : 'Sorry?' };
    });
    const { caller, callId } = await ring(`keys-${provider}`, '+14155550301', OUR_NUMBER);

    // The caller hears the first of the greeting: the call already reads in progress.
    await eventually(async () => caller.speechFrames().length > 0, 15_000, 5);
    const atFirstAudio = (await h.request('GET', `/api/calls/${callId}`)).body;
    expect(atFirstAudio).toMatchObject({ status: 'in_progress', start_time: expect.any(String) });

    // A second into the greeting the caller types 1 2 3 4, a key every 300 ms, as the vendor sends them.
    await eventually(async () => caller.speechFrames().length * FRAME_MS >= 1000, 15_000, 10);
    const requestsBefore = openai.requests.length;
    const pressedAt = Date.now();
    caller.dtmf('1');
    // The first key interrupts the greeting: the vendor is told to drop its buffer, the line goes quiet.
    await eventually(async () => caller.clears.length > 0, 5000, 5);
    expect(caller.clears[0]!.atMs - pressedAt).toBeLessThan(300);
    for (const digit of '234') {
      await new Promise((r) => setTimeout(r, 300));
      caller.dtmf(digit);
    }
    const lastKeyAt = Date.now();
    await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke' && e.data.text === CODE_REPLY), 20_000, 50);
    const soundAfterClear = caller.speechFrames().filter((f) => f.playedAtMs > caller.clears[0]!.atMs + 200 && f.playedAtMs < lastKeyAt);
    expect(soundAfterClear).toEqual([]);

    // One LLM request for the four keys, with them as the caller's words, after the pause.
    const asked = openai.requests.slice(requestsBefore).map((r) => lastMessage(r.body));
    expect(asked.filter((m) => m.role === 'user')).toEqual([{ role: 'user', content: 'The caller pressed: 1 2 3 4' }]);

    await caller.hangup();
    const call = await eventually(async () => {
      const c = (await h.request('GET', `/api/calls/${callId}`)).body;
      return c.status === 'completed' && c;
    }, 15_000);
    const list = await events(callId);
    expect(list.filter((e) => e.event_type === 'dtmf').map((e) => e.data)).toEqual([{ digit: '1' }, { digit: '2' }, { digit: '3' }, { digit: '4' }]);
    expect(list.filter((e) => e.event_type === 'user_spoke').map((e) => e.data.text)).toEqual(['The caller pressed: 1 2 3 4']);
    const greeting = list.find((e) => e.event_type === 'agent_spoke')!.data;
    expect(greeting.interrupted).toBe(true);
    expect(GREETING.startsWith(greeting.text)).toBe(true);
    expect(list.some((e) => e.event_type === 'interruption')).toBe(true);
    // The status moved once, dated no later than the audio began.
    const moves = list.filter((e) => e.event_type === 'call_status' && e.data.from === 'ringing' && !e.data.ignored);
    expect(moves.map((e) => e.data.status)).toEqual(['in_progress']);
    expect(call.transcript.map((t: any) => t.text)).toContain('The caller pressed: 1 2 3 4');
  }, 90_000);

  it('navigates a phone menu with send_dtmf: the menu hears the keys in the audio', async () => {
    const agent = `ivr-${provider}`;
    const row = await createAgent(h.db, h.box, { name: agent, greeting: 'Hi.', pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 1 } });
    const flow = await h.request('PUT', `/api/agents/${row.id}/flow`, {
      body: { nodes: [{ node_key: 'menu', is_initial: true, task_messages: [{ role: 'system', content: 'Reach billing.' }], builtin_tools: ['send_dtmf'] }] },
    });
    expect(flow.status).toBe(200);
    openai.setResponder((body) => {
      const last = lastMessage(body);
      expect(body.tools.map((t: any) => t.function.name)).toContain('send_dtmf');
      if (last.role === 'user') return { tool_calls: [{ name: 'send_dtmf', arguments: { digits: '2 4#' } }] };
      if (last.role === 'tool') return { content: 'Waiting for billing.' };
      return { content: 'Sorry?' };
    });
    const { caller, callId } = await ring(agent, '+14155550302', '+15005550007');
    await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke'), 15_000, 50);
    // The company's menu speaks (the fake STT hears its words).
    deepgram.script(['For sales press 1, for billing press 2 then your extension and the pound key.']);
    await caller.say(tonePcm(1200, 440, 8000, caller.format.sampleRate));
    await eventually(async () => caller.heardDigits() === '24#', 20_000, 50);
    await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke' && e.data.text === 'Waiting for billing.'), 20_000, 50);
    const result = (await events(callId)).find((e) => e.event_type === 'tool_result' && e.data.function === 'send_dtmf')!.data;
    expect(result).toMatchObject({ result: { digits: '24#', method: 'inband' }, duration_ms: expect.any(Number) });
    expect(result.duration_ms).toBeGreaterThanOrEqual(400);
    await caller.hangup();
  }, 90_000);
});
