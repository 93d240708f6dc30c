/**
 * The table of speech vendor fakes, one entry per registered adapter: how to start its fake and
 * the configuration that points the adapter at it. The provider e2e
 * (test/integration/voice-call-providers.test.ts), the registry test and
 * scripts/speech-latency.ts iterate over these tables, so a new vendor joins them all by adding
 * its descriptor to the registry and one entry here.
 *
 * Vendors that serve STT and TTS from one host under one base URL (Deepgram, OpenAI, Azure) share
 * one fake through `FakePool.once`, so an agent using both works against one server as in production.
 */
import { startFakeAzureSpeech, type FakeAzureSpeech } from '../fakes/azure-speech-server';
import { startFakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { startFakeElevenLabs } from '../fakes/elevenlabs-server';
import type { FakeTtsAudioOptions } from '../fakes/fake-tts-audio';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startFakeOpenAiTranscription } from '../fakes/openai-transcription-server';
import { startFakeSarvam } from '../fakes/sarvam-server';

export interface RunningSttFake {
  /** Environment / config keys that point the adapter at the fake. */
  env: Record<string, string>;
  /** Queues transcripts: each later utterance of caller speech is answered with the next one. */
  script(texts: string[]): void;
}

export interface RunningTtsFake {
  env: Record<string, string>;
}

/** Fakes started for one test run, shared between entries, stopped together. */
export class FakePool {
  private readonly started = new Map<string, Promise<{ stop(): Promise<void> }>>();
  constructor(readonly ttsAudio: FakeTtsAudioOptions = {}) {}

  once<T extends { stop(): Promise<void> }>(name: string, start: () => Promise<T>): Promise<T> {
    if (!this.started.has(name)) this.started.set(name, start());
    return this.started.get(name) as Promise<T>;
  }

  async stopAll(): Promise<void> {
    const all = [...this.started.values()];
    this.started.clear();
    await Promise.all(all.map(async (p) => (await p).stop()));
  }
}

const DEEPGRAM_KEY = 'dg-fake-key';
/** The shared fake Deepgram (listen and speak), e.g. to stage an outage. */
export const deepgramFake = (pool: FakePool) => pool.once<FakeDeepgram>('deepgram', () => startFakeDeepgram({ apiKey: DEEPGRAM_KEY, speak: pool.ttsAudio }));
const deepgramEnv = (fake: FakeDeepgram) => ({ DEEPGRAM_API_KEY: DEEPGRAM_KEY, DEEPGRAM_BASE_URL: fake.url });
/** The OpenAI fake also serves the LLM: an e2e that uses it for speech points OPENAI_BASE_URL at it once. */
export const openaiFake = (pool: FakePool) => pool.once<FakeOpenAI>('openai', () => startFakeOpenAI({ speech: pool.ttsAudio }));
const OPENAI_KEY = 'sk-fake-key';
const openaiEnv = (fake: FakeOpenAI) => ({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: fake.url });
const AZURE_KEY = 'azure-fake-key';
const azure = (pool: FakePool) => pool.once<FakeAzureSpeech>('azure', () => startFakeAzureSpeech({ apiKey: AZURE_KEY, ...pool.ttsAudio }));
const azureEnv = (fake: FakeAzureSpeech) => ({ AZURE_SPEECH_KEY: AZURE_KEY, AZURE_SPEECH_HOST: fake.url });

export const STT_FAKES: Record<string, (pool: FakePool) => Promise<RunningSttFake>> = {
  deepgram: async (pool) => {
    const fake = await deepgramFake(pool);
    return { env: deepgramEnv(fake), script: (t) => fake.script(t) };
  },
  // Its own fake through OPENAI_STT_BASE_URL (with the key of the OpenAI fake, so an agent using
  // OpenAI for the LLM and STT runs with one OPENAI_API_KEY).
  openai: async (pool) => {
    const fake = await pool.once('openai-stt', () => startFakeOpenAiTranscription({ apiKey: OPENAI_KEY }));
    return { env: { OPENAI_API_KEY: OPENAI_KEY, OPENAI_STT_BASE_URL: fake.url }, script: (t) => fake.script(t) };
  },
  azure: async (pool) => {
    const fake = await azure(pool);
    return { env: azureEnv(fake), script: (t) => fake.script(t) };
  },
  sarvam: async (pool) => {
    const fake = await pool.once('sarvam', () => startFakeSarvam({ apiKey: 'sarvam-fake-key' }));
    return { env: { SARVAM_API_KEY: 'sarvam-fake-key', SARVAM_BASE_URL: fake.url }, script: (t) => fake.script(t) };
  },
};

export const TTS_FAKES: Record<string, (pool: FakePool) => Promise<RunningTtsFake>> = {
  cartesia: async (pool) => {
    const fake = await pool.once('cartesia', () => startFakeCartesia({ apiKey: 'ca-fake-key', ...pool.ttsAudio }));
    return { env: { CARTESIA_API_KEY: 'ca-fake-key', CARTESIA_BASE_URL: fake.url } };
  },
  elevenlabs: async (pool) => {
    const fake = await pool.once('elevenlabs', () => startFakeElevenLabs({ apiKey: 'el-fake-key', ...pool.ttsAudio }));
    return { env: { ELEVENLABS_API_KEY: 'el-fake-key', ELEVENLABS_BASE_URL: fake.url } };
  },
  deepgram: async (pool) => ({ env: deepgramEnv(await deepgramFake(pool)) }),
  openai: async (pool) => ({ env: openaiEnv(await openaiFake(pool)) }),
  azure: async (pool) => ({ env: azureEnv(await azure(pool)) }),
};

/**
 * The fakes of the providers an agent gets by default (STT deepgram, LLM openai, TTS cartesia)
 * and the environment pointing at them: for suites whose calls must pass the "can this agent
 * run?" check (outbound 422, inbound apology) without exercising speech themselves.
 */
export async function defaultProviderEnv(pool: FakePool): Promise<Record<string, string>> {
  const [stt, tts, llm] = await Promise.all([STT_FAKES.deepgram!(pool), TTS_FAKES.cartesia!(pool), openaiFake(pool)]);
  return { ...stt.env, ...tts.env, ...openaiEnv(llm) };
}
