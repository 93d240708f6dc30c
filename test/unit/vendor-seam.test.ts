/**
 * What the vendor descriptors promise the rest of the platform: each declares the configuration
 * keys it reads (composed into src/config.ts), every telephony vendor has the settings and
 * capabilities the API and the coming features read, and the media gateway loads no vendor REST
 * SDK (the descriptors are light; the server half loads on first use).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { configSchema, loadConfig } from '../../src/config';
import { LLM_VENDORS } from '../../src/providers/llm/registry';
import { STT_VENDORS } from '../../src/providers/stt/registry';
import { telephonyDescriptors, telephonyVendor } from '../../src/providers/telephony/registry';
import { DEFAULT_MAX_CONCURRENT } from '../../src/providers/telephony/settings';
import { TTS_VENDORS } from '../../src/providers/tts/registry';
import { vendorConfigShape } from '../../src/providers/vendor-config';

const ROOT = path.join(__dirname, '..', '..');

describe('vendor descriptors', () => {
  it('speech and LLM descriptors declare exactly the keys they name (env and optionalEnv), and config.ts validates them', () => {
    const schema = configSchema().shape as Record<string, unknown>;
    for (const vendor of [...STT_VENDORS, ...TTS_VENDORS, ...LLM_VENDORS]) {
      expect([vendor.name, Object.keys(vendor.config).sort()]).toEqual([vendor.name, [...vendor.env, ...vendor.optionalEnv].sort()]);
      for (const key of Object.keys(vendor.config)) expect(schema[key]).toBe(vendor.config[key]);
    }
    for (const vendor of telephonyDescriptors()) for (const key of Object.keys(vendor.config)) expect(schema[key]).toBe(vendor.config[key]);
  });

  it('a bad vendor key fails start-up naming it; defaults come from the descriptor', () => {
    const keys = Object.keys(vendorConfigShape());
    const urlKey = keys.find((k) => k.endsWith('_BASE_URL'))!;
    expect(() => loadConfig({ [urlKey]: 'not a url' })).toThrow(new RegExp(`${urlKey}: `));
    const defaulted = Object.entries(loadConfig({})).filter(([k, v]) => keys.includes(k) && v !== undefined);
    expect(defaulted.length).toBeGreaterThan(0);
  });

  it('telephony vendors: unique names and aliases, a max_concurrent with its default, capabilities as data', () => {
    const vendors = telephonyDescriptors();
    expect(new Set(vendors.map((v) => v.name)).size).toBe(vendors.length);
    const aliases = vendors.flatMap((v) => (v.alias ? [v.alias] : []));
    expect(new Set(aliases).size).toBe(aliases.length);
    for (const v of vendors) {
      expect(v.name).toMatch(/^[a-z][a-z0-9]*$/);
      expect(v.settings.max_concurrent).toMatchObject({ kind: 'int', default: DEFAULT_MAX_CONCURRENT });
      expect(Object.values(v.settings).some((f) => f.kind === 'secret')).toBe(true);
      for (const c of [v.capabilities.transfer, v.capabilities.machine_detection, v.capabilities.send_dtmf]) {
        expect(typeof c.supported).toBe('boolean');
        expect(c.how.length).toBeGreaterThan(10);
      }
      expect(v.capabilities.audio_formats.length).toBeGreaterThan(0);
      for (const f of v.capabilities.audio_formats) expect(f).toMatch(/^(mulaw|pcm16)\/(8000|16000)$/);
      expect(v.media.name).toBe(v.name);
    }
  });

  it('the server half of each vendor loads on first use, once', async () => {
    for (const v of telephonyDescriptors()) {
      const server = await telephonyVendor(v.name);
      expect(server?.name).toBe(v.name);
      expect(await telephonyVendor(v.name)).toBe(server);
    }
    expect(await telephonyVendor('nobody')).toBeUndefined();
  });

  it('the media gateway loads no vendor REST SDK', () => {
    const out = execFileSync(
      process.execPath,
      ['--require', 'tsx/cjs', '-e', "require('./src/gateway/server'); console.log(JSON.stringify(Object.keys(require.cache).filter((k) => /node_modules\\/(twilio|plivo|got)\\//.test(k))))"],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'error' } },
    );
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual([]);
  }, 60_000);
});
