/**
 * JSON schemas for kubeconform, made offline: the Kubernetes kinds from the OpenAPI document that
 * the k8s.io/kubernetes Go module ships (api/openapi-spec/swagger.json), the ServiceMonitor from
 * prometheus-operator's API types through controller-gen. Both come from the Go module proxy, the
 * one place besides npm that CI reaches. Written in kubeconform's layout,
 * `<dir>/<k8s version>-standalone-strict/<kind>[-<group>]-<version>.json`, and "strict" as
 * kubectl validates: an object with declared properties accepts no others.
 *
 *   npx tsx scripts/kube-schemas.ts [--out DIR] [--force]
 *
 * Versions are in .ci/chart-tools.env; `.ci/chart-tools.sh` runs this, which does nothing when the
 * schemas of these versions are there already (unless --force). Needs go and controller-gen.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

type Schema = Record<string, any>;

const ROOT = path.join(__dirname, '..');

/** KEY=value lines of .ci/chart-tools.env (the one place the tool and schema versions live). */
export function chartToolVersions(file = path.join(ROOT, '.ci', 'chart-tools.env')): Record<string, string> {
  const entries = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => /^([A-Z_]+)=(\S+)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null);
  return Object.fromEntries(entries.map((m) => [m[1], m[2]]));
}

/** Where the schemas of these versions live: KUBE_SCHEMAS_DIR, else a cache directory. */
export function schemaRoot(versions = chartToolVersions(), env = process.env): string {
  const base = env.KUBE_SCHEMAS_DIR ?? path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'voice-agent-platform', 'kube-schemas');
  return path.join(base, `${versions.KUBERNETES_VERSION}+prometheus-operator-${versions.PROMETHEUS_OPERATOR_VERSION}`);
}

/** kubeconform's file name: deployment-apps-v1, service-v1, servicemonitor-monitoring-v1. */
export function schemaFileName(kind: string, group: string, version: string): string {
  const groupPart = group ? `-${group.split('.')[0]}` : '';
  return `${kind}${groupPart}-${version}.json`.toLowerCase();
}

/**
 * Strict (additionalProperties: false wherever properties are declared, unless the schema keeps
 * unknown fields), descriptions dropped, int-or-string as either, and quantities as strings or
 * numbers (the API server takes `cpu: 1`).
 */
export function strictSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strictSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node as Schema)) {
    if (key === 'description') continue;
    out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as Schema).map(([k, v]) => [k, strictSchema(v)])) : strictSchema(value);
  }
  if (out.format === 'int-or-string' || out['x-kubernetes-int-or-string'] === true) {
    return { oneOf: [{ type: 'string' }, { type: 'integer' }] };
  }
  if (out.properties && out.additionalProperties === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true) {
    out.additionalProperties = false;
  }
  return out;
}

const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/**
 * One kind's standalone schema from the swagger document: its definition at the top and every
 * definition it reaches under `definitions` (local references only; recursive ones stay refs).
 */
export function kindSchema(swagger: Schema, definitionName: string): Schema {
  const definitions: Record<string, Schema> = swagger.definitions;
  const reached = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    const ref = (node as Schema).$ref;
    if (typeof ref === 'string') {
      const name = ref.replace('#/definitions/', '');
      if (!reached.has(name)) {
        reached.add(name);
        visit(definitions[name]);
      }
    }
    Object.values(node as Schema).forEach(visit);
  };
  const root = definitions[definitionName];
  visit(root);
  const local: Record<string, unknown> = {};
  for (const name of [...reached].sort()) {
    local[name] = name === QUANTITY ? { oneOf: [{ type: 'string' }, { type: 'number' }] } : strictSchema(definitions[name]);
  }
  return { ...(strictSchema(root) as Schema), definitions: local };
}

/** The kinds a swagger document defines: [definition name, kind, group, version]. */
export function swaggerKinds(swagger: Schema): Array<{ definition: string; kind: string; group: string; version: string }> {
  return Object.entries(swagger.definitions as Record<string, Schema>).flatMap(([definition, schema]) => {
    const gvks = (schema['x-kubernetes-group-version-kind'] ?? []) as Array<{ group: string; kind: string; version: string }>;
    // A definition used by several kinds (DeleteOptions, WatchEvent) is nobody's resource.
    return gvks.length === 1 && schema.properties?.apiVersion ? [{ definition, ...gvks[0] }] : [];
  });
}

/** CustomResourceDefinition documents → one strict schema per served version. */
export function crdSchemas(yamlText: string): Array<{ file: string; schema: Schema }> {
  return parseAllDocuments(yamlText)
    .map((doc) => doc.toJS() as Schema)
    .filter((crd) => crd?.kind === 'CustomResourceDefinition')
    .flatMap((crd) =>
      (crd.spec.versions as Schema[])
        .filter((v) => v.schema?.openAPIV3Schema)
        .map((v) => ({ file: schemaFileName(crd.spec.names.kind, crd.spec.group, v.name), schema: strictSchema(v.schema.openAPIV3Schema) as Schema })),
    );
}

function goModuleDir(module: string, version: string, cwd?: string): string {
  const out = execFileSync('go', ['mod', 'download', '-json', `${module}@${version}`], { cwd, encoding: 'utf8' });
  return JSON.parse(out).Dir as string;
}

/** The prometheus-operator CRDs, generated from its API module the way its Makefile does. */
function prometheusOperatorCrds(version: string): string[] {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'promop-crds-'));
  const pkg = 'github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring';
  try {
    fs.writeFileSync(path.join(work, 'go.mod'), 'module crdgen\n\ngo 1.26.0\n');
    fs.writeFileSync(path.join(work, 'crdgen.go'), `package crdgen\n\nimport _ "${pkg}/v1"\n`);
    execFileSync('go', ['get', `${pkg}@${version}`], { cwd: work, stdio: 'inherit' });
    execFileSync('go', ['mod', 'tidy'], { cwd: work, stdio: 'inherit' });
    execFileSync('controller-gen', ['crd:crdVersions=v1', `paths=${pkg}/v1`, `output:crd:dir=${path.join(work, 'crds')}`], { cwd: work, stdio: 'inherit' });
    const dir = path.join(work, 'crds');
    return fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f), 'utf8'));
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

function main(): void {
  const args = process.argv.slice(2);
  const versions = chartToolVersions();
  const outArg = args.indexOf('--out');
  const out = path.join(outArg >= 0 ? args[outArg + 1] : schemaRoot(versions), `${versions.KUBERNETES_VERSION}-standalone-strict`);
  const done = path.join(out, '.complete');
  if (fs.existsSync(done) && !args.includes('--force')) return void console.log(`Schemas up to date in ${out}`);
  fs.mkdirSync(out, { recursive: true });

  const k8s = goModuleDir('k8s.io/kubernetes', versions.KUBERNETES_VERSION);
  const swagger = JSON.parse(fs.readFileSync(path.join(k8s, 'api', 'openapi-spec', 'swagger.json'), 'utf8'));
  let written = 0;
  for (const { definition, kind, group, version } of swaggerKinds(swagger)) {
    fs.writeFileSync(path.join(out, schemaFileName(kind, group, version)), JSON.stringify(kindSchema(swagger, definition)));
    written++;
  }
  for (const crd of prometheusOperatorCrds(versions.PROMETHEUS_OPERATOR_VERSION)) {
    for (const { file, schema } of crdSchemas(crd)) {
      fs.writeFileSync(path.join(out, file), JSON.stringify(schema));
      written++;
    }
  }
  fs.writeFileSync(done, `${written}\n`);
  console.log(`${written} schemas in ${out}`);
}

if (require.main === module) main();
