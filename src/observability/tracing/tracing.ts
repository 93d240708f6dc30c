/**
 * The process's tracing: off unless an OTLP endpoint is configured (tracing-settings.ts). Off, the
 * OpenTelemetry SDK is never loaded and the API's global tracer stays the no-op one, so every
 * span the code asks for is a non-recording stub. On, one NodeTracerProvider for the process
 * (`npm start` runs every part in one process, one service), batching spans to OTLP/HTTP.
 */
import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Resource } from '@opentelemetry/resources';
import { exportTarget, type ExportTarget, type TracingConfig } from './tracing-settings';

export const TRACER_NAME = 'voice-agent-platform';

export interface ActiveTracing {
  target: ExportTarget;
  /** Also fed by the Temporal workflow sink (workflow spans are made inside the sandbox). */
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Exports what is buffered. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

let active: ActiveTracing | null = null;

/** The running tracing, or null when it is off (the usual case: check it before building attributes). */
export function activeTracing(): ActiveTracing | null {
  return active;
}

/** The platform's tracer: the no-op one while tracing is off. */
export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

/**
 * Starts tracing once per process when the configuration names an endpoint; later calls (another
 * part of `npm start`, another test harness) return the tracing already running.
 */
export function startTracing(config: TracingConfig): ActiveTracing | null {
  if (active) return active;
  const target = exportTarget(config);
  if (!target) return null;
  // Loaded only now: a process with tracing off never loads the SDK.
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto');
  const { Resource } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { ATTR_SERVICE_NAME } = require('@opentelemetry/semantic-conventions') as typeof import('@opentelemetry/semantic-conventions');
  const resource = Resource.default().merge(new Resource({ ...target.resourceAttributes, [ATTR_SERVICE_NAME]: target.serviceName }));
  const exporter = new OTLPTraceExporter({ url: target.url, headers: target.headers });
  const spanProcessor = new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // The global tracer provider, AsyncLocalStorage context and W3C trace-context propagation.
  provider.register();
  active = {
    target,
    spanProcessor,
    resource,
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      active = null;
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
  return active;
}

/** Flushes and stops tracing (a process's last stop; tests between files). */
export async function stopTracing(): Promise<void> {
  await active?.shutdown();
}
