/**
 * The telephony seam: what the platform needs from a phone company, whatever the vendor. Each
 * vendor folder implements these interfaces against that vendor's real wire protocol and
 * describes itself in a TelephonyVendorDescriptor (descriptor.ts), which registry.ts lists.
 * Routes, the outbound endpoint, hang-ups and the gateway's `/media/<provider>` stream endpoint
 * are generic and look the vendor up there; only the vendor folder knows its wire formats.
 *
 * Two halves, so the media gateway does not load the REST SDKs:
 * - TelephonyVendor (this file, the descriptor's lazily loaded `server()`): REST (dial, hang up),
 *   webhook authentication and parsing, and the HTTP answer documents (connect a bidirectional
 *   stream, refuse, say and hang up).
 * - MediaStreamProtocol (stream.ts, the descriptor's `media`): the media WebSocket codec.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ProviderConfig } from '../vendor';
import type { VendorSettings } from './settings';
import type { TelephonyStatusSignal } from '../../../workflows/call-definitions';
import type { TransferOutcome, TransferTarget } from '../../shared/transfer';
import type { AnsweredBy, VoicemailAction } from '../../voicemail/settings';

// ---- call statuses ---------------------------------------------------------------------------

/** The platform's five call statuses, the ones a provider status can move a call to. */
export type CallTransition = 'ringing' | 'in_progress' | 'completed' | 'no_answer' | 'failed';

/**
 * A provider status in neutral words: each vendor maps its own status words to these, in one
 * table in its folder. Finer than the five call statuses (busy, no answer and canceled all end a
 * call as `no_answer`) so the call_status event keeps what happened.
 */
export type ProviderCallStatus = TelephonyStatusSignal['status'];

/** The call status each neutral provider status moves a call to (the workflow applies it). */
export const CALL_STATUS_OF: Readonly<Record<ProviderCallStatus, CallTransition>> = Object.freeze({
  ringing: 'ringing',
  answered: 'in_progress',
  completed: 'completed',
  busy: 'no_answer',
  no_answer: 'no_answer',
  canceled: 'no_answer',
  failed: 'failed',
});

const RANK: Record<CallTransition, number> = { ringing: 0, in_progress: 1, completed: 2, no_answer: 2, failed: 2 };
const TERMINAL = new Set<string>(['completed', 'no_answer', 'failed']);

/**
 * Whether a call in `current` status should take `next`. Providers deliver callbacks
 * concurrently and out of order, so a status never moves backwards (in_progress → ringing) and a
 * terminal status (completed, no_answer, failed) is final.
 */
export function canApplyTransition(current: string, next: CallTransition): boolean {
  if (TERMINAL.has(current)) return false;
  const from = RANK[current as CallTransition];
  return from === undefined || RANK[next] > from;
}

// ---- REST --------------------------------------------------------------------------------------

/** The provider's own reply to "place a call"; returned to clients as `provider_response`. */
export interface ProviderCallRef {
  sid: string;
  status: string;
}

/** How a call's audio reaches the media gateway: handed to the vendor in answers (and dials). */
export interface StreamConnection {
  /** ws(s)://<gateway>/media/<provider>, no query string (add your own parameters if the vendor allows). */
  streamUrl: string;
  /** Our call id and its per-call stream token; the vendor carries both to the stream's start. */
  callId: string;
  token: string;
}

export interface DialRequest {
  /** Our call id (the call row and workflow exist already). */
  callId: string;
  /** Destination, E.164. */
  to: string;
  /** Our number / caller ID, E.164. */
  from: string;
  /** {public_base_url}/telephony/<provider>/answer/<call_id>: fetched when the callee answers. */
  answerUrl: string;
  /** {public_base_url}/telephony/<provider>/status/<call_id>: status (and hang-up) callbacks. */
  statusUrl: string;
  /** For vendors that take the stream on the dial request itself rather than in an answer. */
  stream: StreamConnection;
  /** How long to let the phone ring before giving up (no_answer). */
  ringTimeoutSecs: number;
  /** Hard cap on the call length; the provider hangs up after it. */
  timeLimitSecs?: number;
  /**
   * The agent detects voicemail: vendors with answering-machine detection run it asynchronously
   * and post its result to `url` ({public_base_url}/telephony/<provider>/machine/<call_id>).
   * `action` says whether the platform will leave a message (wait for the greeting's end) or hang up.
   */
  machineDetection?: { action: VoicemailAction; url: string };
}

