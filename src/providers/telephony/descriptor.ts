/**
 * A telephony vendor describes itself: `src/providers/telephony/<vendor>/index.ts` exports a
 * TelephonyVendorDescriptor and registry.ts lists it. Everything the platform knows about the
 * vendor is here or behind it — its stored settings, what it can do, the environment variables
 * it reads, the text the dashboard and the OpenAPI document show, its media-stream codec, and
 * (loaded on first use) its REST client and webhooks.
 *
 * The descriptor itself is light: the media gateway reads the codec from it without loading any
 * REST SDK, because the server half (`server()`) is imported only when the API or the worker asks.
 */
import type { ConfigShape } from '../../shared/config-fields';
import type { SettingsSchema } from './settings';
import type { MediaStreamProtocol } from './stream';
import type { TelephonyVendor } from './types';

/** One capability as the vendor's documentation offers it. */
export interface TelephonyCapability {
  readonly supported: boolean;
  /** How the vendor does it (the API or document to use), or why it cannot: for whoever builds on it. */
  readonly how: string;
}

/**
 * What the vendor can do, as data: features built on the seam (transfer, keypresses out,
 * answering-machine detection) read it instead of switching on vendor names.
 */
export interface TelephonyCapabilities {
  /** Hand a live call to another number or SIP address. */
  readonly transfer: TelephonyCapability;
  /** Put the caller on hold while the agent briefs the human, then join them (docs/phone-operations.md#warm-transfer). */
  readonly warm_transfer: TelephonyCapability;
  /** Tell a person from an answering machine on outbound calls. */
  readonly machine_detection: TelephonyCapability;
  /** Play DTMF digits into the call (keypresses out). */
  readonly send_dtmf: TelephonyCapability;
  /** Media-stream formats the vendor can send and take, e.g. `mulaw/8000`, `pcm16/16000`. */
  readonly audio_formats: readonly string[];
}

export interface TelephonyVendorDescriptor {
  /** The provider name in URLs, settings fields (`<name>_<suffix>`) and calls: lowercase letters. */
  readonly name: string;
  /** The spec's neutral name accepted on input (`provider_a`), or null. */
  readonly alias: string | null;
  /** For people: "Twilio". */
  readonly label: string;
  /** Stored settings, by suffix; every vendor has `max_concurrent` (setting.maxConcurrent()). */
  readonly settings: SettingsSchema;
  readonly capabilities: TelephonyCapabilities;
  /** Environment variables the vendor reads (composed into src/config.ts and validated at start-up). */
  readonly config: ConfigShape;
  /** Shown with the settings in the dashboard and in the OpenAPI document: what to set up at the vendor. */
  readonly docs: string;
  /** The vendor's document type in answers, for the OpenAPI text: "TwiML", "Plivo XML". */
  readonly answerFormat: string;
  /** Older answer URLs the vendor's numbers may still be set to (served like /telephony/<name>/answer/{call_id}). */
  readonly legacyAnswerPaths?: readonly string[];
  /** The media WebSocket codec, served by the gateway at /media/<name>. */
  readonly media: MediaStreamProtocol;
  /** REST client, webhooks and answer documents: loaded on first use (keeps SDKs out of the gateway). */
  server(): Promise<TelephonyVendor>;
}
