/**
 * The one configuration schema of the platform. Every process (api, worker, gateway, `npm start`)
 * reads its settings here, validated once at start-up so a bad value fails fast with a clear message.
 *
 * The platform's own keys are below; each vendor's keys (API keys, base URLs) are declared by the
 * vendor's descriptor (`config`) and composed in from the registries, so a vendor is configured
 * and validated here without this file naming it (docs/adding-a-vendor.md).
 */
import path from 'node:path';
import { z } from 'zod';
import ipaddr from 'ipaddr.js';
import { parseAllowList } from './security/outbound-guard';
import { optionalString, type ConfigShape } from './shared/config-fields';
import { vendorConfigShape } from './providers/vendor-config';
import { LLM_PROVIDERS } from './shared/catalog';
import { tracingConfigShape } from './observability/tracing/tracing-settings';
import { EMBEDDINGS_CONFIG, embeddingsConfigProblem } from './providers/embeddings/settings';

const port = z.coerce.number().int().min(0).max(65535);

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * Which peers may set X-Forwarded-For (Express's `trust proxy`): unset/false = none, a number =
 * that many hops, or addresses/CIDRs and the names loopback, linklocal, uniquelocal.
 */
const TrustProxy = optionalString.transform((v, ctx): boolean | number | string[] => {
  if (v === undefined || v === 'false') return false;
  if (v === 'true') return true;
  if (/^\d+$/.test(v)) return Number(v);
  const entries = v.split(',').map((e) => e.trim()).filter(Boolean);
  const bad = entries.find((e) => !PROXY_NAMES.includes(e) && !ipaddr.isValid(e) && !ipaddr.isValidCIDR(e));
  if (bad) ctx.addIssue({ code: 'custom', message: `"${bad}" is not an address, a CIDR or one of ${PROXY_NAMES.join(', ')}` });
  return entries;
});

const AllowedNetworks = optionalString.superRefine((v, ctx) => {
  try {
    parseAllowList(v);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
  }
});

export const coreConfigSchema = z.object({
  PORT: port.default(8000),
  GATEWAY_PORT: port.default(8001),
  // The media gateway as telephony providers reach it (ws:// or wss://), when it is not behind
  // PUBLIC_BASE_URL; stream URLs are this plus /media/<provider>. No query: some vendors refuse one.
  GATEWAY_PUBLIC_URL: optionalString.pipe(
    z
      .url()
      .regex(/^wss?:\/\/[^?#]+$/i, 'must be a ws:// or wss:// URL without query, e.g. wss://voice.example.com')
      .optional(),
  ),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: optionalString.pipe(z.url({ message: 'must be a postgres:// URL' }).optional()),
  EMBEDDED_PG_PORT: port.default(5433),
  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('calls'),
  TEMPORAL_CLI_PATH: optionalString,
  TEMPORAL_UI_PORT: port.default(8233),
  JWT_SECRET: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  JWT_EXPIRES_IN_SECS: z.coerce.number().int().positive().default(3600),
  ENCRYPTION_KEY: optionalString.pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9+/=]{43,44}$/, 'must be 32 bytes, base64-encoded (openssl rand -base64 32)')
      .optional(),
  ),
  ADMIN_EMAIL: z.email().default('admin@example.com'),
  ADMIN_PASSWORD: optionalString.pipe(z.string().min(8, 'must be at least 8 characters').optional()),
  PUBLIC_BASE_URL: z.url().default('http://localhost:8000'),
  DATA_DIR: z.string().default('./data'),
  BODY_LIMIT: z.string().default('1mb'),
  // The largest knowledge-base document, uploaded or fetched (docs/knowledge-base.md); uploads
  // come base64-encoded in JSON, so their route takes a body a third larger.
  KNOWLEDGE_MAX_DOCUMENT_MB: z.coerce.number().positive().max(100).default(10),
  // Private targets that tool and agent webhooks may reach (the outbound guard refuses the rest).
  WEBHOOK_ALLOWED_NETWORKS: AllowedNetworks,
  TRUST_PROXY: TrustProxy,
  LLM_MODEL: z.string().default('gpt-4o-mini'),
  LLM_RETRY_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(4),
  LLM_RETRY_INITIAL_SECS: z.coerce.number().positive().default(1),
  WEBHOOK_RETRY_INITIAL_SECS: z.coerce.number().positive().default(5),
  // Post-call analysis (docs/post-call-analysis.md): answers failing the agent's schema are asked
  // for again up to this many answers in all; LLM errors are retried with backoff from the first
  // delay (doubling up to 5 min) for at most the window; one request may take the timeout.
  ANALYSIS_ANSWER_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(3),
  ANALYSIS_RETRY_INITIAL_SECS: z.coerce.number().positive().max(300).default(2),
  ANALYSIS_RETRY_WINDOW_SECS: z.coerce.number().int().min(10).max(7 * 24 * 3600).default(24 * 3600),
  ANALYSIS_TIMEOUT_SECS: z.coerce.number().int().min(5).max(900).default(120),
  RING_TIMEOUT_SECS: z.coerce.number().int().positive().default(60),
  // How often a campaign with calls in flight looks at their outcomes (docs/campaigns.md).
  CAMPAIGN_POLL_MS: z.coerce.number().int().min(100).max(60_000).default(2_000),
  // A contact list streamed as CSV (POST /api/campaigns/{id}/contacts.csv) is read a batch at a
  // time, so these bound a request's length, not the API's memory (docs/campaigns.md).
  CAMPAIGN_UPLOAD_MAX_MB: z.coerce.number().positive().max(1000).default(50),
  CAMPAIGN_UPLOAD_MAX_ROWS: z.coerce.number().int().min(1).max(10_000_000).default(200_000),
  // POST /api/calls/end waits this long for the call's workflow to end the call; a workflow that
  // cannot (no worker, a task failing on every attempt) is then terminated and the call failed.
  CALL_END_TIMEOUT_SECS: z.coerce.number().positive().max(3600).default(30),
  // Bearer token for GET /metrics; without it /metrics answers only local, unproxied scrapes.
  METRICS_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  // The standalone worker's /metrics listener (`npm run worker`; 0 picks a free port).
  WORKER_METRICS_PORT: port.default(8002),
  // Gateway capacity (docs/call-lifecycle.md, "Load, admission and refusal"): a gateway admits new
  // calls while its smoothed load (event-loop utilisation or delay) stays under GATEWAY_MAX_LOAD
  // and it holds fewer than GATEWAY_MAX_CALLS, offering the room its load projects; the API refuses
  // calls no gateway has room for. 0.6: past it a busy loop queues audio (docs/performance.md).
  GATEWAY_MAX_CALLS: z.coerce.number().int().positive().default(100),
  // Above 1 the load never closes the door (only GATEWAY_MAX_CALLS counts).
  GATEWAY_MAX_LOAD: z.coerce.number().positive().max(100).default(0.6),
  // The machine's CPU (busy share of all its cores) at which a gateway counts as full, as
  // GATEWAY_MAX_LOAD: on a machine shared with the worker and Temporal, cores this busy starve
  // them first. Above 1 the machine's CPU never counts (a gateway with a machine of its own).
  GATEWAY_MAX_HOST_CPU: z.coerce.number().positive().max(100).default(0.8),
  // Below this many calls the machine's CPU never refuses a call (other programs use it too: an
  // idle gateway on a busy machine admits this many); its own load and its cgroup still do.
  GATEWAY_MIN_CALLS: z.coerce.number().int().min(0).max(10_000).default(4),
  // Where the gateway reads its cgroup v2 cpu.max and cpu.stat (its container's CPU quota and
  // usage). Empty: the process's own cgroup (/proc/self/cgroup under /sys/fs/cgroup).
  GATEWAY_CGROUP_DIR: z.string().default(''),
  // No new call while a call connected here waits this long for its workflow's first request (the
  // worker or Temporal falling behind, which the gateway's own load does not show). 0: never.
  GATEWAY_MAX_HANDOFF_MS: z.coerce.number().int().min(0).max(600_000).default(2500),
  // Turn runs (docs/conversation-engine.md): while the gateway's smoothed load is at least this,
  // its calls' plain turns are reported to the workflow in runs (fewer workflow tasks; events up
  // to 10 s later); below it, each turn as it happens. 0: always; above 1: never.
  GATEWAY_TURN_RUN_LOAD: z.coerce.number().min(0).max(100).default(0.3),
  // `off`: the API admits voice calls without asking gateway presence (gateways of an older
  // version, or tests that stand in for the gateway). Never in production.
  GATEWAY_ADMISSION: z.enum(['on', 'off']).default('on'),
  // `on`: the gateway's Silero VAD inference runs on a worker thread of its own, off the event loop
  // that receives the callers' audio and paces the agent's (docs/gateway-internals.md, "The VAD thread").
  GATEWAY_VAD_THREAD: z.enum(['on', 'off']).default('on'),
  // A gateway whose presence row is older than this is presumed dead (the watchdog probes it).
  GATEWAY_LIVENESS_SECS: z.coerce.number().min(2).max(60).default(3),
  // How long a gateway carries its calls while Temporal is unreachable; past it, they end politely.
  // 90 s: a Temporal restart of up to 60 s plus the time its clients take to reconnect.
  GATEWAY_OUTAGE_SECS: z.coerce.number().int().min(5).max(3600).default(90),
  GATEWAY_OUTAGE_MESSAGE: z.string().min(1).default('Sorry, we are having technical difficulties. Please call again in a few minutes. Goodbye.'),
  // Draining (docs/call-lifecycle.md, "Draining"): on SIGTERM a gateway takes no new calls and
  // lets its live calls go on for up to this long; then each hears the goodbye and is ended.
  GATEWAY_DRAIN_SECS: z.coerce.number().int().min(0).max(7 * 24 * 3600).default(1800),
  GATEWAY_DRAIN_GOODBYE: z.string().min(1).default('I am sorry, I have to end this call now. Please call again if you need anything else. Goodbye.'),
  // While calls of a voice are up, a gateway keeps one connected TTS session of it ready for the
  // next call (its greeting then needs no handshake) for up to this long without a call taking it;
  // it closes with the voice's last call. 0: no ready sessions (docs/media-gateway.md, "Vendor connections").
  GATEWAY_TTS_SPARE_SECS: z.coerce.number().min(0).max(3600).default(50),
  // `on`: call workflows keep the Temporal SDK's per-promise stack traces, which the Web UI's
  // *Stack Trace* tab shows; they cost the worker a third of its CPU (docs/performance.md). The
  // SDK has no switch for them: patches/ adds this one, read by the worker's workflow threads.
  WORKFLOW_STACK_TRACES: z.enum(['on', 'off']).default('off'),
  // On SIGTERM a worker lets its in-flight activities finish, and the API its in-flight requests,
  // for up to this long (Temporal gives unfinished activities to other workers).
  SHUTDOWN_GRACE_SECS: z.coerce.number().int().min(0).max(3600).default(30),
  // Worker Versioning (docs/versioning.md): the worker's deployment version is
  // WORKER_DEPLOYMENT_NAME (default: the task queue) + BUILD_ID (default: the package version and a
  // hash of the workflow bundle). Call workflows stay on the version they started on.
  BUILD_ID: optionalString.pipe(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$/, 'must be 1-100 letters, digits, . _ + - (e.g. a git commit)').optional()),
  WORKER_DEPLOYMENT_NAME: optionalString.pipe(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/, 'must be 1-100 letters, digits, _ - (no dots)').optional()),
  // Whether a starting worker makes its version current (new calls start on it): `auto` when the
  // deployment has none yet (and always under `npm start`), `always`, or `never` (a deploy step does).
  WORKER_SET_CURRENT: z.enum(['auto', 'always', 'never']).default('auto'),
  // A standalone worker whose version is no longer current checks this often whether calls are
  // still pinned to it, and exits once none are; 0: never exits by itself.
  WORKER_DRAIN_CHECK_SECS: z.coerce.number().min(0).max(3600).default(10),
  // On SIGTERM, a worker whose version is no longer current waits up to this long for the calls
  // pinned to it before it stops (its replacement cannot run them).
  WORKER_DRAIN_SECS: z.coerce.number().int().min(0).max(7 * 24 * 3600).default(1800),
  // Web calls (docs/web-calls.md): how long a minted stream token may be used to connect, and how
  // many web calls a publishable key, and one client address using any key, may start a minute.
  WEB_CALL_TOKEN_TTL_SECS: z.coerce.number().int().min(5).max(600).default(60),
  WEB_CALL_KEY_RATE_PER_MIN: z.coerce.number().int().min(1).max(10_000).default(30),
  WEB_CALL_ADDRESS_RATE_PER_MIN: z.coerce.number().int().min(1).max(10_000).default(10),
  // Agent tests (docs/agent-tests.md): conversations a run may hold at once, and the LLM that
  // plays simulated callers and judges (unset: the tested agent's own provider and model).
  AGENT_TEST_MAX_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(5),
  AGENT_TEST_LLM_PROVIDER: optionalString.refine((v) => v === undefined || LLM_PROVIDERS.includes(v), { message: `must be one of the LLM providers (${LLM_PROVIDERS.join(', ')})` }),
  AGENT_TEST_LLM_MODEL: optionalString,
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  // CPU priority (nice, −20…19) of this process; e.g. 10 for the worker and API on cores they
  // share with a media gateway, so audio goes first (src/runtime/priority.ts).
  NICE: z.coerce.number().int('must be an integer').min(-20).max(19).default(0),
  // Tracing (docs/tracing.md): the standard OpenTelemetry variables; on only with an OTLP endpoint.
  ...tracingConfigShape,
  // Semantic knowledge-base search (docs/knowledge-base.md): an OpenAI-compatible /v1/embeddings.
  ...EMBEDDINGS_CONFIG,
});