/** A vendor's answering-machine detection result (docs/phone-operations.md#voicemail-on-outbound-calls). */
export interface MachineDetectionResult {
  providerCallId: string | null;
  answeredBy: AnsweredBy;
  /** The vendor's own word (`machine_end_beep`, `Machine=true`, …), kept in the event. */
  providerResult: string;
  /** The machine's greeting is over (its beep, or silence): a message may be spoken now. */
  greetingEnded: boolean;
}

export interface DialResult {
  /**
   * The id the provider's callbacks and hang-up use (stored as the call's provider_call_sid).
   * A vendor whose dial answer only has a request id returns that; a callback carrying the real
   * call id replaces it (see StatusUpdate.providerCallId).
   */
  providerCallId: string;
  response: ProviderCallRef;
}

/**
 * Why a provider request failed, so the API can choose its answer:
 * `rejected` — the provider refused the request as invalid (bad number, unverified caller ID…);
 * `auth` — the stored credentials are wrong; `not_found` — unknown call or account;
 * `unavailable` — no usable answer (network error, timeout, 5xx, 429).
 */
export type ProviderErrorKind = 'rejected' | 'auth' | 'not_found' | 'unavailable';

/** A provider request failed; `message` is the provider's own words, fit to show to the client. */
export class TelephonyProviderError extends Error {
  override readonly name = 'TelephonyProviderError';
  constructor(
    readonly provider: string,
    readonly kind: ProviderErrorKind,
    message: string,
    /** The provider's error code (numeric or a word, as the vendor gives it), when it gave one. */
    readonly code: number | string | null = null,
    /** HTTP status of the provider's answer; null when there was none. */
    readonly httpStatus: number | null = null,
    readonly moreInfo?: string,
  ) {
    super(message);
  }
}

/** The stored settings lack what a provider request needs; `missing` names the settings fields. */
export class TelephonyNotConfigured extends Error {
  constructor(
    readonly provider: string,
    readonly label: string,
    readonly missing: string[],
  ) {
    super(`${label} is not configured: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set (PUT /api/settings/telephony)`);
  }
}

// ---- webhooks ----------------------------------------------------------------------------------

/** The parts of an HTTP request from the provider that vendors read (structural: no Express here). */
export interface WebhookRequest {
  method: string;
  /** Path and query as received (Express `req.originalUrl`). */
  originalUrl: string;
  headers: IncomingHttpHeaders;
  /** Parsed body: form fields (urlencoded) or a JSON object; {} when there is none. */
  body: Record<string, unknown>;
  query: Record<string, unknown>;
}

export interface WebhookAuthContext {
  /** The vendor's own stored settings (decrypted). */
  settings: VendorSettings;
  /** public_base_url (or PUBLIC_BASE_URL), no trailing slash: the URLs the provider was given start with it. */
  publicBaseUrl: string;
}

/** ok, or a refusal answered 403 `{detail}` (logged with `log`, e.g. the URL a signature was checked against). */
export type WebhookVerdict = { ok: true } | { ok: false; detail: string; log?: Record<string, unknown> };

