/**
 * The provider-neutral surface of a telephony adapter: what the API needs to place and end a call
 * and to understand the provider's status callbacks, whatever the vendor. Each vendor folder
 * (twilio/, …) implements it against that vendor's real wire protocol.
 */
import type { TelephonyProvider } from '../../shared/catalog';

/** The platform's call statuses a provider status update can move a call to. */
export type CallTransition = 'ringing' | 'in_progress' | 'completed' | 'no_answer' | 'failed';

/** The provider's own reply to "place a call"; returned to clients as `provider_response`. */
export interface ProviderCallRef {
  sid: string;
  status: string;
}

export interface PlaceCallRequest {
  /** Destination, E.164. */
  to: string;
  /** Our number / caller ID, E.164. */
  from: string;
  /** URL the provider fetches the call instructions from once the callee answers. */
  answerUrl: string;
  /** URL receiving the provider's status callbacks. */
  statusCallbackUrl: string;
  /** How long to let the phone ring before giving up (no_answer). */
  timeoutSecs: number;
  /** Hard cap on the call length; the provider hangs up after it. */
  timeLimitSecs?: number;
}

export interface TelephonyAdapter {
  readonly provider: TelephonyProvider;
  placeCall(request: PlaceCallRequest): Promise<ProviderCallRef>;
  /** Ends a live call (or cancels a ringing one). Ending a call that already ended is not an error. */
  hangup(providerCallId: string): Promise<ProviderCallRef>;
}

/** One status callback, decoded: which call, what the provider said, and what it means for us. */
export interface ProviderStatusUpdate {
  providerCallId: string;
  /** The provider's own status word (e.g. Twilio `no-answer`), kept for the call_status event. */
  providerStatus: string;
  /** null when the update does not move the call (unknown status). */
  transition: CallTransition | null;
  /** Seconds the call was connected, on terminal updates. */
  durationSecs?: number;
  /** Provider's ordering counter; callbacks may arrive out of order. */
  sequenceNumber?: number;
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
    readonly provider: TelephonyProvider,
    readonly kind: ProviderErrorKind,
    message: string,
    /** The provider's error code (Twilio: numeric, e.g. 21211), when it gave one. */
    readonly code: number | string | null = null,
    /** HTTP status of the provider's answer; null when there was none. */
    readonly httpStatus: number | null = null,
    readonly moreInfo?: string,
  ) {
    super(message);
  }
}

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
