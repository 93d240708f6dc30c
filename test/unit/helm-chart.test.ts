/**
 * The Kubernetes chart (deploy/helm/voice-agent-platform) as CI checks it: `helm lint --strict`,
 * `helm template … | kubeconform -strict` against offline Kubernetes and ServiceMonitor schemas,
 * for the default values and the production example, and what the rendered manifests promise an
 * operator: drains are never cut short, probes that match the processes, media streams routed
 * to the gateways, settings the platform accepts. The tools come from `.ci/chart-tools.sh`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config';
import { DRAIN_OVERRUN_MAX_SECS } from '../../src/gateway/admission/drain';
import { chartToolVersions, schemaRoot } from '../../scripts/kube-schemas';

const root = path.join(__dirname, '..', '..');
const chart = path.join(root, 'deploy', 'helm', 'voice-agent-platform');
const production = path.join(chart, 'values-production.example.yaml');
const versions = chartToolVersions();

type Manifest = { kind: string; metadata: { name: string; annotations?: Record<string, string> }; spec?: any; data?: Record<string, string> };

function tool(name: string): string {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), path.join(os.homedir(), 'go', 'bin')];
  const found = dirs.map((d) => path.join(d, name)).find((p) => fs.existsSync(p));
  if (!found) throw new Error(`${name} not found on PATH or in ~/go/bin: run bash .ci/chart-tools.sh`);
  return found;
}

function run(name: string, args: string[], input?: string) {
  const result = spawnSync(tool(name), args, { input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

function template(...args: string[]): string {
  const { status, output } = run('helm', ['template', 'voice', chart, '--namespace', 'voice', ...args]);
  if (status !== 0) throw new Error(output);
  return output;
}

const manifests = (text: string): Manifest[] => parseAllDocuments(text).map((d) => d.toJS()).filter(Boolean);
const find = (all: Manifest[], kind: string, name: string) => all.find((m) => m.kind === kind && m.metadata.name === name)!;
const container = (all: Manifest[], role: string) => find(all, 'Deployment', `voice-voice-agent-platform-${role}`).spec.template.spec.containers[0];

function kubeconform(manifest: string) {
  const schemas = schemaRoot(versions);
  if (!fs.existsSync(path.join(schemas, `${versions.KUBERNETES_VERSION}-standalone-strict`, '.complete'))) {
    throw new Error(`no Kubernetes schemas in ${schemas}: run bash .ci/chart-tools.sh`);
  }
  const version = versions.KUBERNETES_VERSION.replace(/^v/, '');
  return run('kubeconform', ['-strict', '-summary', '-kubernetes-version', version, '-schema-location', schemas, '-'], manifest);
}

describe.each([
  ['the default values', [] as string[]],
  ['the production example', ['-f', production]],
])('the chart with %s', (_name, values) => {
  it('passes helm lint --strict', () => {
    const { status, output } = run('helm', ['lint', '--strict', chart, ...values]);
    expect(output).toContain('0 chart(s) failed');
    expect(status).toBe(0);
  });

  it('renders manifests that kubeconform -strict finds valid', () => {
    const rendered = template(...values);
    const { status, output } = kubeconform(rendered);
    const summary = /Summary: (\d+) resources? found .* Valid: (\d+), Invalid: (\d+), Errors: (\d+), Skipped: (\d+)/.exec(output);
    expect(summary).not.toBeNull();
    const [, found, valid, invalid, errors, skipped] = summary!.map(Number);
    expect({ invalid, errors, skipped }).toEqual({ invalid: 0, errors: 0, skipped: 0 });
    expect(valid).toBe(found);
    expect(found).toBe(manifests(rendered).length);
    expect(status).toBe(0);
  });

  it('never cuts a gateway drain short, and probes what each process answers', () => {
    const all = manifests(template(...values));
    const gateway = find(all, 'Deployment', 'voice-voice-agent-platform-gateway').spec;
    const drainSecs = Number(gateway.template.spec.containers[0].env.find((e: { name: string }) => e.name === 'GATEWAY_DRAIN_SECS').value);
    expect(drainSecs).toBeGreaterThanOrEqual(1800);
    // The drain, then what it may take past its deadline (the goodbyes, the final records, exiting).
    expect(gateway.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(drainSecs + DRAIN_OVERRUN_MAX_SECS);
    // Workers finish their activities and the API its requests (SHUTDOWN_GRACE_SECS) before Kubernetes kills them.
    const config = find(all, 'ConfigMap', 'voice-voice-agent-platform-config').data!;
    const { SHUTDOWN_GRACE_SECS } = loadConfig({ ...config, ...Object.fromEntries(container(all, 'api').env.map((e: { name: string; value: string }) => [e.name, e.value])) });
    const api = find(all, 'Deployment', 'voice-voice-agent-platform-api').spec.template.spec;
    const preStopSecs = Number(api.containers[0].lifecycle.preStop.exec.command[1]);
    expect(api.terminationGracePeriodSeconds).toBeGreaterThan(preStopSecs + SHUTDOWN_GRACE_SECS);
    const worker = find(all, 'Deployment', 'voice-voice-agent-platform-worker').spec;
    expect(worker.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(SHUTDOWN_GRACE_SECS + 5);
    // Worker Versioning (docs/versioning.md): a new pod makes its version current before an old
    // one is stopped, and an old one may wait out the calls pinned to it.
    const workerEnv = Object.fromEntries(container(all, 'worker').env.map((e: { name: string; value: string }) => [e.name, e.value]));
    expect(workerEnv.WORKER_SET_CURRENT).toBe('always');
    expect(worker.strategy.rollingUpdate.maxUnavailable).toBe(0);
    expect(worker.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(Number(workerEnv.WORKER_DRAIN_SECS) + SHUTDOWN_GRACE_SECS);
    // New gateways first; old ones drain after.
    expect(gateway.strategy.rollingUpdate.maxUnavailable).toBe(0);
    const gw = container(all, 'gateway');
    expect(gw.readinessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(gw.livenessProbe.httpGet).toEqual({ path: '/livez', port: 'http' });
    expect(container(all, 'worker').livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(container(all, 'api').readinessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    const ports = { api: ['PORT', 8000], worker: ['WORKER_METRICS_PORT', 8002], gateway: ['GATEWAY_PORT', 8001] } as const;
    for (const [role, [variable, port]] of Object.entries(ports)) {
      const c = container(all, role);
      expect(c.ports[0].containerPort).toBe(port);
      expect(c.env).toContainEqual({ name: variable, value: String(port) });
      // The image runs compiled JavaScript of the sources.
      expect(c.command).toEqual(['node', `src/${role}/main.js`]);
      expect(fs.existsSync(path.join(root, 'src', role, 'main.ts'))).toBe(true);
    }
    expect(find(all, 'PodDisruptionBudget', 'voice-voice-agent-platform-gateway').spec.maxUnavailable).toBe(1);
    const hpa = find(all, 'HorizontalPodAutoscaler', 'voice-voice-agent-platform-worker').spec;
    expect(hpa.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'voice-voice-agent-platform-worker' });
    expect(find(all, 'Deployment', 'voice-voice-agent-platform-worker').spec.replicas).toBeUndefined();
  });
});

describe('the chart', () => {
  it('follows a longer drain with a longer grace period', () => {
    const gateway = find(manifests(template('--set', 'gateway.drainSecs=3600')), 'Deployment', 'voice-voice-agent-platform-gateway');
    expect(gateway.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(3600);
  });

  it('gives every process, the gateway included, settings the platform accepts', () => {
    const all = manifests(template('--set', 'database.url=postgres://voice:pw@db.internal:5432/voice_agents', '--set', 'ingress.enabled=true', '--set', 'ingress.host=voice.example.com', '--set', 'ingress.tlsSecretName=tls'));
    const config = find(all, 'ConfigMap', 'voice-voice-agent-platform-config').data!;
    const secret = find(all, 'Secret', 'voice-voice-agent-platform-secrets');
    const secrets = Object.fromEntries(Object.entries(secret.data!).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
    for (const role of ['api', 'worker', 'gateway']) {
      const c = container(all, role);
      expect(c.envFrom).toEqual([{ configMapRef: { name: 'voice-voice-agent-platform-config' } }, { secretRef: { name: 'voice-voice-agent-platform-secrets' } }]);
      const env = { ...config, ...secrets, ...Object.fromEntries(c.env.map((e: { name: string; value: string }) => [e.name, e.value])) };
      const loaded = loadConfig(env);
      expect(loaded.DATABASE_URL).toBe('postgres://voice:pw@db.internal:5432/voice_agents');
      expect(loaded.ENCRYPTION_KEY).toBeDefined();
      expect(loaded.JWT_SECRET).toBeDefined();
      expect(loaded.METRICS_TOKEN).toBeDefined();
      expect(loaded.PUBLIC_BASE_URL).toBe('https://voice.example.com');
    }
    // The encryption key is 32 random bytes as the platform documents them.
    expect(Buffer.from(secrets.ENCRYPTION_KEY, 'base64')).toHaveLength(32);
    // Deleting the release must not delete the key that decrypts PostgreSQL's credentials.
    expect(secret.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
  });

  it('routes media WebSockets to the gateways and the rest to the API, with long proxy timeouts', () => {
    const all = manifests(template('-f', production));
    const ingress = find(all, 'Ingress', 'voice-voice-agent-platform');
    const paths = ingress.spec.rules[0].http.paths.map((p: any) => [p.path, p.pathType, p.backend.service.name, p.backend.service.port.name]);
    expect(paths).toEqual([
      ['/media/', 'Prefix', 'voice-voice-agent-platform-gateway', 'http'],
      ['/', 'Prefix', 'voice-voice-agent-platform-api', 'http'],
    ]);
    expect(Number(ingress.metadata.annotations!['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThanOrEqual(3600);
    // Secrets and the database URL come from Secrets managed outside the chart.
    expect(all.some((m) => m.kind === 'Secret')).toBe(false);
    expect(container(all, 'gateway').env).toContainEqual({ name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'voice-pg-app', key: 'uri' } } });
  });

  it('lets Prometheus scrape every process with the metrics token', () => {
    const all = manifests(template('-f', production));
    const monitor = find(all, 'ServiceMonitor', 'voice-voice-agent-platform');
    const servicePorts = all.filter((m) => m.kind === 'Service').flatMap((s) => s.spec.ports.map((p: { name: string }) => p.name));
    for (const endpoint of monitor.spec.endpoints) {
      expect(servicePorts).toContain(endpoint.port);
      expect(endpoint.authorization).toEqual({ type: 'Bearer', credentials: { name: 'voice-platform-secrets', key: 'METRICS_TOKEN' } });
    }
    expect(servicePorts).toEqual(expect.arrayContaining(['http', 'metrics']));
    const annotated = manifests(template());
    for (const role of ['api', 'worker', 'gateway']) {
      const pod = find(annotated, 'Deployment', `voice-voice-agent-platform-${role}`).spec.template;
      expect(pod.metadata.annotations['prometheus.io/scrape']).toBe('true');
      expect(Number(pod.metadata.annotations['prometheus.io/port'])).toBe(pod.spec.containers[0].ports[0].containerPort);
    }
  });

  it('creates the search attributes the call workflows set', () => {
    const source = fs.readFileSync(path.join(root, 'src', 'shared', 'search-attributes.ts'), 'utf8');
    const keys = [...source.matchAll(/defineSearchAttributeKey\('(\w+)', SearchAttributeType\.(\w+)\)/g)].map((m) => `${m[1]}:${m[2] === 'BOOL' ? 'Bool' : 'Keyword'}`);
    expect(keys.length).toBeGreaterThan(0);
    const job = find(manifests(template()), 'Job', 'voice-voice-agent-platform-temporal-setup');
    const script = job.spec.template.spec.containers[0].command.join(' ');
    expect(/for attr in ([\w: ]+); do/.exec(script)?.[1].split(' ').sort()).toEqual(keys.sort());
  });

  it('refuses a secret in the ConfigMap and names where it belongs', () => {
    const { status, output } = run('helm', ['template', 'voice', chart, '--set', 'config.OPENAI_API_KEY=sk-test']);
    expect(status).not.toBe(0);
    expect(output).toContain('config.OPENAI_API_KEY looks like a secret: put it under secrets.extra');
  });

  it('refuses values it does not know or of the wrong type (values.schema.json)', () => {
    const typo = run('helm', ['template', 'voice', chart, '--set', 'gatway.replicas=3']);
    expect(typo.status).not.toBe(0);
    expect(typo.output).toContain("additional properties 'gatway' not allowed");
    const drain = run('helm', ['template', 'voice', chart, '--set', 'gateway.drainSecs=half-an-hour']);
    expect(drain.status).not.toBe(0);
    expect(drain.output).toContain("'/gateway/drainSecs': got string, want integer");
    // A margin shorter than a drain's overrun would let Kubernetes kill the goodbyes.
    const margin = run('helm', ['template', 'voice', chart, '--set', `gateway.shutdownMarginSecs=${DRAIN_OVERRUN_MAX_SECS - 1}`]);
    expect(margin.status).not.toBe(0);
    expect(margin.output).toContain(`'/gateway/shutdownMarginSecs': minimum: got ${DRAIN_OVERRUN_MAX_SECS - 1}, want ${DRAIN_OVERRUN_MAX_SECS}`);
  });

  it('fails the check when a manifest breaks the Kubernetes schema', () => {
    // A guard against a check that passes everything (no schemas, a tool that reads nothing): an
    // unquoted annotation value, the classic template slip.
    const rendered = template();
    const broken = rendered.replace('prometheus.io/port: "8001"', 'prometheus.io/port: 8001');
    expect(broken).not.toBe(rendered);
    const { status, output } = kubeconform(broken);
    expect(output).toMatch(/Deployment voice-voice-agent-platform-gateway is invalid.*prometheus\.io~1port': got number, want string/);
    expect(status).not.toBe(0);
  });
});
