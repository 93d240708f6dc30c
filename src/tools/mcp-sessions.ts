/**
 * MCP sessions held by a worker process, one per server configuration, shared by every call the
 * worker runs (docs/tools.md, *MCP sessions*). Why pooled rather than one per call: opening a
 * session is an `initialize` round trip plus the `initialized` notification (10–40 ms on loopback
 * against the SDK's own server, against 7–37 ms for a tool call; over the internet add TLS and two
 * round trips), paid on the turn path while the caller waits. The protocol lets one session carry
 * concurrent requests, and a call's identity reaches the tool in its arguments, not in the session.
 * A per-call session would also have to be closed by an activity that may run on another worker.
 *
 * A session idle for `idleMs` is closed (DELETE on Streamable HTTP); a worker that exits takes its
 * connections with it (the timers do not keep it alive), and the server drops what it no longer hears.
 * A session the server no longer knows (404: it restarted) is opened again once: the tool did not
 * run, so repeating the request is safe. Any other failure is the outcome's `error`, never thrown.
 */
import { createHash } from 'node:crypto';
import type { OutboundGuard } from '../security/outbound-guard';
import { connectMcp, describeMcpError, type McpConnection, type McpEndpoint } from './mcp-client';
import { mcpOutcome } from './mcp-results';
import type { ToolCallResult } from './webhook-client';

/** The `_meta` key of a tool call's idempotency key (a reverse-DNS prefix, as MCP asks of `_meta` keys). */
export const IDEMPOTENCY_META = 'io.github.voice-agent-platform/idempotency-key';

interface Held {
  connection: Promise<McpConnection>;
  idle?: NodeJS.Timeout;
  inFlight: number;
}

const sessionGone = (err: unknown) => (err as { code?: unknown }).code === 404;

export class McpSessionPool {
  private readonly held = new Map<string, Held>();
  /** Sessions opened over the pool's life (the tests read it to see reuse). */
  opened = 0;

  constructor(
    private readonly guard: OutboundGuard,
    private readonly idleMs = 60_000,
  ) {}

  // Another URL or other headers (an edit of the server) is another session.
  private key(endpoint: McpEndpoint): string {
    return createHash('sha256').update(JSON.stringify([endpoint.url, endpoint.headers])).digest('hex');
  }

  private acquire(key: string, endpoint: McpEndpoint): Held {
    let held = this.held.get(key);
    if (!held) {
      this.opened++;
      const connection = connectMcp(this.guard, endpoint);
      held = { connection, inFlight: 0 };
      this.held.set(key, held);
      connection.catch(() => this.held.get(key) === held && this.held.delete(key));
    }
    clearTimeout(held.idle);
    held.inFlight++;
    return held;
  }

  private release(key: string, held: Held): void {
    held.inFlight--;
    if (held.inFlight > 0 || this.held.get(key) !== held) return;
    held.idle = setTimeout(() => void this.drop(key, held), this.idleMs);
    held.idle.unref();
  }

  private async drop(key: string, held: Held): Promise<void> {
    if (this.held.get(key) === held) this.held.delete(key);
    clearTimeout(held.idle);
    const connection = await held.connection.catch(() => null);
    await connection?.close();
  }

  /**
   * `idempotencyKey`: the same on every attempt of one tool call (the activity's retries, a worker
   * killed mid-call), sent in the request's `_meta` as IDEMPOTENCY_META, so a server with side
   * effects can tell a retry from a second call, as webhook tools' `Idempotency-Key` header does.
   */
  async callTool(endpoint: McpEndpoint, tool: string, args: Record<string, unknown>, options: { idempotencyKey?: string } = {}): Promise<ToolCallResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const key = this.key(endpoint);
    for (let attempt = 0; ; attempt++) {
      const held = this.acquire(key, endpoint);
      try {
        const { client } = await held.connection;
        const meta = options.idempotencyKey ? { _meta: { [IDEMPOTENCY_META]: options.idempotencyKey } } : {};
        const result = await client.callTool({ name: tool, arguments: args, ...meta }, undefined, { timeout: endpoint.timeout_secs * 1000 });
        return mcpOutcome(result, elapsed());
      } catch (err) {
        // A timeout leaves the session usable (the SDK cancelled the request); anything else may not.
        const timedOut = (err as { code?: unknown }).code === -32001;
        if (!timedOut) void this.drop(key, held);
        if (sessionGone(err) && attempt === 0) continue;
        return { status_code: null, response: null, duration_ms: elapsed(), error: describeMcpError(err, endpoint.timeout_secs) };
      } finally {
        this.release(key, held);
      }
    }
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.held.entries()].map(([key, held]) => this.drop(key, held)));
  }
}
