/**
 * The one configuration schema of the platform. Every process (api, worker, gateway, `npm start`)
 * reads its settings here, validated once at start-up so a bad value fails fast with a clear message.
 */
import path from 'node:path';
import { z } from 'zod';
import ipaddr from 'ipaddr.js';
import { parseAllowList } from './security/outbound-guard';
import { LLM_PROVIDERS } from './shared/catalog';

const port = z.coerce.number().int().min(0).max(65535);
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

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

export const configSchema = z.object({
  PORT: port.default(8000),
  GATEWAY_PORT: port.default(8001),
  // The media gateway as telephony providers reach it (ws:// or wss://), when it is not behind
  // PUBLIC_BASE_URL; stream URLs are this plus /media/<provider>. No query: Twilio refuses one.
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
  // Private targets that tool and agent webhooks may reach (the outbound guard refuses the rest).
  WEBHOOK_ALLOWED_NETWORKS: AllowedNetworks,
  TRUST_PROXY: TrustProxy,
  OPENAI_BASE_URL: optionalString.pipe(z.url().optional()),
  OPENAI_API_KEY: optionalString,
  LLM_MODEL: z.string().default('gpt-4o-mini'),
  GROQ_API_KEY: optionalString,
  GROQ_BASE_URL: z.url().default('https://api.groq.com/openai/v1'),
  AZURE_OPENAI_ENDPOINT: optionalString.pipe(z.url().optional()),
  AZURE_OPENAI_API_KEY: optionalString,
  AZURE_OPENAI_API_VERSION: z.string().default('2024-10-21'),
  LLM_RETRY_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(4),
  LLM_RETRY_INITIAL_SECS: z.coerce.number().positive().default(1),
  WEBHOOK_RETRY_INITIAL_SECS: z.coerce.number().positive().default(5),
  RING_TIMEOUT_SECS: z.coerce.number().int().positive().default(60),
  // POST /api/calls/end waits this long for the call's workflow to end the call; a workflow that
  // cannot (no worker, a task failing on every attempt) is then terminated and the call failed.
  CALL_END_TIMEOUT_SECS: z.coerce.number().positive().max(3600).default(30),
  DEEPGRAM_API_KEY: optionalString,
  DEEPGRAM_BASE_URL: z.url().default('wss://api.deepgram.com'),
  CARTESIA_API_KEY: optionalString,
  CARTESIA_BASE_URL: z.url().default('wss://api.cartesia.ai'),
  ELEVENLABS_API_KEY: optionalString,
  ELEVENLABS_BASE_URL: z.url().default('wss://api.elevenlabs.io'),
  // Speech vendors of the registries (src/providers/{stt,tts}/registry.ts); each adapter's
  // descriptor says which of these it needs. A *_BASE_URL replaces the vendor's public host.
  SARVAM_API_KEY: optionalString,
  SARVAM_BASE_URL: z.url().default('https://api.sarvam.ai'),
  AZURE_SPEECH_KEY: optionalString,
  AZURE_SPEECH_REGION: optionalString.pipe(z.string().regex(/^[a-z0-9]+$/, 'must be an Azure region name such as westeurope or centralindia').optional()),
  // A custom Speech endpoint (full URL with path) or a container host (ws://host:5000) instead of the region's.
  AZURE_SPEECH_ENDPOINT: optionalString.pipe(z.url().regex(/^(wss?|https?):\/\//i, 'must be a ws://, wss://, http:// or https:// URL').optional()),
  AZURE_SPEECH_HOST: optionalString.pipe(z.url().regex(/^(wss?|https?):\/\//i, 'must be a ws://, wss://, http:// or https:// URL').optional()),
  // OpenAI speech-to-text; unset = OPENAI_BASE_URL, else https://api.openai.com/v1. Separate because
  // OPENAI_BASE_URL often points at an LLM-only server (Ollama, vLLM) without /audio/transcriptions.
  OPENAI_STT_BASE_URL: optionalString.pipe(z.url().optional()),
  TWILIO_API_BASE_URL: optionalString.pipe(z.url().optional()),
  // Replaces https://api.plivo.com (the fake Plivo in tests and local runs).
  PLIVO_API_BASE_URL: optionalString.pipe(z.url().optional()),
  // Bearer token for GET /metrics; without it /metrics answers only local, unproxied scrapes.
  METRICS_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  // The standalone worker's /metrics listener (`npm run worker`; 0 picks a free port).
  WORKER_METRICS_PORT: port.default(8002),
  // Replaces the stored exotel_api_base (https://api.exotel.com by default): the fake Exotel in
  // tests and local runs. An operator setting, so it may point anywhere; the stored one may not.
  EXOTEL_API_BASE_URL: optionalString.pipe(z.url().optional()),
  // Sample rate of Exotel's Voicebot streams (16-bit PCM): 8000 (PSTN) or 16000 (wideband).
  EXOTEL_SAMPLE_RATE: z.enum(['8000', '16000']).default('8000').transform(Number),
  // Agent tests (docs/agent-tests.md): conversations a run may hold at once, and the LLM that
  // plays simulated callers and judges (unset: the tested agent's own provider and model).
  AGENT_TEST_MAX_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(5),
  AGENT_TEST_LLM_PROVIDER: optionalString.pipe(z.enum(LLM_PROVIDERS).optional()),
  AGENT_TEST_LLM_MODEL: optionalString,
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  // CPU priority (nice, −20…19) of this process; e.g. 10 for the worker and API on cores they
  // share with a media gateway, so audio goes first (src/runtime/priority.ts).
  NICE: z.coerce.number().int('must be an integer').min(-20).max(19).default(0),
});

export type Config = z.infer<typeof configSchema> & { dataDir: string };

export class ConfigError extends Error {}

/** Parses an environment into a Config; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return { ...parsed.data, dataDir: path.resolve(parsed.data.DATA_DIR) };
}
