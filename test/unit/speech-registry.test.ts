/**
 * The vendor registries: every registered adapter is a name the API accepts, says what it needs,
 * and has a fake in the shared table (so the provider e2e and the latency script cover it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { MATRIX_END, MATRIX_PAGE, MATRIX_START, speechMatrix } from '../../src/providers/matrix';
import { LLM_VENDORS, llmProblem } from '../../src/providers/llm/registry';
import { STT_VENDORS, sttProblem } from '../../src/providers/stt/registry';
import { TTS_VENDORS, ttsProblem } from '../../src/providers/tts/registry';
import { LLM_PROVIDERS, STT_PROVIDERS, TTS_PROVIDERS } from '../../src/shared/catalog';
import { STT_FAKES, TTS_FAKES } from '../support/speech-vendors';

describe('vendor registries', () => {
  it.each([
    ['stt', STT_VENDORS, STT_PROVIDERS],
    ['tts', TTS_VENDORS, TTS_PROVIDERS],
    ['llm', LLM_VENDORS, LLM_PROVIDERS],
  ] as const)('%s: registered names are unique and accepted by the API', (_kind, vendors, catalog) => {
    const names = vendors.map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(catalog).toContain(name);
  });

  it('every registered speech adapter has a fake in test/support/speech-vendors.ts', () => {
    expect(Object.keys(STT_FAKES).sort()).toEqual(STT_VENDORS.map((v) => v.name).sort());
    expect(Object.keys(TTS_FAKES).sort()).toEqual(TTS_VENDORS.map((v) => v.name).sort());
  });

  it('each vendor names its first missing required setting, and is satisfied when all are set', () => {
    for (const vendor of [...STT_VENDORS, ...TTS_VENDORS, ...LLM_VENDORS]) {
      expect(vendor.env.length).toBeGreaterThan(0);
      expect(vendor.missing({})).toMatch(new RegExp(`^${vendor.env[0]} is not set`));
      const all = Object.fromEntries([...vendor.env, ...vendor.optionalEnv].map((k) => [k, k.endsWith('URL') || k.endsWith('ENDPOINT') ? 'http://127.0.0.1:1' : 'x']));
      expect(vendor.missing(all)).toBeNull();
    }
  });

  it('a name the API accepts but no adapter implements is reported as such; unknown names too', () => {
    const unregistered = STT_PROVIDERS.filter((n) => !STT_VENDORS.some((v) => v.name === n));
    for (const name of unregistered) expect(sttProblem({ stt_provider: name }, {})).toMatch(/^no adapter in this build \(available: /);
    const noTts = TTS_PROVIDERS.filter((n) => !TTS_VENDORS.some((v) => v.name === n));
    for (const name of noTts) expect(ttsProblem({ tts_provider: name }, {})).toMatch(/^no adapter in this build/);
    expect(sttProblem({ stt_provider: 'whisperx' }, {})).toBe('unknown provider (known: deepgram, openai, azure, sarvam)');
    expect(ttsProblem({ tts_provider: 'nope' }, {})).toMatch(/^unknown provider/);
    expect(llmProblem({ llm_provider: 'nope' }, {})).toBe('unknown provider (known: openai, azure, groq)');
  });

  it('openai needs a key or, for an OpenAI-compatible server, only a base URL', () => {
    expect(llmProblem({ llm_provider: 'openai' }, {})).toMatch(/^OPENAI_API_KEY is not set/);
    expect(llmProblem({ llm_provider: 'openai' }, { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' })).toBeNull();
    expect(llmProblem({ llm_provider: 'azure' }, { AZURE_OPENAI_ENDPOINT: 'https://x.openai.azure.com' })).toBe('AZURE_OPENAI_API_KEY is not set');
    expect(llmProblem({ llm_provider: 'groq' }, {})).toBe('GROQ_API_KEY is not set');
  });
});

describe('the provider matrix of docs/speech-providers.md', () => {
  it('is the one the registries generate (npx tsx scripts/speech-matrix.ts --write)', () => {
    const page = fs.readFileSync(path.join(__dirname, '..', '..', MATRIX_PAGE), 'utf8');
    expect(page).toContain(MATRIX_START);
    const block = page.slice(page.indexOf(MATRIX_START) + MATRIX_START.length, page.indexOf(MATRIX_END));
    expect(block.trim()).toBe(speechMatrix().trim());
  });
});