/** The platform's own settings. */
export type CoreConfig = z.infer<typeof coreConfigSchema>;

/**
 * Vendors' keys, validated at start-up with the schemas their descriptors declare; a vendor reads
 * its own through configValues() (src/shared/config-fields.ts), typed by the same declaration.
 */
export type VendorConfig = { readonly [key: string]: unknown };

export type Config = CoreConfig & VendorConfig & { dataDir: string };

/** The platform's keys and every registered vendor's: built at each load, so vendors registered at start-up count. */
export function configSchema() {
  const vendors: ConfigShape = vendorConfigShape();
  const clash = Object.keys(vendors).find((key) => key in coreConfigSchema.shape);
  if (clash) throw new Error(`a vendor declares ${clash}, a key of the platform`);
  return coreConfigSchema.extend(vendors);
}

export class ConfigError extends Error {}

/** Parses an environment into a Config; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema().safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const data = parsed.data as CoreConfig & VendorConfig;
  if (!data.WORKER_DEPLOYMENT_NAME && data.TEMPORAL_TASK_QUEUE.includes('.')) {
    throw new ConfigError('Invalid configuration:\n  WORKER_DEPLOYMENT_NAME: required when TEMPORAL_TASK_QUEUE contains a dot (a deployment name cannot)');
  }
  const embeddings = embeddingsConfigProblem(data);
  if (embeddings) throw new ConfigError(`Invalid configuration:\n  ${embeddings}`);
  return { ...data, dataDir: path.resolve(data.DATA_DIR) };
}
