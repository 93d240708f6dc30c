/**
 * `auto` knowledge retrieval on voice and web calls (docs/knowledge-base.md, "In a call"): the
 * media gateway, which runs these calls' LLM requests, searches the agent's knowledge base with
 * the caller's words and gives the LLM the passages, as the llmTurn activity does for text calls.
 * A phone call through the Twilio fake and a web call each ask three questions answered only in
 * the documents; the LLM fake's requests show the right passage before the caller's words, and
 * the call's `knowledge_retrieved` events and its transcript's `sources` name them, each search
 * begun on the interim transcript. With an embeddings server configured the gateway searches
 * hybrid, as the worker does (the events say so). Real API, call worker, PostgreSQL, Temporal,
 * media gateway and ingestion workflow; Twilio, Deepgram, Cartesia, OpenAI and the embeddings
 * server are local fakes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setLogLevel } from '../../src/shared/logger';
import { connectWebCaller } from '../fakes/web-caller';
import { FRAME_MS } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { startFakeEmbeddings, type FakeEmbeddings } from '../fakes/embeddings-server';
import { eventually } from '../support/fixtures';
import type { Harness } from '../support/harness';
import { configureTwilio } from '../support/telephony';
import { voiceCallApi } from '../support/voice-call-api';
import { startVoiceStack, type VoiceStack } from '../support/voice-stack';

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
const FAQ = path.join(__dirname, '..', 'fixtures', 'knowledge', 'clinic-faq.md');
const ACCOUNT_SID = `AC${'4b'.repeat(16)}`;
const AUTH_TOKEN = 'knowledge-voice-test-auth-token-0';
const OUR_NUMBER = '+15005550006';
const MS_PER_CHAR = 60;
const GREETING = 'Sunrise Clinic, hello.';
const REPLY = 'Here is what I found.';

// Each question with the passage (heading and words of it) only the FAQ holds.
const QUESTIONS = [
  { asked: 'Are you open on Saturday morning?', heading: 'Sunrise Clinic FAQ > Opening hours', words: 'Saturday from 9 am to 1 pm' },
  { asked: 'Where can I park my car when I come?', heading: 'Sunrise Clinic FAQ > Parking', words: 'Elm Street garage' },
  { asked: 'What does a missed appointment cost me?', heading: 'Sunrise Clinic FAQ > Cancellation policy', words: 'a fee of 30 euros' },
];

let stack: VoiceStack;
let h: Harness;
let twilio: FakeTwilio;
let embeddings: FakeEmbeddings;
const api = voiceCallApi(() => h);

beforeAll(async () => {
  setLogLevel('error');
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  embeddings = await startFakeEmbeddings();
  const configure = (h: Harness) => configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER });
  stack = await startVoiceStack({
    telephony: [{ fake: twilio, env: { TWILIO_API_BASE_URL: twilio.apiBaseUrl }, configure }],
    // The fake's cosines run lower than a real model's (its vectors are hashed words).
    env: { EMBEDDINGS_BASE_URL: embeddings.url, EMBEDDINGS_MODEL: 'fake-embed-1', EMBEDDINGS_MIN_SIMILARITY: '0.2' },
  });
  h = stack.h;
  const base = await h.request('POST', '/api/knowledge-bases', { body: { name: 'clinic', language: 'en' } });
  expect(base.status).toBe(201);
  const doc = await h.request('POST', `/api/knowledge-bases/${base.body.id}/documents`, { body: { name: 'clinic-faq.md', content_base64: fs.readFileSync(FAQ).toString('base64') } });
  expect(doc.status).toBe(202);
  await eventually(async () => (await h.request('GET', `/api/knowledge-bases/${base.body.id}/documents/${doc.body.id}`)).body.status === 'ready', 20_000, 50);
  const agent = await api.createVoiceAgent({
    name: 'kb-voice',
    prompt: 'You answer questions for Sunrise Clinic.',
    greeting: GREETING,
    knowledge_base_ids: [base.body.id],
    knowledge_mode: 'auto',
    // The gateway shares two cores with the whole stack here: a generous budget keeps the test about passages, not load.
    knowledge_timeout_ms: 2000,
  });
  expect(agent).toMatchObject({ knowledge_mode: 'auto' });
  stack.openai.setResponder(() => ({ content: REPLY }));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await embeddings?.stop();
});

interface Caller {
  say(wav: string): Promise<unknown>;
  speechFrames(): unknown[];
  hangup(): Promise<unknown> | unknown;
}
const heardMs = (caller: Caller) => caller.speechFrames().length * FRAME_MS;

/** The caller hears the greeting, then asks each question and hears the reply. */
async function askAll(caller: Caller): Promise<void> {
  await eventually(async () => heardMs(caller) >= (GREETING.length - 2) * MS_PER_CHAR, 20_000, 20);
  for (let i = 0; i < QUESTIONS.length; i += 1) {
    const before = heardMs(caller);
    await caller.say(HELLO_WAV);
    await eventually(async () => heardMs(caller) >= before + (REPLY.length - 2) * MS_PER_CHAR, 20_000, 20);
  }
}

