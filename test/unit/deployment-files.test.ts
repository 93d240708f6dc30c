import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

const root = path.join(__dirname, '..', '..');

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
    // Temporal's gRPC frontend and Web UI have no login of their own: reachable from this host only.
    expect(compose.services.temporal.ports).toEqual(['127.0.0.1:7233:7233']);
    expect(compose.services['temporal-ui'].ports).toEqual(['127.0.0.1:8080:8080']);
    const dyn = compose.services.temporal.environment.DYNAMIC_CONFIG_FILE_PATH as string;
    expect(fs.existsSync(path.join(root, 'temporal-config', 'dynamicconfig', path.basename(dyn)))).toBe(true);
  });

  it('the Temporal dynamic config parses in the key/value/constraints form', () => {
    const dyn = parse(fs.readFileSync(path.join(root, 'temporal-config/dynamicconfig/production.yaml'), 'utf8'));
    for (const entries of Object.values(dyn) as Array<Array<{ value: unknown; constraints: object }>>) {
      expect(entries[0]).toHaveProperty('value');
      expect(entries[0]).toHaveProperty('constraints');
    }
  });
});
