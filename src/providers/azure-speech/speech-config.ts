/**
 * Where the Azure Speech SDK connects, shared by Azure STT and TTS: a region's public service
 * (AZURE_SPEECH_KEY + AZURE_SPEECH_REGION), a custom endpoint (AZURE_SPEECH_ENDPOINT, a full URL
 * with its path, used as it is), or a host such as an on-premises container (AZURE_SPEECH_HOST,
 * or an AZURE_SPEECH_ENDPOINT without a path: ws://host:5000; the SDK adds the service paths).
 * A container needs no key; the others do.
 */
import * as sdk from 'microsoft-cognitiveservices-speech-sdk';
import { z } from 'zod';
import { configValues, optionalString, optionalUrl } from '../../shared/config-fields';
import type { ProviderConfig } from '../vendor';
import { SpeechProviderError } from '../speech-socket';

export interface AzureSpeechConnection {
  key?: string;
  region?: string;
  host?: string;
  endpoint?: string;
}

const SPEECH_URL = { regex: /^(wss?|https?):\/\//i, message: 'must be a ws://, wss://, http:// or https:// URL' };

/** Azure Speech's keys, shared by the STT and TTS descriptors. */
export const AZURE_SPEECH_CONFIG = {
  AZURE_SPEECH_KEY: optionalString,
  AZURE_SPEECH_REGION: optionalString.pipe(z.string().regex(/^[a-z0-9]+$/, 'must be an Azure region name such as westeurope or centralindia').optional()),
  // A custom Speech endpoint (full URL with path) or a container host (ws://host:5000) instead of the region's.
  AZURE_SPEECH_ENDPOINT: optionalUrl(SPEECH_URL),
  AZURE_SPEECH_HOST: optionalUrl(SPEECH_URL),
};

export function azureConnection(config: ProviderConfig): AzureSpeechConnection {
  const env = configValues(AZURE_SPEECH_CONFIG, config);
  return { key: env.AZURE_SPEECH_KEY, region: env.AZURE_SPEECH_REGION, host: env.AZURE_SPEECH_HOST, endpoint: env.AZURE_SPEECH_ENDPOINT };
}

/** What is missing for the SDK to connect, worded as the registries report it; null when complete. */
export function azureMissing(config: ProviderConfig): string | null {
  const env = configValues(AZURE_SPEECH_CONFIG, config);
  if (env.AZURE_SPEECH_HOST || env.AZURE_SPEECH_ENDPOINT) return null;
  if (!env.AZURE_SPEECH_KEY) return 'AZURE_SPEECH_KEY is not set (or AZURE_SPEECH_HOST / AZURE_SPEECH_ENDPOINT for a container)';
  if (!env.AZURE_SPEECH_REGION) return 'AZURE_SPEECH_REGION is not set (or AZURE_SPEECH_HOST / AZURE_SPEECH_ENDPOINT)';
  return null;
}

export function azureSpeechConfig(conn: AzureSpeechConnection): sdk.SpeechConfig {
  if (conn.endpoint) {
    const url = new URL(conn.endpoint);
    // Without a path it names a host (a container at ws://host:5000): the SDK adds the service paths.
    if (url.pathname === '' || url.pathname === '/') return sdk.SpeechConfig.fromHost(url, conn.key);
    return sdk.SpeechConfig.fromEndpoint(url, conn.key);
  }
  if (conn.host) return sdk.SpeechConfig.fromHost(new URL(conn.host), conn.key);
  if (conn.key && conn.region) return sdk.SpeechConfig.fromSubscription(conn.key, conn.region);
  throw new SpeechProviderError('Azure Speech needs AZURE_SPEECH_KEY and AZURE_SPEECH_REGION, or AZURE_SPEECH_HOST / AZURE_SPEECH_ENDPOINT', { provider: 'azure', fatal: true });
}

/** `hi` → `hi-IN`, `en` → `en-US`: Azure wants a locale. Full tags pass through. */
const DEFAULT_LOCALES: Record<string, string> = {
  en: 'en-US', hi: 'hi-IN', ta: 'ta-IN', te: 'te-IN', bn: 'bn-IN', mr: 'mr-IN', gu: 'gu-IN', kn: 'kn-IN', ml: 'ml-IN',
  pa: 'pa-IN', ur: 'ur-IN', es: 'es-ES', fr: 'fr-FR', de: 'de-DE', it: 'it-IT', pt: 'pt-BR', ja: 'ja-JP', zh: 'zh-CN', ar: 'ar-AE',
};

export function azureLocale(language: string | undefined, fallback = 'en-US'): string {
  if (!language) return fallback;
  if (language.includes('-')) return language;
  return DEFAULT_LOCALES[language.toLowerCase()] ?? language;
}

/**
 * SDK cancellation codes that retrying with the same settings cannot fix (bad key, bad
 * language or voice, forbidden).
 */
export function azureFatal(code: sdk.CancellationErrorCode): boolean {
  return code === sdk.CancellationErrorCode.AuthenticationFailure || code === sdk.CancellationErrorCode.BadRequestParameters || code === sdk.CancellationErrorCode.Forbidden;
}

/** The SDK's error text, without the connection id and key-bearing URL it sometimes appends. */
export function azureErrorText(details: string | undefined, code: sdk.CancellationErrorCode): string {
  const name = sdk.CancellationErrorCode[code] ?? 'Error';
  const text = (details ?? '').replace(/\s*(SessionId|websocket error code|X-ConnectionId)[:=].*$/is, '').replace(/Ocp-Apim-Subscription-Key=[^&\s]+/g, 'Ocp-Apim-Subscription-Key=***').trim();
  return text ? `${name}: ${text}` : name;
}

/**
 * A cancellation as a SpeechProviderError. A refused WebSocket upgrade reaches the SDK as
 * "ConnectionFailure … Unexpected server response: 401"; it is reported as the rejection it is
 * (HTTP status, fatal for a bad key) rather than as a network problem.
 */
export function azureCancellationError(what: 'recognition' | 'synthesis', code: sdk.CancellationErrorCode, details: string | undefined): SpeechProviderError {
  const status = Number(/Unexpected server response: (\d{3})/.exec(details ?? '')?.[1] ?? 0);
  if (status) {
    const hint = status === 401 || status === 403 ? ' (check AZURE_SPEECH_KEY and AZURE_SPEECH_REGION / HOST / ENDPOINT)' : '';
    return new SpeechProviderError(`Azure Speech rejected the connection: HTTP ${status}${hint}`, {
      provider: 'azure',
      status,
      fatal: status >= 400 && status < 500 && status !== 408 && status !== 429,
    });
  }
  return new SpeechProviderError(`Azure Speech ${what} failed: ${azureErrorText(details, code)}`, { provider: 'azure', fatal: azureFatal(code) });
}
