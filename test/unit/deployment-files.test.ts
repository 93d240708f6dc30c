import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config';
import { DRAIN_OVERRUN_MAX_SECS } from '../../src/gateway/admission/drain';

const root = path.join(__dirname, '..', '..');

interface Instruction {
  op: string;
  args: string;
}

/** A Dockerfile's stages: instructions with continuation lines joined, comments dropped. */
function dockerStages(text: string): { args: Record<string, string>; stages: Array<{ from: string; name?: string; steps: Instruction[] }> } {
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const args: Record<string, string> = {};
  const stages: Array<{ from: string; name?: string; steps: Instruction[] }> = [];
  for (const line of lines) {
    const [, op, rest] = /^(\S+)\s+(.*)$/.exec(line)!;
    if (op.toUpperCase() === 'FROM') {
      const [, from, name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest)!;
      stages.push({ from, name, steps: [] });
    } else if (stages.length === 0 && op.toUpperCase() === 'ARG') {
      const [key, value] = rest.split('=');
      args[key] = value;
    } else {
      stages[stages.length - 1].steps.push({ op: op.toUpperCase(), args: rest });
    }
  }
  return { args, stages };
}

/** `node src/api/main.js` → the TypeScript source it is compiled from must exist. */
function expectCompiledEntry(command: string[]): void {
  expect(command[0]).toBe('node');
  expect(command[1]).toMatch(/^(src|workflows|activities)\/.+\.js$/);
  expect(fs.existsSync(path.join(root, command[1].replace(/\.js$/, '.ts')))).toBe(true);
}

