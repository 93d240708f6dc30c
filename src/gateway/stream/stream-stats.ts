/**
 * Counters of what the gateway's media streams saw, per provider: streams opened, messages
 * ignored (malformed or unexpected, and well-formed but unused), streams closed by the gateway
 * and why. Shown on /healthz (`streams`), so a vendor sending something new or an attacker
 * probing the endpoint shows up without reading logs.
 */
export interface ProviderStreamStats {
  opened: number;
  /** Malformed or out-of-place messages, ignored. */
  invalid_messages: number;
  /** Well-formed messages the gateway does not use (unknown events, other tracks), ignored. */
  ignored_messages: number;
  /** Streams the gateway closed, by reason (unauthenticated, flood, unknown call…). */
  rejected: Record<string, number>;
}

// Reasons carry details (a call id, a format); these buckets keep the counters bounded.
const REASON_BUCKETS: Array<[RegExp, string]> = [
  [/token|authenticated start/, 'unauthenticated'],
  [/flood/, 'flood'],
  [/unknown call|call is |already streaming|lookup failed|did not answer/, 'unknown_or_finished_call'],
  [/format/, 'unsupported_format'],
  [/not reading/, 'peer_not_reading'],
];

export class StreamStats {
  private readonly byProvider = new Map<string, ProviderStreamStats>();

  private of(provider: string): ProviderStreamStats {
    let s = this.byProvider.get(provider);
    if (!s) this.byProvider.set(provider, (s = { opened: 0, invalid_messages: 0, ignored_messages: 0, rejected: {} }));
    return s;
  }

  opened(provider: string): void {
    this.of(provider).opened++;
  }

  message(provider: string, kind: 'invalid' | 'ignored'): void {
    if (kind === 'invalid') this.of(provider).invalid_messages++;
    else this.of(provider).ignored_messages++;
  }

  rejected(provider: string, reason: string): void {
    const bucket = REASON_BUCKETS.find(([re]) => re.test(reason))?.[1] ?? 'other';
    const rejected = this.of(provider).rejected;
    rejected[bucket] = (rejected[bucket] ?? 0) + 1;
  }

  toJSON(): Record<string, ProviderStreamStats> {
    return Object.fromEntries(this.byProvider);
  }
}
