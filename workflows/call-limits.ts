/** A call's fixed limits and timeouts, and the prompt of the idle check. Workflow code. */

// A runaway tool loop must not keep the caller waiting forever.
export const MAX_TOOL_ROUNDS_PER_TURN = 6;

// Enough context for the LLM to carry on naturally; the full transcript stays in PostgreSQL.
export const HISTORY_KEPT_ON_CONTINUE = 60;

export const IDLE_PROMPT =
  'The caller has been silent for a while. Briefly and politely ask whether they are still there. Do not call any tool.';

// A client-managed call (POST /api/calls/start) ends when the client says so; this only stops a
// call its client forgot from running for ever.
export const CLIENT_MANAGED_SAFETY_LIMIT_SECS = 24 * 3600;

// How long a voice call may wait, once answered, for the provider's audio stream to connect.
export const MEDIA_CONNECT_TIMEOUT = '30s';
// After endMedia the session reports within a heartbeat; don't hold the call's end for longer.
export const MEDIA_CLOSE_WAIT = '5s';
