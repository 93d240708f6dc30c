/**
 * A local OpenAI-compatible Chat Completions server speaking the real wire protocol (JSON and SSE
 * streaming, tool calls streamed as argument fragments, usage chunk, OpenAI error JSON), so the
 * official `openai` SDK and our own code can be tested without reaching the vendor.
 *
 * Only `POST /v1/chat/completions` requests are recorded in `requests`; `GET /v1/models` lists one
 * model. Zero latency unless a reply asks for `delay_ms` / `chunk_delay_ms`.
 *
 * Structured requests — `response_format: {type: "json_schema"}`, or a forced function call
 * (`tool_choice: {type: "function"}`) — may have their own script (`enqueueStructured`,
 * `setStructuredResponder`, `failStructuredNext`), so a test can script a call's conversation and
 * its post-call analysis apart. Scripted answers go out the way the vendor sends them: the object
 * as the message's JSON `content`, or as the forced call's `arguments`. Without a structured
 * script they take the ordinary replies as before, and when there are none either, an object
 * sampled from the request's schema.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import crypto from 'node:crypto';
import { handleSpeech, type FakeOpenAISpeechOptions, type SpeechRequest } from './openai-speech';

export interface FakeReply {
  content?: string;
  /** `raw_arguments`: sent as the arguments text instead of `arguments` (e.g. broken JSON). */
  tool_calls?: Array<{ name: string; arguments: Record<string, unknown>; raw_arguments?: string }>;
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Wait before answering (before the response headers). */
  delay_ms?: number;
  /** Wait between stream chunks. */
  chunk_delay_ms?: number;
  /** Answer this HTTP error instead (OpenAI error JSON shape). */
  status?: number;
  error_message?: string;
}

/** A scripted answer to a structured request. */
export interface FakeStructuredReply {
  /** The answer (anything JSON: scripting one that breaks the schema is the point of some tests). */
  object?: unknown;
  /** Text sent instead of `object` (e.g. broken JSON). */
  raw?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  delay_ms?: number;
  status?: number;
  error_message?: string;
}

/**
 * A reply chosen by what the request says: its first (system) message, or any message, contains a
 * text. Tells apart several LLM roles sharing the server (agent versions, a simulated caller, a judge).
 */
export interface FakeRule {
  system?: string;
  anyMessage?: string;
  reply: FakeReply | ((body: any) => FakeReply | Promise<FakeReply>);
}

export interface RecordedRequest {
  body: any;
  headers: Record<string, string | string[] | undefined>;
  /** Path and query as requested (Azure puts the deployment and api-version there). */
  url: string;
}

export interface FakeOpenAI {
  /** Base URL ending in /v1 (what OPENAI_BASE_URL / the SDK's baseURL expect). */
  url: string;
  requests: RecordedRequest[];
  /** `POST /v1/audio/speech` requests (openai-speech.ts). */
  speechRequests: SpeechRequest[];
  /** Speech responses still streaming (neither finished nor abandoned by the client). */
  openSpeechResponses(): number;
  /** Rules are checked before the responder and the queue, newest first; the first that matches answers. */
  addRule(rule: FakeRule): void;
  /** Replies computed from each request (messages, tools); takes precedence over the queue. */
  setResponder(fn: ((body: any) => FakeReply | Promise<FakeReply>) | undefined): void;
  /** Queue replies used in order when no responder is set (default reply when empty: {content: "OK."}). */
  enqueue(...replies: FakeReply[]): void;
  /** Next n requests answer this HTTP status (default 500) — to test retries. */
  failNext(n: number, status?: number): void;
  /** Structured requests (json_schema response format, forced tool call) received. */
  readonly structuredRequests: RecordedRequest[];
  /** Queue answers for structured requests (before the ordinary replies and the schema sample). */
  enqueueStructured(...replies: FakeStructuredReply[]): void;
  /** Answers computed from each structured request; takes precedence over the queue. */
  setStructuredResponder(fn: ((body: any) => FakeStructuredReply | Promise<FakeStructuredReply>) | undefined): void;
  /** Next n structured requests answer this HTTP status (default 500); other requests are unaffected. */
  failStructuredNext(n: number, status?: number): void;
  reset(): void;
  stop(): Promise<void>;
}

const DEFAULT_REPLY: FakeReply = { content: 'OK.' };
const MODEL_ID = 'fake-model';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const tokensOf = (chars: number) => Math.ceil(chars / 4);

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
  return '';
}

/** Deterministic stand-in for a tokenizer: characters of the conversation / 4. */
function promptTokens(body: any): number {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  let chars = 0;
  for (const m of messages) {
    chars += textOf(m?.content).length;
    for (const call of Array.isArray(m?.tool_calls) ? m.tool_calls : []) chars += String(call?.function?.arguments ?? '').length;
  }
  return tokensOf(chars);
}

interface ToolCallOut {
  id: string;
  name: string;
  arguments: string;
}

