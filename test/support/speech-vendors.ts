/**
 * The table of speech vendor fakes, one line per registered adapter: how to start its fake and
 * the configuration that points the adapter at it. The provider e2e
 * (test/integration/voice-call-providers.test.ts), the registry test and
 * scripts/speech-latency.ts iterate over these tables, so a new vendor joins them all by adding
 * its descriptor to the registry and one entry here.
 */
import { startFakeAzureSpeech } from '../fakes/azure-speech-server';
import { startFakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram } from '../fakes/deepgram-server';
import { startFakeElevenLabs } from '../fakes/elevenlabs-server';
import type { FakeTtsAudioOptions } from '../fakes/fake-tts-audio';
import { startFakeOpenAiTranscription } from '../fakes/openai-transcription-server';
import { startFakeSarvam } from '../fakes/sarvam-server';

export interface RunningSttFake {
  /** Environment / config keys that point the adapter at the fake. */
  env: Record<string, string>;
  /** Queues transcripts: each later utterance of caller speech is answered with the next one. */
  script(texts: string[]): void;
  stop(): Promise<void>;
}

export interface RunningTtsFake {
  env: Record<string, string>;
  stop(): Promise<void>;
}

export interface TtsFakeOptions extends FakeTtsAudioOptions {}

export const STT_FAKES: Record<string, () => Promise<RunningSttFake>> = {
  deepgram: async () => {
    const fake = await startFakeDeepgram({ apiKey: 'dg-fake-key' });
    return { env: { DEEPGRAM_API_KEY: 'dg-fake-key', DEEPGRAM_BASE_URL: fake.url }, script: (t) => fake.script(t), stop: () => fake.stop() };
  },
  openai: async () => {
    const fake = await startFakeOpenAiTranscription({ apiKey: 'sk-fake-stt-key' });
    return { env: { OPENAI_API_KEY: 'sk-fake-stt-key', OPENAI_STT_BASE_URL: fake.url }, script: (t) => fake.script(t), stop: () => fake.stop() };
  },
  azure: async () => {
    const fake = await startFakeAzureSpeech({ apiKey: 'azure-fake-key' });
    return { env: { AZURE_SPEECH_KEY: 'azure-fake-key', AZURE_SPEECH_HOST: fake.url }, script: (t) => fake.script(t), stop: () => fake.stop() };
  },
  sarvam: async () => {
    const fake = await startFakeSarvam({ apiKey: 'sarvam-fake-key' });
    return { env: { SARVAM_API_KEY: 'sarvam-fake-key', SARVAM_BASE_URL: fake.url }, script: (t) => fake.script(t), stop: () => fake.stop() };
  },
};

export const TTS_FAKES: Record<string, (options?: TtsFakeOptions) => Promise<RunningTtsFake>> = {
  cartesia: async (options = {}) => {
    const fake = await startFakeCartesia({ apiKey: 'ca-fake-key', ...options });
    return { env: { CARTESIA_API_KEY: 'ca-fake-key', CARTESIA_BASE_URL: fake.url }, stop: () => fake.stop() };
  },
  elevenlabs: async (options = {}) => {
    const fake = await startFakeElevenLabs({ apiKey: 'el-fake-key', ...options });
    return { env: { ELEVENLABS_API_KEY: 'el-fake-key', ELEVENLABS_BASE_URL: fake.url }, stop: () => fake.stop() };
  },
};
