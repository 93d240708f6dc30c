/**
 * Tracing is off unless an OTLP endpoint is configured (docs/tracing.md), and off it is free: the
 * SDK is never loaded, no exporter or processor exists, every span is the API's non-recording
 * stub, and the Temporal interceptors hand calls straight on without adding headers.
 */
import { trace } from '@opentelemetry/api';
import { ConfigError, loadConfig } from '../../src/config';
import { startCallTrace } from '../../src/observability/tracing/call-trace';
import { inSpan } from '../../src/observability/tracing/spans';
import { activityTracingInterceptors, clientTracingInterceptors } from '../../src/observability/tracing/temporal-tracing';
import { activeTracing, startTracing, tracer } from '../../src/observability/tracing/tracing';
import { exportTarget } from '../../src/observability/tracing/tracing-settings';

// Loading any of these while tracing is off fails the test.
jest.mock('@opentelemetry/sdk-trace-node', () => {
  throw new Error('the tracing SDK was loaded with tracing off');
});
jest.mock('@opentelemetry/exporter-trace-otlp-proto', () => {
  throw new Error('the OTLP exporter was loaded with tracing off');
});

describe('tracing off (no OTLP endpoint)', () => {
  const config = loadConfig({});

  it('starts nothing: no SDK, no exporter, the no-op tracer', () => {
    expect(startTracing(config)).toBeNull();
    expect(activeTracing()).toBeNull();
    const span = tracer().startSpan('anything');
    expect(span.isRecording()).toBe(false);
    expect(trace.isSpanContextValid(span.spanContext())).toBe(false);
    span.end();
  });

  it('puts no trace id on a call and runs its start directly', async () => {
    const callTrace = startCallTrace('c1', { 'agent.name': 'a' });
    expect(callTrace.traceId).toBeNull();
    await expect(callTrace.run(async () => 42)).resolves.toBe(42);
  });

  it('runs traced work directly, never computing its attributes', async () => {
    const attributes = jest.fn(() => ({}));
    await expect(inSpan('tool.http', attributes, async () => 'ok')).resolves.toBe('ok');
    expect(attributes).not.toHaveBeenCalled();
  });

  it('leaves workflow starts without a trace header and activities without interceptors', async () => {
    const [client] = clientTracingInterceptors();
    const input = { workflowType: 'callWorkflow', headers: {}, options: {} } as never;
    const next = jest.fn(async (i: unknown) => i);
    await expect(client!.start!(input, next as never)).resolves.toBe(input);
    expect(next).toHaveBeenCalledWith(input);
    expect(activityTracingInterceptors()[0]!({} as never)).toEqual({});
  });

  it('OTEL_SDK_DISABLED=true keeps it off even with an endpoint', () => {
    expect(exportTarget({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBeNull();
  });
});

describe('the OpenTelemetry settings', () => {
  it('reads the standard variables', () => {
    expect(exportTarget({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({
      url: 'http://collector:4318/v1/traces',
      headers: {},
      serviceName: 'voice-agent-platform',
      resourceAttributes: {},
    });
    expect(
      exportTarget({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://api.honeycomb.io/v1/traces',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=abc%3D,x-other=1',
        OTEL_SERVICE_NAME: 'voice',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=ignored',
      }),
    ).toEqual({
      url: 'https://api.honeycomb.io/v1/traces',
      headers: { 'x-honeycomb-team': 'abc=', 'x-other': '1' },
      serviceName: 'voice',
      resourceAttributes: { 'deployment.environment': 'prod', 'service.name': 'ignored' },
    });
  });

  it('are validated at start-up like the rest of the configuration', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(ConfigError);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL: only http\/protobuf/);
    expect(() => loadConfig({ OTEL_RESOURCE_ATTRIBUTES: 'novalue' })).toThrow(/OTEL_RESOURCE_ATTRIBUTES/);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://127.0.0.1:4318');
  });
});
