/**
 * The telephony vendors the API and the worker know (REST, webhooks, answer documents). Adding a
 * vendor: a folder next to twilio/ implementing TelephonyVendor (types.ts) and MediaStreamProtocol
 * (stream.ts), one line here and one in media-registry.ts (README: "Adding a telephony vendor").
 */
import { TELEPHONY_ALIASES, type TelephonyProvider } from '../../shared/catalog';
import { exotelVendor } from './exotel';
import { plivoVendor } from './plivo';
import { twilioVendor } from './twilio';
import type { TelephonyVendor } from './types';

const VENDORS: Partial<Record<TelephonyProvider, TelephonyVendor>> = {
  twilio: twilioVendor as TelephonyVendor,
  exotel: exotelVendor as TelephonyVendor,
  plivo: plivoVendor as TelephonyVendor,
};

/** The vendor of a provider name, or undefined when that provider cannot carry calls (yet). */
export function telephonyVendor(provider: string): TelephonyVendor | undefined {
  return Object.hasOwn(VENDORS, provider) ? VENDORS[provider as TelephonyProvider] : undefined;
}

/** Providers that carry calls, in catalogue order. */
export function callCapableProviders(): TelephonyProvider[] {
  return (Object.keys(VENDORS) as TelephonyProvider[]).filter((p) => VENDORS[p]);
}

/** "twilio (provider_a), …" for error messages and docs. */
export function callCapableProvidersText(): string {
  const aliasOf = (p: TelephonyProvider) => Object.entries(TELEPHONY_ALIASES).find(([, real]) => real === p)?.[0];
  return callCapableProviders()
    .map((p) => `${p} (${aliasOf(p)})`)
    .join(', ');
}
