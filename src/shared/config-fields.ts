/**
 * Building blocks of configuration schemas, shared by src/config.ts and by the vendor descriptors
 * that declare their own environment variables (API keys, base URLs): config.ts composes the
 * descriptors' keys into the one schema validated at start-up.
 */
import { z } from 'zod';

/** Configuration keys a vendor reads, with their schemas: `{ ACME_API_KEY: optionalString, … }`. */
export type ConfigShape = Readonly<Record<string, z.ZodType>>;

/** An optional string; empty or blank counts as unset. Trimmed. */
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** An optional URL (blank = unset); `pattern` narrows the schemes, with its own message. */
export function optionalUrl(pattern?: { regex: RegExp; message: string }) {
  const url = pattern ? z.url().regex(pattern.regex, pattern.message) : z.url();
  return optionalString.pipe(url.optional());
}

/** A URL with a default: the vendor's public host, replaced in tests and self-hosted setups. */
export const urlWithDefault = (fallback: string) => z.url().default(fallback);

/** The values of a vendor's keys in a (possibly partial) configuration: validated at start-up, typed here. */
export type ConfigValues<S extends ConfigShape> = { [K in keyof S]?: z.output<S[K]> };

export function configValues<S extends ConfigShape>(_shape: S, config: Readonly<Record<string, unknown>>): ConfigValues<S> {
  return config as ConfigValues<S>;
}
