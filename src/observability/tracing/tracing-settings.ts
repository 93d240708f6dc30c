/**
 * Which of the standard OpenTelemetry environment variables the platform reads, validated at
 * start-up with the rest of the configuration (src/config.ts), and what they amount to: tracing is
 * on only when an OTLP endpoint is set (docs/tracing.md). Pure: no SDK is loaded here, so a
 * process with tracing off never loads one.
 */
import { z } from 'zod';
import { optionalString } from '../../shared/config-fields';

/** `k=v,k2=v2` as OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS write it (values percent-encoded). */
export function parseKeyValueList(value: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of (value ?? '').split(',')) {
    if (!entry.trim()) continue;
    const eq = entry.indexOf('=');
    if (eq <= 0) throw new Error(`"${entry.trim()}" is not key=value`);
    out[decodeURIComponent(entry.slice(0, eq).trim())] = decodeURIComponent(entry.slice(eq + 1).trim());
  }
  return out;
}

const KeyValueList = optionalString.superRefine((v, ctx) => {
  try {
    parseKeyValueList(v);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `must be a comma-separated key=value list: ${(err as Error).message}` });
  }
});

const HttpUrl = optionalString.pipe(z.url().regex(/^https?:\/\//i, 'must be an http:// or https:// URL').optional());

// Only OTLP over HTTP with protobuf is exported; gRPC would need another exporter and port (4317).
const Protocol = optionalString.refine((v) => v === undefined || v === 'http/protobuf', {
  message: 'only http/protobuf is supported (OTLP/HTTP, usually port 4318)',
});

/** The OTEL_* keys of the configuration schema. */
export const tracingConfigShape = {
  OTEL_EXPORTER_OTLP_ENDPOINT: HttpUrl,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: HttpUrl,
  OTEL_EXPORTER_OTLP_PROTOCOL: Protocol,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: Protocol,
  OTEL_EXPORTER_OTLP_HEADERS: KeyValueList,
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: KeyValueList,
  OTEL_SERVICE_NAME: optionalString,
  OTEL_RESOURCE_ATTRIBUTES: KeyValueList,
  OTEL_SDK_DISABLED: z.enum(['true', 'false', '']).optional(),
};

export interface TracingConfig {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_HEADERS?: string | undefined;
  OTEL_EXPORTER_OTLP_TRACES_HEADERS?: string | undefined;
  OTEL_SERVICE_NAME?: string | undefined;
  OTEL_RESOURCE_ATTRIBUTES?: string | undefined;
  OTEL_SDK_DISABLED?: string | undefined;
}

export const DEFAULT_SERVICE_NAME = 'voice-agent-platform';

export interface ExportTarget {
  /** Where spans are POSTed (the traces endpoint as is, or the endpoint + /v1/traces). */
  url: string;
  headers: Record<string, string>;
  serviceName: string;
  resourceAttributes: Record<string, string>;
}

/** Where to export, or null when tracing is off (no endpoint, or OTEL_SDK_DISABLED=true). */
export function exportTarget(config: TracingConfig): ExportTarget | null {
  if (config.OTEL_SDK_DISABLED === 'true') return null;
  const url = config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (config.OTEL_EXPORTER_OTLP_ENDPOINT ? `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (!url) return null;
  const resourceAttributes = parseKeyValueList(config.OTEL_RESOURCE_ATTRIBUTES);
  return {
    url,
    headers: { ...parseKeyValueList(config.OTEL_EXPORTER_OTLP_HEADERS), ...parseKeyValueList(config.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    serviceName: config.OTEL_SERVICE_NAME ?? resourceAttributes['service.name'] ?? DEFAULT_SERVICE_NAME,
    resourceAttributes,
  };
}
