/**
 * Whether an error from a Temporal client call means the server cannot be reached (down,
 * restarting, overloaded) — worth waiting for — rather than a refusal of the request itself.
 */

/** gRPC codes of a Temporal that is away or overloaded. */
const UNREACHABLE_CODES = new Set([1 /* CANCELLED */, 4 /* DEADLINE_EXCEEDED */, 8 /* RESOURCE_EXHAUSTED */, 14 /* UNAVAILABLE */]);

function grpcCode(err: unknown): number | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

export function isTemporalUnreachable(err: unknown): boolean {
  const code = grpcCode(err);
  if (code !== undefined) return UNREACHABLE_CODES.has(code);
  return /unavailable|connect|deadline|transport|socket|timed? ?out/i.test((err as Error)?.message ?? '');
}
