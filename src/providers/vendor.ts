/**
 * What every speech and LLM vendor descriptor shares: the configuration it reads, which of it is
 * required, and the one way a missing setting is worded. The registries (stt/registry.ts,
 * tts/registry.ts, llm/registry.ts) list descriptors; the API turns `missing()` into agent
 * warnings and refuses calls that could not run.
 */
import type { Config } from '../config';
import type { ConfigShape } from '../shared/config-fields';

/**
 * The platform configuration as adapters see it. Partial: an adapter falls back to its own
 * defaults (public vendor URLs) and tests may pass only the keys they need.
 */
export type ProviderConfig = Partial<Config>;
export type ConfigKey = keyof Config & string;

export interface VendorDescriptor<Name extends string = string> {
  /** The provider name of the API (`stt_provider`, `tts_provider`, `llm_provider`). */
  readonly name: Name;
  /** Human name for messages and the README matrix. */
  readonly label: string;
  /** Configuration keys that must be set for the adapter to run. */
  readonly env: readonly ConfigKey[];
  /** Configuration keys it also reads (base URLs, regions, API versions). */
  readonly optionalEnv: readonly ConfigKey[];
  /**
   * The schemas of every key in env and optionalEnv: src/config.ts validates them at start-up
   * (a key shared with another descriptor of the same vendor is the same imported schema).
   */
  readonly config: ConfigShape;
  /** Why this adapter uses the vendor SDK or speaks the wire protocol itself (README matrix). */
  readonly transport: { kind: 'sdk' | 'wire'; why: string };
  /** null when the adapter can run with `config`, else what is missing ("X is not set"). */
  missing(config: ProviderConfig): string | null;
}

/** The first of `keys` that is not set, worded as the API reports it. */
export function firstMissing(config: ProviderConfig, keys: readonly ConfigKey[]): string | null {
  for (const key of keys) {
    const value = config[key];
    if (value === undefined || value === null || value === '') return `${key} is not set`;
  }
  return null;
}

/** The value of a required key; adapters call this after missing() said null. */
export function required(config: ProviderConfig, key: ConfigKey): string {
  const value = config[key];
  if (typeof value !== 'string' || value === '') throw new Error(`${key} is not set`);
  return value;
}
