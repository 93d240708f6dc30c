/**
 * How long a refused client is told to wait before it tries again (`Retry-After`, in seconds), for
 * each refusal that trying again can cure: one table, so every route answers the same for the
 * same cause and the docs name one set of values (docs/call-lifecycle.md, "Load, admission and
 * refusal"; docs/api.md). The login and web-call throttles are not here: they say when their own
 * counting window ends.
 *
 * The principle: about the time in which the cause is likely gone. A retry that comes too early
 * costs one cheap refused request (a count under a lock); one that comes too late leaves a slot or
 * a gateway's room unused while the client waits.
 */
export const RETRY_AFTER_SECS = {
  /**
   * 429: every `<provider>_max_concurrent` slot is in use. A slot frees when any one of that
   * provider's calls ends: at caps of 5–10 and calls of one to three minutes that is every 6–36 s,
   * so 10 s retries about as soon as a slot is likely free. (It was 30 s: a dialler retrying that
   * late leaves each freed slot unused for 15 s on average, a seventh of a 90-s call's time.)
   */
  providerCapFull: 10,
  /**
   * 503: no media gateway has room for the call (every live one is at capacity or draining), or
   * none runs. Gateways publish their room every second and a burst's set-ups are over within
   * SETUP_SECS (3 s), so room comes back in seconds; a gateway that restarts is back as soon.
   */
  gatewayFull: 5,
  /** 503: Temporal or PostgreSQL cannot be reached. A restart takes seconds. */
  dependencyAway: 5,
  /**
   * 503 from a draining gateway to a stream's WebSocket upgrade: for the load balancer in front
   * of the gateways, which tries the next one at once; 1 s is how long it leaves this one out.
   */
  drainingGateway: 1,
} as const;

export type RetryAfterCause = keyof typeof RETRY_AFTER_SECS;

/** The `Retry-After` header for a refusal of this cause. */
export function retryAfterHeader(cause: RetryAfterCause): { 'Retry-After': string } {
  return { 'Retry-After': String(RETRY_AFTER_SECS[cause]) };
}