/** A webhook with missing or malformed fields: answered `status` `{detail}` (never a 500). */
export class WebhookInputError extends Error {
  constructor(
    readonly status: 400 | 422,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** An incoming call, from the vendor's inbound webhook; numbers validated by the vendor. */
export interface InboundCall {
  /** The provider's id of the call: a replayed webhook with the same id creates no second call. */
  providerCallId: string;
  /** The caller: E.164, or the vendor's word for a hidden number (e.g. `anonymous`). */
  from: string;
  /** The number called, E.164 (looked up in the telephony endpoints). */
  to: string;
}

/** One status callback, decoded. */
export interface StatusUpdate {
  /** The provider's call id when the callback carries one (finds inbound calls; replaces a request id). */
  providerCallId: string | null;
  /** The vendor's own status word, kept in the call_status event (`provider_status`). */
  providerStatus: string;
  /** null: a status the vendor does not define (logged and ignored). */
  status: ProviderCallStatus | null;
  /** Seconds the call was connected, on terminal updates. */
  durationSecs?: number;
  /** The provider's ordering counter; callbacks may arrive out of order. */
  sequenceNumber?: number;
  /** Extra fields for the call_status event (sip_response_code, hangup_cause, error…), snake_case. */
  detail?: Record<string, unknown>;
}

/** What a connect document may depend on besides the stream itself. */
export interface ConnectContext {
  config: ProviderConfig;
}

/** A whole HTTP answer to the provider (an XML document, a JSON object…). */
export interface HttpAnswer {
  status: number;
  contentType: string;
  body: string;
}

export interface VendorWebhooks {
  /**
   * Is this request from the provider? A signature or whatever the vendor offers.
   * Called first on every webhook; a refusal is answered 403 `{detail}`.
   */
  verify(req: WebhookRequest, ctx: WebhookAuthContext): WebhookVerdict;
  /** The inbound-call webhook's fields; throws WebhookInputError (no call id → 400, bad numbers → 422). */
  inboundCall(req: WebhookRequest): InboundCall;
  /** A status (or hang-up) callback; null when the request is not one (answered 204, ignored). */
  statusUpdate(req: WebhookRequest): StatusUpdate | null;
  /** An answering-machine detection callback; null when the request is not one (answered 204). Vendors without AMD omit it. */
  machineDetection?(req: WebhookRequest): MachineDetectionResult | null;
  /** The provider's call id in any webhook (e.g. the answer fetch of an outbound call), if present. */
  providerCallId(req: WebhookRequest): string | null;
  /**
   * The answer that connects the call's audio to the media gateway (a bidirectional stream).
   * `ctx.config` carries operator choices the document may need (e.g. a stream sample rate); the
   * routes always pass it, a vendor falls back to its defaults without it.
   */
  connect(stream: StreamConnection, ctx?: ConnectContext): HttpAnswer;
  /** Refuse an incoming call without answering it (unknown agent, inactive number). */
  reject(): HttpAnswer;
  /** Refuse an incoming call as busy, unanswered (no media gateway has room for it). */
  busy(): HttpAnswer;
  /** Answer, say `text` with the vendor's own TTS, hang up (busy, unavailable, call gone). */
  sayAndHangup(text: string): HttpAnswer;
}

// ---- transfer (docs/phone-operations.md#transfer-to-a-human) ------------------------------------------------

/** A cold transfer: the live call dials `target`; the vendor reports the dial to our URLs. */
export interface TransferDialRequest {
  target: TransferTarget;
  /** {base}/telephony/<provider>/transfer/<call_id>: the dial ended (busy, no answer, done); answers what the call does next. */
  actionUrl: string;
  /** {base}/telephony/<provider>/transfer/<call_id>/events: progress of the dialled leg (answered). */
  eventsUrl: string;
  /** {base}/telephony/<provider>/transfer/<call_id>/dial?…: the dial document, for vendors that transfer to a URL. */
  dialUrl: string;
  /** Seconds the destination may ring. */
  ringTimeoutSecs: number;
}

/** A dial callback of a transfer, decoded. */
export interface TransferReport {
  outcome: TransferOutcome;
  /** Whether this is the dial's end (the vendor waits for a document saying what the call does next). */
  final: boolean;
  /** For the transfer events: the vendor's fields, snake_case. */
  detail: Record<string, unknown>;
}

/** What a vendor that can transfer implements beside its webhooks. */
export interface TransferSupport<C = unknown> {
  /** Moves the live call to the dial (the current media stream ends); throws TelephonyProviderError. */
  start(creds: C, providerCallId: string, req: TransferDialRequest): Promise<void>;
  /** The document that dials `req.target` with the action and events URLs. */
  dialDocument(req: TransferDialRequest): HttpAnswer;
  /** A dial callback; null when the request is not one. */
  report(req: WebhookRequest): TransferReport | null;
  /** The document ending the call (answered to the dial action once the transferred call is over). */
  hangup(): HttpAnswer;
  /** Warm transfer (docs/phone-operations.md#warm-transfer), where the vendor has a conference. */
  readonly warm?: WarmTransferSupport<C>;
}

/** The URLs and settings of one warm transfer (src/calls/warm-transfer.ts builds them). */
export interface WarmTransferRequest {
  target: TransferTarget;
  /** Our number: the caller ID the human sees. */
  from: string;
  /** The conference the caller waits in and the human joins: one per call. */
  conferenceName: string;
  /** {base}/telephony/<provider>/warm/<call_id>/hold?audio=…: the hold document (the audio on a loop). */
  holdUrl: string;
  /** {base}/telephony/<provider>/warm/<call_id>/answer: the human's leg answered (a stream to the agent, or a hang-up on a machine). */
  answerUrl: string;
  /** {base}/telephony/<provider>/warm/<call_id>/events: the human's leg status (busy, no answer, ended). */
  eventsUrl: string;
  /** {base}/telephony/<provider>/warm/<call_id>/return: the caller's leg back to a stream of the agent. */
  returnUrl: string;
  /** {base}/telephony/<provider>/warm/<call_id>/join: the join document, for vendors that move a leg to a URL. */
  joinUrl: string;
  /** Seconds the human's phone may ring. */
  maxWaitSecs: number;
}

/** A callback of the human's leg of a warm transfer, decoded. */
export type WarmHumanReport =
  | { outcome: 'answered'; humanCallId: string }
  | { outcome: 'voicemail' | 'busy' | 'no_answer' | 'failed' | 'canceled' | 'completed'; humanCallId: string | null; detail: Record<string, unknown> };

/** What a vendor with warm transfer implements (a conference the caller waits in, a second call to the human). */
export interface WarmTransferSupport<C = unknown> {
  /** Moves the caller's leg into the conference, on hold (their media stream ends). */
  hold(creds: C, callerCallId: string, req: WarmTransferRequest): Promise<void>;
  /** Dials the human as a call of its own; returns its vendor id. */
  dialHuman(creds: C, req: WarmTransferRequest): Promise<string>;
  /**
   * Moves the human's leg (their briefing stream ends) into the caller's conference: the hand-over.
   * `joinUrl` serves `joinDocument`, for vendors that move a leg to a URL rather than to inline XML.
   */
  join(creds: C, humanCallId: string, conferenceName: string, joinUrl: string): Promise<void>;
  /** Moves the caller's leg to `returnUrl` (a new stream of the agent). */
  giveBack(creds: C, callerCallId: string, returnUrl: string): Promise<void>;
  /**
   * What the hold URL answers: `audioUrl` played on a loop (the conference's wait document) or, for
   * vendors whose hold moves the caller's leg to the hold URL, the conference itself naming the
   * hold URL again as its wait sound. `at.url` is this request's URL as the vendor called it.
   */
  holdDocument(audioUrl: string, at: { conferenceName: string; url: string }): HttpAnswer;
  /** The join URL's document (the human's leg entering the conference), for vendors whose join moves the leg to a URL. */
  joinDocument?(conferenceName: string): HttpAnswer;
  /** The human's answer URL or status callback; null when it is neither. */
  humanReport(req: WebhookRequest): WarmHumanReport | null;
}

/** A phone company's server half. `C` is its REST credentials, built from the stored settings. */
export interface TelephonyVendor<C = unknown> {
  readonly name: string;
  /** For messages, e.g. "Acme Voice". */
  readonly label: string;
  /** Settings fields the credentials come from, named in "check your credentials" errors. */
  readonly credentialFields: readonly string[];
  /** REST credentials from the vendor's own stored settings; throws TelephonyNotConfigured naming what is missing. */
  credentials(settings: VendorSettings, config: ProviderConfig): C;
  /** Places an outbound call; throws TelephonyProviderError. */
  dial(creds: C, req: DialRequest): Promise<DialResult>;
  /**
   * Ends a live call or cancels a ringing one. A call that already ended is success, not an
   * error (the platform hangs up defensively whenever a call ends on its side).
   */
  hangup(creds: C, providerCallId: string): Promise<void>;
  readonly webhooks: VendorWebhooks;
  /** Cold transfer, where the vendor's descriptor declares capabilities.transfer supported. */
  readonly transfer?: TransferSupport<C>;
}
