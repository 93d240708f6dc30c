/**
 * A real OpenTelemetry Collector for the tracing tests: tools/otelcol/ (upstream collector core,
 * OTLP receiver, contrib file exporter), built by `bash .ci/otelcol.sh` into ~/go/bin/vap-otelcol
 * (VAP_OTELCOL_PATH overrides). It listens for OTLP/HTTP on a free 127.0.0.1 port and writes every
 * batch it receives to a JSON-lines file, read back by `spans()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getFreePort } from '../../src/temporal/dev-server';

export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  service: string;
  attributes: Record<string, unknown>;
  events: string[];
}

export interface RunningCollector {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  /** Every span received so far. */
  spans(): CollectedSpan[];
  stop(): Promise<void>;
}

export const COLLECTOR_PATH = process.env.VAP_OTELCOL_PATH ?? path.join(os.homedir(), 'go', 'bin', 'vap-otelcol');

export async function startCollector(): Promise<RunningCollector> {
  if (!fs.existsSync(COLLECTOR_PATH)) {
    throw new Error(
      `The OpenTelemetry Collector for the tracing test is missing at ${COLLECTOR_PATH}. Build it with \`bash .ci/otelcol.sh\` ` +
        '(Go from /usr/local/go; tools/otelcol/; .ci/run does this), or point VAP_OTELCOL_PATH at a build of it.',
    );
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-otelcol-'));
  const port = await getFreePort();
  const out = path.join(dir, 'spans.jsonl');
  const config = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    config,
    [
      'receivers:',
      '  otlp:',
      '    protocols:',
      '      http:',
      `        endpoint: 127.0.0.1:${port}`,
      'exporters:',
      '  file:',
      `    path: ${out}`,
      '    flush_interval: 100ms',
      'service:',
      '  telemetry:',
      '    metrics:',
      '      level: none',
      '    logs:',
      '      level: warn',
      '  pipelines:',
      '    traces:',
      '      receivers: [otlp]',
      '      exporters: [file]',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(COLLECTOR_PATH, ['--config', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the collector exited (${child.exitCode}): ${stderr}`);
    const up = await fetch(`${endpoint}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error(`the collector did not listen on ${endpoint}: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint,
    spans: () => readSpans(out),
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

type AnyValue = { stringValue?: string; intValue?: string; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

function value(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  return v.doubleValue;
}

function readSpans(file: string): CollectedSpan[] {
  if (!fs.existsSync(file)) return [];
  const spans: CollectedSpan[] = [];
  // Whole lines only: the collector writes a batch in pieces, and one read once caught the
  // first 4 KB of a line (the element after the last newline is that partial line, or empty).
  for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(0, -1)) {
    if (!line.trim()) continue;
    for (const rs of JSON.parse(line).resourceSpans ?? []) {
      const service = ((rs.resource?.attributes ?? []) as KeyValue[]).find((a) => a.key === 'service.name');
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            service: service ? String(value(service.value)) : '',
            attributes: Object.fromEntries(((s.attributes ?? []) as KeyValue[]).map((a) => [a.key, value(a.value)])),
            events: ((s.events ?? []) as Array<{ name: string }>).map((e) => e.name),
          });
        }
      }
    }
  }
  return spans;
}