function errorType(status: number): { type: string; code: string | null } {
  if (status === 401) return { type: 'invalid_request_error', code: 'invalid_api_key' };
  if (status === 404) return { type: 'invalid_request_error', code: 'model_not_found' };
  if (status === 429) return { type: 'requests', code: 'rate_limit_exceeded' };
  if (status >= 500) return { type: 'server_error', code: null };
  return { type: 'invalid_request_error', code: null };
}

function sendError(res: http.ServerResponse, status: number, message: string): void {
  const { type, code } = errorType(status);
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type, param: null, code } }));
}

/** Splits text into word-sized deltas (each word keeps its trailing whitespace), as streaming APIs do. */
function contentDeltas(text: string): string[] {
  const pieces = text.match(/\s*\S+\s*/g);
  return pieces && pieces.length ? pieces : [text];
}

/** Splits serialized arguments into a few fragments so clients must concatenate them. */
function argumentFragments(args: string): string[] {
  const size = Math.max(1, Math.ceil(args.length / 3));
  const out: string[] = [];
  for (let i = 0; i < args.length; i += size) out.push(args.slice(i, i + size));
  return out;
}

/** A json_schema response format, or a forced call of one function: the caller wants an object. */
function isStructured(body: any): boolean {
  return body?.response_format?.type === 'json_schema' || (body?.tool_choice?.type === 'function' && Array.isArray(body?.tools));
}

function schemaOf(body: any): any {
  if (body?.response_format?.type === 'json_schema') return body.response_format.json_schema?.schema;
  const name = body?.tool_choice?.function?.name;
  return (body?.tools ?? []).find((t: any) => t?.function?.name === name)?.function?.parameters;
}

/** A value the schema accepts, for unscripted structured requests: null where allowed, else the first enum value, "sample", 0, false. */
function sampleOf(schema: any): unknown {
  const types: string[] = Array.isArray(schema?.type) ? schema.type : [schema?.type];
  if (types.includes('null')) return null;
  if (Array.isArray(schema?.enum) && schema.enum.length) return schema.enum[0];
  if (types.includes('object')) return Object.fromEntries(Object.entries(schema?.properties ?? {}).map(([k, v]) => [k, sampleOf(v)]));
  if (types.includes('array')) return [];
  if (types.includes('number') || types.includes('integer')) return 0;
  if (types.includes('boolean')) return false;
  return 'sample';
}