/** The LLM requests answering the caller's questions (the greeting's turn asks nothing). */
function questionRequests(firstRequest: number): any[] {
  return stack.openai.requests
    .slice(firstRequest)
    .map((r) => r.body as any)
    .filter((b) => b.messages[b.messages.length - 1].role === 'user');
}

async function expectPassages(callId: string, firstRequest: number): Promise<void> {
  const requests = questionRequests(firstRequest);
  expect(requests.map((b) => b.messages[b.messages.length - 1].content)).toEqual(QUESTIONS.map((q) => q.asked));
  requests.forEach((body, i) => {
    // The passages sit just before the caller's words, in the delimited context message.
    const context = body.messages[body.messages.length - 2];
    expect(context.role).toBe('system');
    expect(context.content).toContain('<knowledge>');
    expect(context.content).toContain(QUESTIONS[i]!.words);
    // No tool in auto mode: the passages are already there.
    expect((body.tools ?? []).map((t: any) => t.function.name)).not.toContain('search_knowledge_base');
  });
  const retrieved = await eventually(async () => {
    const list = (await api.events(callId)).filter((e) => e.event_type === 'knowledge_retrieved');
    return list.length >= QUESTIONS.length && list;
  }, 10_000, 50);
  // Each search began on the interim transcript, when the VAD said the caller stopped (the
  // Deepgram fake's interims carry the question's words long before that), and the turn used it.
  expect(retrieved.map((e) => e.data.prefetched)).toEqual(QUESTIONS.map(() => true));
  expect(retrieved.map((e) => ({ mode: e.data.mode, method: e.data.method, query: e.data.query, top: e.data.chunks[0]?.heading }))).toEqual(
    QUESTIONS.map((q) => ({ mode: 'auto', method: 'hybrid', query: q.asked, top: q.heading })),
  );
  // Each question's words were embedded (as the interim transcript heard them: its search is the
  // turn's; once: the web call's same questions use the kept vectors).
  const words = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
  for (const q of QUESTIONS) expect(embeddings.requests.some((r) => r.inputs.some((input: string) => words(input) === words(q.asked)))).toBe(true);
  expect((await api.events(callId)).some((e) => e.event_type === 'knowledge_skipped')).toBe(false);
  // The call's transcript names each answer's passages (the greeting was given none).
  const call = await h.request('GET', `/api/calls/${callId}`);
  const replies = (call.body.transcript as Array<{ role: string; sources?: Array<{ heading: string }> }>).filter((l) => l.role === 'assistant');
  expect(replies.map((r) => r.sources?.[0]?.heading ?? null)).toEqual([null, ...QUESTIONS.map((q) => q.heading)]);
  expect(replies.slice(1).map((r) => r.sources!.length)).toEqual(retrieved.map((e) => e.data.chunks.length));
}

it('a phone call: the gateway retrieves for each question, the LLM gets the passages, the events name them', async () => {
  const firstRequest = stack.openai.requests.length;
  stack.deepgram.script(QUESTIONS.map((q) => q.asked));
  const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/kb-voice`, from: '+14155550123', to: OUR_NUMBER });
  const verb = fake.verbs![0]!;
  if (verb.verb !== 'Connect') throw new Error(`expected <Connect>, got ${fake.twiml}`);
  const callId = verb.stream.parameters.call_id!;
  await askAll(fake.caller!);
  await expectPassages(callId, firstRequest);
  await fake.caller!.hangup();
  expect((await api.finalCall(callId)).status).toBe('completed');
});

it('a web call: the same retrieval on the browser channel', async () => {
  const firstRequest = stack.openai.requests.length;
  stack.deepgram.script(QUESTIONS.map((q) => q.asked));
  const started = await h.request('POST', '/api/calls/web', { body: { agent_name: 'kb-voice' } });
  expect(started.status).toBe(201);
  const caller = await connectWebCaller({ url: started.body.stream_url, callId: started.body.call_id, token: started.body.token });
  await askAll(caller);
  await expectPassages(started.body.call_id, firstRequest);
  await caller.hangup();
  expect((await api.finalCall(started.body.call_id)).status).toBe('completed');
});
