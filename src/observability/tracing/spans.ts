/**
 * Spans around work the platform does itself (a tool's HTTP request), built only while tracing
 * runs: off, `inSpan` is a direct call and the attributes are never computed.
 */
import { SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { activeTracing, tracer } from './tracing';

export async function inSpan<T>(
  name: string,
  attributes: () => Attributes,
  work: () => Promise<T>,
  after?: (result: T, span: Span) => void,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  if (!activeTracing()) return work();
  return tracer().startActiveSpan(name, { kind, attributes: attributes() }, async (span) => {
    try {
      const result = await work();
      after?.(result, span);
      return result;
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Adds attributes to the span running now (an activity's, from Temporal's interceptor). */
export function annotateActiveSpan(attributes: () => Attributes): void {
  if (!activeTracing()) return;
  trace.getActiveSpan()?.setAttributes(attributes());
}

/** The trace the running code is in (an activity's, say), or null: untraced, or tracing off. */
export function activeTraceId(): string | null {
  if (!activeTracing()) return null;
  return trace.getActiveSpan()?.spanContext().traceId ?? null;
}

export { SpanKind, SpanStatusCode };
