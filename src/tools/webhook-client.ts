/**
 * Calls a client's tool webhook. Used both during calls (by the tool activity) and by
 * POST /api/tools/{id}/test, so the test exercises exactly what a call does.
 * POST sends the arguments as a JSON body, GET as a query string (objects JSON-encoded).
 * Failures never throw: they come back in `error`. Every request and redirect goes through the
 * outbound guard (src/security/outbound-guard.ts).
 */
import got, { RequestError } from 'got';
import { OUTBOUND_BLOCKED, type OutboundGuard } from '../security/outbound-guard';
import { inSpan, SpanKind, SpanStatusCode } from '../observability/tracing/spans';

export interface ToolEndpoint {
  webhook_url: string;
  webhook_method: 'POST' | 'GET';
  headers: Record<string, string>;
  timeout_secs: number;
}

export interface ToolCallResult {
  status_code: number | null;
  /** Parsed JSON when the body is JSON, else the body text. */
  response: unknown;
  duration_ms: number;
  error: string | null;
}

// Bodies are handed to an LLM as text; cap them so a runaway endpoint cannot flood the context.
export const MAX_RESPONSE_BYTES = 64 * 1024;

function queryString(args: Record<string, unknown>): URLSearchParams {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(args)) {
    if (v === undefined || v === null) continue;
    params.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
  }
  return params;
}

function describe(err: unknown, timeoutSecs: number): string {
  if (err instanceof RequestError) {
    if (err.code === OUTBOUND_BLOCKED) return err.message;
    if (err.code === 'ETIMEDOUT' || err.name === 'TimeoutError') return `timeout after ${timeoutSecs}s`;
    if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return `DNS lookup failed for ${new URL(err.options.url!).hostname}`;
    if (err.code === 'ECONNREFUSED') return 'connection refused';
    return `${err.code ?? 'request error'}: ${err.message}`;
  }
  return (err as Error).message ?? String(err);
}

/**
 * The request as a client span of the call's trace while tracing runs (docs/tracing.md): method,
 * host, port and path only — never the query (GET arguments), the headers or the body.
 */
export function callToolWebhook(
  guard: OutboundGuard,
  tool: ToolEndpoint,
  args: Record<string, unknown>,
  options: { idempotencyKey?: string } = {},
): Promise<ToolCallResult> {
  return inSpan(
    'tool.http',
    () => webhookAttributes(tool),
    () => requestToolWebhook(guard, tool, args, options),
    (result, span) => {
      if (result.status_code !== null) span.setAttribute('http.response.status_code', result.status_code);
      if (result.error) span.setStatus({ code: SpanStatusCode.ERROR, message: result.error });
    },
    SpanKind.CLIENT,
  );
}

function webhookAttributes(tool: ToolEndpoint): Record<string, string | number> {
  try {
    const url = new URL(tool.webhook_url);
    return {
      'http.request.method': tool.webhook_method,
      'server.address': url.hostname,
      'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      'url.path': url.pathname,
    };
  } catch {
    return { 'http.request.method': tool.webhook_method };
  }
}

async function requestToolWebhook(
  guard: OutboundGuard,
  tool: ToolEndpoint,
  args: Record<string, unknown>,
  options: { idempotencyKey?: string },
): Promise<ToolCallResult> {
  const started = process.hrtime.bigint();
  const elapsed = () => Number((process.hrtime.bigint() - started) / 1_000_000n);
  const headers: Record<string, string> = { 'user-agent': 'voice-agent-platform', ...tool.headers };
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
  try {
    const url = new URL(tool.webhook_url);
    if (tool.webhook_method === 'GET') {
      for (const [k, v] of queryString(args)) url.searchParams.append(k, v);
    }
    const res = await got(url, {
      ...guard.gotOptions(),
      method: tool.webhook_method,
      headers,
      ...(tool.webhook_method === 'POST' ? { json: args } : {}),
      timeout: { request: tool.timeout_secs * 1000 },
      retry: { limit: 0 },
      throwHttpErrors: false,
      followRedirect: true,
      responseType: 'text',
    });
    const text = res.body.length > MAX_RESPONSE_BYTES ? res.body.slice(0, MAX_RESPONSE_BYTES) : res.body;
    let response: unknown = text;
    let parseError: string | null = null;
    try {
      response = text === '' ? null : JSON.parse(text);
    } catch {
      if ((res.headers['content-type'] ?? '').includes('json')) parseError = 'response is not valid JSON';
    }
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    return {
      status_code: res.statusCode,
      response,
      duration_ms: elapsed(),
      error: ok ? parseError : `HTTP ${res.statusCode}`,
    };
  } catch (err) {
    return { status_code: null, response: null, duration_ms: elapsed(), error: describe(err, tool.timeout_secs) };
  }
}
