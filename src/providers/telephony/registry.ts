/**
 * The telephony vendors of this build. A vendor is its folder (`./<vendor>/index.ts` exporting a
 * TelephonyVendorDescriptor, see descriptor.ts) and its entry in VENDORS below; the settings API,
 * the webhook routes, the OpenAPI document, the dashboard, the configuration and the media
 * gateway all read this list (docs/adding-a-vendor.md).
 *
 * Importing this module loads only the light descriptors (settings, capabilities, codecs): the
 * media gateway uses it too. A vendor's REST SDK is loaded by `telephonyVendor()`, on first use.
 */
import { mediaChannels } from '../channels/registry';
import type { TelephonyVendorDescriptor } from './descriptor';
import { descriptor as exotel } from './exotel';
import { descriptor as plivo } from './plivo';
import { descriptor as twilio } from './twilio';
import type { TelephonyVendor } from './types';

const VENDORS: TelephonyVendorDescriptor[] = [twilio, exotel, plivo];

const NAME = /^[a-z][a-z0-9]*$/;

/**
 * Adds a vendor at run time (tests, an embedding application), before the API, worker or gateway
 * that should serve it starts. Names and aliases must be new.
 */
export function registerTelephonyVendor(vendor: TelephonyVendorDescriptor): void {
  if (!NAME.test(vendor.name)) throw new Error(`telephony vendor name ${JSON.stringify(vendor.name)}: lowercase letters and digits, starting with a letter`);
  // The gateway serves vendors and media channels side by side at /media/<name>.
  if (mediaChannels().some((c) => c.name === vendor.name)) throw new Error(`telephony vendor name ${vendor.name} is a media channel's`);
  if (VENDORS.some((v) => v.name === vendor.name || (vendor.alias !== null && v.alias === vendor.alias))) {
    throw new Error(`telephony vendor ${vendor.name} (alias ${vendor.alias}) is registered already`);
  }
  VENDORS.push(vendor);
}

/** Every registered vendor, in registration order (the first is the dashboard's default). */
export function telephonyDescriptors(): readonly TelephonyVendorDescriptor[] {
  return VENDORS;
}

/** The descriptor of a provider name (not an alias), or undefined. */
export function telephonyDescriptor(provider: string): TelephonyVendorDescriptor | undefined {
  return VENDORS.find((v) => v.name === provider);
}

/** The real provider name for a real name or an alias; undefined for anything else. */
export function resolveProvider(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return VENDORS.find((v) => v.name === value || v.alias === value)?.name;
}

/** Providers that carry calls, in registration order. */
export function callCapableProviders(): string[] {
  return VENDORS.map((v) => v.name);
}

/** "acme (provider_x), …" for error messages and docs. */
export function callCapableProvidersText(): string {
  return VENDORS.map((v) => (v.alias ? `${v.name} (${v.alias})` : v.name)).join(', ');
}

/** "one of a, b (or provider_a, …)": what a provider field accepts. */
export function providerChoicesText(): string {
  const aliases = VENDORS.flatMap((v) => (v.alias ? [v.alias] : []));
  return `one of ${VENDORS.map((v) => v.name).join(', ')}${aliases.length ? ` (or ${aliases.join(', ')})` : ''}`;
}

const servers = new Map<string, Promise<TelephonyVendor>>();

/** The server half (REST, webhooks, answers) of a provider, loaded once; undefined for an unknown name. */
export async function telephonyVendor(provider: string): Promise<TelephonyVendor | undefined> {
  const descriptor = telephonyDescriptor(provider);
  if (!descriptor) return undefined;
  let server = servers.get(provider);
  if (!server) {
    server = descriptor.server();
    servers.set(provider, server);
    server.catch(() => servers.delete(provider));
  }
  return server;
}