describe('deployment files', () => {
  it('docker-compose.yml parses and defines the whole production stack', () => {
    const compose = parse(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true });
    const services = Object.keys(compose.services);
    expect(services).toEqual(
      expect.arrayContaining(['postgresql', 'temporal', 'temporal-ui', 'api', 'worker', 'gateway']),
    );
    expect(compose.services.temporal.environment.DB).toBe('postgres12');
    // The media gateway outweighs the other services when the CPUs are contended.
    expect(compose.services.gateway.cpu_shares).toBeGreaterThan(1024);
    expect(compose.services.api.environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
    // The image holds compiled JavaScript: every role's command names a file it has.
    for (const role of ['api', 'worker', 'gateway']) expectCompiledEntry(compose.services[role].command);
    // Temporal's gRPC frontend and Web UI have no login of their own: reachable from this host only.
    expect(compose.services.temporal.ports).toEqual(['127.0.0.1:7233:7233']);
    expect(compose.services['temporal-ui'].ports).toEqual(['127.0.0.1:8080:8080']);
    // `docker compose stop` waits out a gateway's drain, and the others' in-flight work.
    const secs = (duration: string) => Number(/^(\d+)s$/.exec(duration)?.[1]);
    const drainSecs = Number(compose.services.gateway.environment.GATEWAY_DRAIN_SECS);
    expect(drainSecs).toBeGreaterThanOrEqual(1800);
    expect(secs(compose.services.gateway.stop_grace_period)).toBeGreaterThanOrEqual(drainSecs + DRAIN_OVERRUN_MAX_SECS);
    const { SHUTDOWN_GRACE_SECS } = loadConfig({});
    for (const role of ['api', 'worker']) expect(secs(compose.services[role].stop_grace_period)).toBeGreaterThan(SHUTDOWN_GRACE_SECS);
    // A worker of a replaced version stops once its pinned calls have ended (docs/versioning.md).
    const worker = compose.services.worker.environment;
    expect(worker.WORKER_SET_CURRENT).toBe('always');
    expect(secs(compose.services.worker.stop_grace_period)).toBeGreaterThan(Number(worker.WORKER_DRAIN_SECS) + SHUTDOWN_GRACE_SECS);
    expect(compose.services.worker.restart ?? 'no').toBe('no');
    const dyn = compose.services.temporal.environment.DYNAMIC_CONFIG_FILE_PATH as string;
    expect(fs.existsSync(path.join(root, 'temporal-config', 'dynamicconfig', path.basename(dyn)))).toBe(true);
  });

  it('compose scales gateways behind a media proxy that balances /media/ WebSockets', () => {
    const compose = parse(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true });
    // `--scale gateway=2` works only if no replica binds a fixed host port.
    expect(compose.services.gateway.ports).toBeUndefined();
    const proxy = compose.services['media-proxy'];
    expect(proxy.ports).toEqual(['8001:8001']);
    const mount = (proxy.volumes as string[]).find((v) => v.includes('media-gateways.conf')) ?? '';
    const conf = fs.readFileSync(path.join(root, mount.split(':')[0]), 'utf8');
    // Every replica by Docker DNS, followed as it scales; upgrades forwarded; a 503 (draining) retried elsewhere.
    expect(conf).toMatch(/server gateway:8001 resolve;/);
    expect(conf).toMatch(/location \/media\/ \{[^}]*proxy_pass http:\/\/gateways;/s);
    expect(conf).toMatch(/proxy_set_header Upgrade \$http_upgrade;/);
    expect(conf).toMatch(/proxy_next_upstream error timeout http_503;/);
  });

  it('the Temporal dynamic config parses in the key/value/constraints form', () => {
    const dyn = parse(fs.readFileSync(path.join(root, 'temporal-config/dynamicconfig/production.yaml'), 'utf8'));
    for (const entries of Object.values(dyn) as Array<Array<{ value: unknown; constraints: object }>>) {
      expect(entries[0]).toHaveProperty('value');
      expect(entries[0]).toHaveProperty('constraints');
    }
  });

  it('the Dockerfile builds a small, non-root production image on a maintained Node LTS', () => {
    const { args, stages } = dockerStages(fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
    const image = (from: string) => from.replace(/^\$\{(\w+)\}$/, (_, name: string) => args[name]);
    for (const stage of stages) {
      // Node 20 reached its end of life in April 2026; even majors from 22 on are LTS lines.
      const major = Number(/^node:(\d+)-[a-z]+-slim$/.exec(image(stage.from))?.[1]);
      expect(major).toBeGreaterThanOrEqual(22);
      expect(major % 2).toBe(0);
    }
    const runs = (stage: (typeof stages)[number]) => stage.steps.filter((s) => s.op === 'RUN').map((s) => s.args);
    const final = stages[stages.length - 1];
    const build = stages.find((s) => runs(s).some((r) => r.includes('scripts/build-web.js')))!;
    expect(build).toBeDefined();
    expect(runs(build).join(' ')).toContain('tsc -p tsconfig.build.json');
    // The final stage installs nothing: its node_modules come from a stage that left dev dependencies out.
    expect(runs(final).join(' ')).not.toMatch(/npm (ci|install)/);
    const modules = final.steps.find((s) => s.op === 'COPY' && /\snode_modules\s*$/.test(s.args))!;
    const depsStage = stages.find((s) => s.name === /--from=(\S+)/.exec(modules.args)?.[1])!;
    expect(runs(depsStage).join(' ')).toMatch(/npm ci [^&]*--omit=dev/);
    // The shipped modules carry the project's dependency patches (patches/, applied after npm ci).
    expect(depsStage.steps.some((s) => s.op === 'COPY' && /^patches\s+patches\/?$/.test(s.args))).toBe(true);
    expect(runs(depsStage).join(' ')).toMatch(/npm ci [^&]*&& npx --no-install patch-package --error-on-fail/);
    expect(final.steps.find((s) => s.op === 'COPY' && s.args.includes(`--from=${build.name}`) && s.args.includes('web/dist'))).toBeDefined();
    // A numeric, non-root user, so Kubernetes' runAsNonRoot can verify it.
    const user = final.steps.filter((s) => s.op === 'USER').pop()?.args ?? '0';
    expect(user).toMatch(/^[1-9]\d*(:[1-9]\d*)?$/);
    expectCompiledEntry(JSON.parse(final.steps.find((s) => s.op === 'CMD')!.args));
    // The compiled code keeps the layout of the sources (the API finds web/dist relative to itself).
    const tsBuild = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8'));
    expect(tsBuild.include).toEqual(expect.arrayContaining(['src', 'workflows', 'activities']));
    expect(final.steps.some((s) => s.op === 'COPY' && /--from=\S+\s+\/app\/dist\s+\.\/?$/.test(s.args))).toBe(true);
  });

  it('.dockerignore keeps secrets, local data and installed modules out of the build context', () => {
    const ignored = fs.readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    expect(ignored).toEqual(expect.arrayContaining(['.git', '.env', '**/node_modules', 'data', 'web/dist']));
    // What the build reads must not be ignored.
    for (const needed of ['src', 'web', 'scripts', 'workflows', 'activities', 'patches', 'package-lock.json', 'tsconfig.build.json']) {
      expect(ignored).not.toContain(needed);
    }
  });
});
