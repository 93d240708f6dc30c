/**
 * The workflow side of tracing (docs/tracing.md), in every workflow bundle: Temporal's OpenTelemetry
 * workflow interceptors, engaged only for a workflow whose start carried a trace context (the
 * `_tracer-data` header the client interceptor adds while tracing is on). An untraced workflow —
 * tracing off, or a history recorded before tracing — runs exactly as without this module.
 *
 * No commands are added either way: the spans leave through a sink, and the trace context rides
 * in the headers of the activities and child workflows the workflow schedules anyway. So the
 * replay histories stay valid and the call workflows need no patch.
 */
import type { WorkflowInterceptors } from '@temporalio/workflow';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';

/** The header Temporal's OpenTelemetry interceptors carry the span context in. */
const TRACE_HEADER = '_tracer-data';

// A factory per workflow run: the run's own interceptors, nothing shared between runs.
export const interceptors = (): WorkflowInterceptors => {
  let outbound: OpenTelemetryOutboundInterceptor | undefined;
  let internals: OpenTelemetryInternalsInterceptor | undefined;
  return {
    inbound: [
      {
        execute(input, next) {
          if (input.headers[TRACE_HEADER] === undefined) return next(input);
          outbound = new OpenTelemetryOutboundInterceptor();
          internals = new OpenTelemetryInternalsInterceptor();
          return new OpenTelemetryInboundInterceptor().execute(input, next);
        },
      },
    ],
    outbound: [
      {
        scheduleActivity: (input, next) => (outbound ? outbound.scheduleActivity(input, next) : next(input)),
        scheduleLocalActivity: (input, next) => (outbound ? outbound.scheduleLocalActivity(input, next) : next(input)),
        // An agent test's attempts and their calls are child workflows: they join the run's trace.
        startChildWorkflowExecution: (input, next) => (outbound ? outbound.startChildWorkflowExecution(input, next) : next(input)),
        // A call continued as new stays in its trace.
        continueAsNew: (input, next) => (outbound ? outbound.continueAsNew(input, next) : next(input)),
      },
    ],
    internals: [
      {
        dispose: (input, next) => (internals ? internals.dispose(input, next) : next(input)),
      },
    ],
  };
};
