/**
 * The standalone metrics listener (what `npm run worker` serves: /metrics, /healthz) and the recording functions'
 * guarantees: the access rule, the Prometheus format, bounded label values.
 */
import { startMetricsServer, type MetricsServer } from '../../src/observability/metrics-endpoint';
import { countProviderError, observeTurnLatency, renderMetrics } from '../../src/observability/metrics';

let open: MetricsServer | undefined;
afterEach(async () => {
  await open?.stop();
  open = undefined;
});

async function get(port: number, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers });
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
}

it('serves /metrics only with the bearer token when one is configured', async () => {
  open = await startMetricsServer(0, '127.0.0.1', 'worker-metrics-token-0123');
  expect((await get(open.port, '/metrics')).status).toBe(401);
  expect((await get(open.port, '/metrics', { authorization: 'Bearer nope' })).status).toBe(401);
  expect((await get(open.port, '/metrics', { authorization: 'Basic d29ya2VyLW1ldHJpY3MtdG9rZW4tMDEyMw==' })).status).toBe(401);
  const ok = await get(open.port, '/metrics', { authorization: 'Bearer worker-metrics-token-0123' });
  expect(ok.status).toBe(200);
  expect(ok.type).toMatch(/^text\/plain; version=0\.0\.4/);
  expect(ok.body).toMatch(/^# TYPE voice_provider_errors_total counter$/m);
  expect((await get(open.port, '/other', { authorization: 'Bearer worker-metrics-token-0123' })).status).toBe(404);
});

it('without a token answers local scrapes but not proxied ones', async () => {
  open = await startMetricsServer(0, '127.0.0.1', undefined);
  expect((await get(open.port, '/metrics')).status).toBe(200);
  const proxied = await get(open.port, '/metrics', { 'x-forwarded-for': '198.51.100.7' });
  expect(proxied.status).toBe(403);
  expect(JSON.parse(proxied.body)).toEqual({ detail: expect.stringContaining('METRICS_TOKEN') });
});

it('answers /healthz without a token: 200 while the worker polls, 503 when it stopped', async () => {
  let polling = true;
  open = await startMetricsServer(0, '127.0.0.1', 'worker-metrics-token-0123', () => polling);
  const up = await get(open.port, '/healthz');
  expect(up.status).toBe(200);
  expect(JSON.parse(up.body)).toEqual({ status: 'ok' });
  polling = false;
  const down = await get(open.port, '/healthz');
  expect(down.status).toBe(503);
  expect(JSON.parse(down.body)).toEqual({ status: 'down', detail: expect.stringContaining('task queue') });
  // The probe is open; the metrics still are not.
  expect((await get(open.port, '/metrics')).status).toBe(401);
});

it('keeps label values to known shapes and ignores impossible durations', async () => {
  countProviderError('stt', 'deepgram');
  countProviderError('tts', 'Call +14155550123 failed!');
  observeTurnLatency(-5);
  observeTurnLatency(Number.NaN);
  observeTurnLatency(120);
  const { body } = await renderMetrics();
  expect(body).toContain('voice_provider_errors_total{kind="stt",vendor="deepgram"} 1');
  expect(body).toContain('voice_provider_errors_total{kind="tts",vendor="other"} 1');
  expect(body).not.toContain('4155550123');
  expect(body).toContain('voice_turn_latency_seconds_count{from="speech_end"} 1');
  expect(body).toContain('voice_turn_latency_seconds_sum{from="speech_end"} 0.12');
});