/** The structured answer as the vendor sends it: JSON content, or the forced function's arguments. */
function structuredAsReply(body: any, answer: FakeStructuredReply): FakeReply {
  const { object, raw, ...rest } = answer;
  const value = object === undefined && raw === undefined ? sampleOf(schemaOf(body)) : object;
  const text = raw ?? JSON.stringify(value);
  if (body?.response_format?.type === 'json_schema') return { ...rest, content: text };
  return { ...rest, tool_calls: [{ name: body.tool_choice.function.name, arguments: value as Record<string, unknown>, raw_arguments: raw }] };
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startFakeOpenAI(options: { speech?: FakeOpenAISpeechOptions } = {}): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = [];
  const speechRequests: SpeechRequest[] = [];
  let speechInFlight = 0;
  let queue: FakeReply[] = [];
  let responder: ((body: any) => FakeReply | Promise<FakeReply>) | undefined;
  let failures = { remaining: 0, status: 500 };
  let structuredQueue: FakeStructuredReply[] = [];
  let structuredResponder: ((body: any) => FakeStructuredReply | Promise<FakeStructuredReply>) | undefined;
  let structuredFailures = { remaining: 0, status: 500 };
  const structuredRequests: RecordedRequest[] = [];

  let rules: FakeRule[] = [];

  const matches = (rule: FakeRule, body: any) => {
    const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
    if (rule.system !== undefined && !textOf(messages[0]?.content).includes(rule.system)) return false;
    if (rule.anyMessage !== undefined && !messages.some((m) => textOf(m?.content).includes(rule.anyMessage!))) return false;
    return true;
  };

  async function nextReply(body: any): Promise<FakeReply> {
    const rule = rules.find((r) => matches(r, body));
    if (rule) return typeof rule.reply === 'function' ? rule.reply(body) : rule.reply;
    const structured = isStructured(body);
    if (structured && structuredResponder) return structuredAsReply(body, await structuredResponder(body));
    const scripted = structured ? structuredQueue.shift() : undefined;
    if (scripted) return structuredAsReply(body, scripted);
    if (responder) return responder(body);
    return queue.shift() ?? (structured ? structuredAsReply(body, {}) : DEFAULT_REPLY);
  }

  async function chatCompletions(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let body: any;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return sendError(res, 400, 'We could not parse the JSON body of your request.');
    }
    const recorded = { body, headers: { ...req.headers }, url: req.url ?? '' };
    requests.push(recorded);
    if (isStructured(body)) structuredRequests.push(recorded);
    if (failures.remaining > 0) {
      failures.remaining -= 1;
      return sendError(res, failures.status, `Simulated failure (HTTP ${failures.status})`);
    }
    if (isStructured(body) && structuredFailures.remaining > 0) {
      structuredFailures.remaining -= 1;
      return sendError(res, structuredFailures.status, `Simulated failure (HTTP ${structuredFailures.status})`);
    }
    if (!Array.isArray(body?.messages) || body.messages.length === 0) {
      return sendError(res, 400, "Invalid request: 'messages' must be a non-empty array.");
    }

    const reply = await nextReply(body);
    if (reply.delay_ms) await sleep(reply.delay_ms);
    if (reply.status && reply.status >= 400) return sendError(res, reply.status, reply.error_message ?? `Error ${reply.status}`);

    const content = reply.content ?? (reply.tool_calls?.length ? null : '');
    const toolCalls: ToolCallOut[] = (reply.tool_calls ?? []).map((call) => ({
      id: `call_${crypto.randomBytes(12).toString('hex')}`,
      name: call.name,
      arguments: call.raw_arguments ?? JSON.stringify(call.arguments ?? {}),
    }));
    const completionChars = (content ?? '').length + toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
    const prompt = reply.usage?.prompt_tokens ?? promptTokens(body);
    const completion = reply.usage?.completion_tokens ?? tokensOf(completionChars);
    const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    const finishReason = toolCalls.length ? 'tool_calls' : 'stop';
    const id = `chatcmpl-${crypto.randomBytes(12).toString('hex')}`;
    const created = Math.floor(Date.now() / 1000);
    const model = typeof body.model === 'string' ? body.model : MODEL_ID;

    if (!body.stream) {
      const message: Record<string, unknown> = { role: 'assistant', content, refusal: null };
      if (toolCalls.length) {
        message.tool_calls = toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model,
          system_fingerprint: 'fp_fake',
          choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
          usage,
        }),
      );
      return;
    }

    const includeUsage = body.stream_options?.include_usage === true;
    let closed = false;
    res.on('close', () => {
      closed = true;
    });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      system_fingerprint: 'fp_fake',
      choices,
      ...(includeUsage ? { usage: null } : {}),
      ...extra,
    });
    const deltas: Array<Record<string, unknown>> = [];
    deltas.push({ role: 'assistant', content: content === null ? null : '', refusal: null });
    if (content) for (const piece of contentDeltas(content)) deltas.push({ content: piece });
    toolCalls.forEach((call, index) => {
      deltas.push({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] });
      for (const fragment of argumentFragments(call.arguments)) deltas.push({ tool_calls: [{ index, function: { arguments: fragment } }] });
    });
    const events: unknown[] = deltas.map((delta) => chunk([{ index: 0, delta, logprobs: null, finish_reason: null }]));
    events.push(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: finishReason }]));
    if (includeUsage) events.push(chunk([], { usage }));

    for (const event of events) {
      if (closed) return;
      res.write(`data: ${JSON.stringify(event)}\n\n`);
      if (reply.chunk_delay_ms) await sleep(reply.chunk_delay_ms);
    }
    if (!closed) res.end('data: [DONE]\n\n');
  }

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const handle = async () => {
      if (req.method === 'POST' && path === '/v1/chat/completions') return chatCompletions(req, res);
      // Azure OpenAI: the deployment is in the path, the API version in the query.
      if (req.method === 'POST' && /^\/openai\/deployments\/[^/]+\/chat\/completions$/.test(path ?? '')) return chatCompletions(req, res);
      if (req.method === 'POST' && path === '/v1/audio/speech') {
        speechInFlight++;
        res.once('close', () => speechInFlight--);
        return handleSpeech(req, res, await readBody(req), options.speech ?? {}, speechRequests, sendError);
      }
      if (req.method === 'GET' && path === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: MODEL_ID, object: 'model', created: 0, owned_by: 'fake' }] }));
        return;
      }
      sendError(res, 404, `Unknown request URL: ${req.method} ${path}`);
    };
    handle().catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, `Fake server error: ${err instanceof Error ? err.message : String(err)}`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    speechRequests,
    openSpeechResponses: () => speechInFlight,
    addRule(rule) {
      rules.unshift(rule);
    },
    setResponder(fn) {
      responder = fn;
    },
    enqueue(...replies) {
      queue.push(...replies);
    },
    failNext(n, status = 500) {
      failures = { remaining: n, status };
    },
    structuredRequests,
    enqueueStructured(...replies) {
      structuredQueue.push(...replies);
    },
    setStructuredResponder(fn) {
      structuredResponder = fn;
    },
    failStructuredNext(n, status = 500) {
      structuredFailures = { remaining: n, status };
    },
    reset() {
      requests.length = 0;
      speechRequests.length = 0;
      structuredRequests.length = 0;
      queue = [];
      responder = undefined;
      rules = [];
      failures = { remaining: 0, status: 500 };
      structuredQueue = [];
      structuredResponder = undefined;
      structuredFailures = { remaining: 0, status: 500 };
    },
    stop() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
