/**
 * Temporal's OpenTelemetry interceptors (@temporalio/interceptors-opentelemetry), wired so that
 * they cost nothing while tracing is off: each wrapper asks activeTracing() per call and, off,
 * hands straight on. On, a workflow start carries the caller's span in its headers; the workflow
 * (workflows/tracing-interceptors.ts) runs inside it and passes it to every activity it schedules,
 * on the worker's queue or a gateway's, so a call's spans share one trace.
 */
import { context, trace } from '@opentelemetry/api';
import type { Next, WorkflowClientInterceptor } from '@temporalio/client';
import type { Context as ActivityContext } from '@temporalio/activity';
import type { ActivityInterceptors, InjectedSinks } from '@temporalio/worker';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  makeWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry/lib/worker';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import { activeTracing } from './tracing';

/** The workflow interceptor module every workflow bundle includes (a no-op for untraced starts). */
export const WORKFLOW_TRACING_MODULE = require.resolve('../../../workflows/tracing-interceptors');

type Method = 'start' | 'startWithDetails' | 'signal' | 'signalWithStart' | 'startUpdateWithStart';
type Input<K extends Method> = Parameters<NonNullable<WorkflowClientInterceptor[K]>>[0];

/**
 * The client interceptor, consulted only while tracing runs. Starts are traced always (a call, an
 * agent test run, a campaign: each its own trace); signals only from inside a trace (the gateway's
 * reports while a call's activity runs), since a signal span alone would be a trace of one span.
 */
class ClientTracing implements WorkflowClientInterceptor {
  private otel: OpenTelemetryWorkflowClientInterceptor | undefined;
  private traced(signal = false): OpenTelemetryWorkflowClientInterceptor | undefined {
    if (!activeTracing()) return undefined;
    if (signal && !trace.getSpanContext(context.active())) return undefined;
    return (this.otel ??= new OpenTelemetryWorkflowClientInterceptor());
  }
  start(input: Input<'start'>, next: Next<WorkflowClientInterceptor, 'start'>) {
    return this.traced()?.start(input, next) ?? next(input);
  }
  startWithDetails(input: Input<'startWithDetails'>, next: Next<WorkflowClientInterceptor, 'startWithDetails'>) {
    return this.traced()?.startWithDetails(input, next) ?? next(input);
  }
  signal(input: Input<'signal'>, next: Next<WorkflowClientInterceptor, 'signal'>) {
    return this.traced(true)?.signal(input, next) ?? next(input);
  }
  signalWithStart(input: Input<'signalWithStart'>, next: Next<WorkflowClientInterceptor, 'signalWithStart'>) {
    return this.traced(true)?.signalWithStart(input, next) ?? next(input);
  }
  startUpdateWithStart(input: Input<'startUpdateWithStart'>, next: Next<WorkflowClientInterceptor, 'startUpdateWithStart'>) {
    return this.traced()?.startUpdateWithStart(input, next) ?? next(input);
  }
}

/** For `new Client({ interceptors: { workflow: … } })`. */
export function clientTracingInterceptors(): WorkflowClientInterceptor[] {
  return [new ClientTracing()];
}

/** For a Worker's `interceptors.activity`: a span per activity, parented on the workflow's. */
export function activityTracingInterceptors(): Array<(ctx: ActivityContext) => ActivityInterceptors> {
  return [
    (ctx) => {
      if (!activeTracing()) return {};
      return { inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) };
    },
  ];
}

/**
 * The sink the workflow interceptors export their spans through (spans are made inside the
 * workflow sandbox and handed out). Registered always, so a traced call replayed or resumed on a
 * worker finds it; it drops spans while this process does not trace.
 */
export function workflowTracingSinks(): InjectedSinks<OpenTelemetrySinks> {
  let exporter: ReturnType<typeof makeWorkflowExporter> | undefined;
  let exporterOf: unknown;
  return {
    exporter: {
      export: {
        fn: (info, spans) => {
          const tracing = activeTracing();
          if (!tracing) return;
          if (exporterOf !== tracing) {
            exporter = makeWorkflowExporter(tracing.spanProcessor, tracing.resource);
            exporterOf = tracing;
          }
          exporter!.export.fn(info, spans);
        },
        // Spans of a replayed history were exported when they first ran.
        callDuringReplay: false,
      },
    },
  };
}
