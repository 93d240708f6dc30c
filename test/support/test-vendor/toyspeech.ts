/**
 * Toyspeech, a speech vendor that exists only in the test suite: STT and TTS descriptors (what a
 * speech vendor's `index.ts` exports), registered by the tests that use them with one call each
 * (`registerSttVendor(toyspeechStt)`, `registerTtsVendor(toyspeechTts)`).
 *
 * Its HTTP API (served by ./toyspeech-fake.ts), with `authorization: Bearer <key>`:
 * - `POST {base}/transcribe`: a 16-bit PCM WAV of one utterance → `{text}`;
 * - `POST {base}/speak` `{text, encoding: "mulaw"|"pcm16", sample_rate}` → the audio, raw bytes.
 */
import { EventEmitter } from 'node:events';
import { MULAW_8K, PCM16_16K, PCM16_8K, type AudioFormat } from '../../../src/audio/format';
import { configValues, optionalString, optionalUrl } from '../../../src/shared/config-fields';
import { createLogger } from '../../../src/shared/logger';
import { SpeechProviderError } from '../../../src/providers/speech-socket';
import { SegmentStt } from '../../../src/providers/stt/segment-stt';
import type { SttVendor } from '../../../src/providers/stt/types';
import type { TtsEvents, TtsSession, TtsVendor } from '../../../src/providers/tts/types';
import { firstMissing, required, type ProviderConfig } from '../../../src/providers/vendor';

export const TOYSPEECH_CONFIG = {
  TOYSPEECH_API_KEY: optionalString,
  TOYSPEECH_BASE_URL: optionalUrl(),
};
const ENV = ['TOYSPEECH_API_KEY', 'TOYSPEECH_BASE_URL'];
const log = createLogger('toyspeech');

function endpoint(config: ProviderConfig) {
  return { key: required(config, 'TOYSPEECH_API_KEY'), base: configValues(TOYSPEECH_CONFIG, config).TOYSPEECH_BASE_URL! };
}

async function post(url: string, key: string, body: Buffer | string, contentType: string, signal?: AbortSignal): Promise<Response> {
  const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': contentType }, body, signal });
  if (!res.ok) throw new SpeechProviderError(`Toyspeech answered HTTP ${res.status}`, { provider: 'toyspeech', fatal: res.status === 401 });
  return res;
}

export const toyspeechStt: SttVendor = {
  name: 'toyspeech',
  label: 'Toyspeech',
  env: ENV,
  optionalEnv: [],
  config: TOYSPEECH_CONFIG,
  transport: { kind: 'wire', why: 'one HTTP upload per utterance' },
  capabilities: { streaming: false, interimResults: false, languages: 'any', formats: [PCM16_8K, PCM16_16K], settings: 'none' },
  missing: (config) => firstMissing(config, ENV),
  create(_agent, config, options = {}) {
    const { key, base } = endpoint(config);
    const format = options.format ?? MULAW_8K;
    return new SegmentStt({
      provider: 'toyspeech',
      sampleRate: format.sampleRate,
      encoding: format.encoding === 'mulaw' ? 'mulaw' : 'linear16',
      log,
      finalWaitMs: 3000,
      maxSegmentMs: 30_000,
      async transcribe(wav, signal) {
        const res = await post(`${base}/transcribe`, key, wav, 'audio/wav', signal);
        return { text: ((await res.json()) as { text: string }).text };
      },
    });
  },
};

/** One utterance at a time, each sentence one request; cancel drops what is still to come. */
class ToyspeechSession extends EventEmitter<TtsEvents> implements TtsSession {
  readonly provider = 'toyspeech';
  readonly ready = Promise.resolve();
  charactersSent = 0;
  private readonly open = new Map<string, { characters: number; chain: Promise<void>; ended: boolean; done: boolean }>();

  constructor(
    private readonly key: string,
    private readonly base: string,
    private readonly format: AudioFormat,
  ) {
    super();
  }

  startUtterance(id: string): void {
    this.open.set(id, { characters: 0, chain: Promise.resolve(), ended: false, done: false });
  }

  pushText(id: string, text: string): void {
    const utt = this.open.get(id);
    if (!utt || utt.done) return;
    utt.characters += text.length;
    this.charactersSent += text.length;
    const body = JSON.stringify({ text, encoding: this.format.encoding, sample_rate: this.format.sampleRate });
    utt.chain = utt.chain.then(async () => {
      if (utt.done) return;
      try {
        const audio = Buffer.from(await (await post(`${this.base}/speak`, this.key, body, 'application/json')).arrayBuffer());
        if (!utt.done) this.emit('audio', { id, audio });
      } catch (err) {
        this.finish(id, 'error');
        this.emit('error', err instanceof SpeechProviderError ? err : new SpeechProviderError(String(err), { provider: 'toyspeech', utteranceId: id }));
      }
    });
  }

  endText(id: string): void {
    const utt = this.open.get(id);
    if (!utt || utt.ended) return;
    utt.ended = true;
    void utt.chain.then(() => this.finish(id, 'completed'));
  }

  cancel(id: string): void {
    this.finish(id, 'cancelled');
  }

  async close(): Promise<void> {
    for (const id of [...this.open.keys()]) this.finish(id, 'cancelled');
  }

  private finish(id: string, reason: 'completed' | 'cancelled' | 'error'): void {
    const utt = this.open.get(id);
    if (!utt || utt.done) return;
    utt.done = true;
    this.open.delete(id);
    this.emit('done', { id, reason, characters: utt.characters });
  }
}

export const toyspeechTts: TtsVendor = {
  name: 'toyspeech',
  label: 'Toyspeech',
  env: ENV,
  optionalEnv: [],
  config: TOYSPEECH_CONFIG,
  transport: { kind: 'wire', why: 'one HTTP request per sentence' },
  capabilities: { streaming: false, languages: 'any', formats: [MULAW_8K, PCM16_8K, PCM16_16K], voice: 'unused', settings: 'none' },
  missing: (config) => firstMissing(config, ENV),
  create(_agent, config, options = {}) {
    const { key, base } = endpoint(config);
    return new ToyspeechSession(key, base, options.format ?? MULAW_8K);
  },
};
