/**
 * A call's trace starts where its workflow is started: one root span, `call`, the client's
 * StartWorkflow span under it, then the workflow's run, its activities on the worker and on the
 * gateway (temporal-tracing.ts). Its trace id goes on the call's row, so the call page and GET
 * /api/calls/{id} can point at it. Always a new trace: a campaign's dial activity that starts a
 * call links to it instead of holding days of calls in one trace.
 */
import { context, ROOT_CONTEXT, trace, type Attributes, type Link } from '@opentelemetry/api';
import { activeTracing, tracer } from './tracing';

export interface CallTrace {
  /** 32 hex digits, or null while tracing is off. */
  traceId: string | null;
  /** Runs `start` (the workflow start) inside the call's root span. */
  run<T>(start: () => Promise<T>): Promise<T>;
}

const UNTRACED: CallTrace = { traceId: null, run: (start) => start() };

/** Call attributes: ids and names only — never prompts, numbers' owners' secrets or keys. */
export function startCallTrace(callId: string, attributes: Attributes): CallTrace {
  if (!activeTracing()) return UNTRACED;
  const parent = trace.getSpanContext(context.active());
  const links: Link[] = parent ? [{ context: parent }] : [];
  const span = tracer().startSpan('call', { root: true, links, attributes: { 'call.id': callId, ...attributes } }, ROOT_CONTEXT);
  return {
    traceId: span.spanContext().traceId,
    run: async (start) => {
      try {
        return await context.with(trace.setSpan(ROOT_CONTEXT, span), start);
      } catch (err) {
        span.recordException(err as Error);
        throw err;
      } finally {
        span.end();
      }
    },
  };
}
