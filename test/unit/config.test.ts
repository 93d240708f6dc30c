import { ConfigError, loadConfig } from '../../src/config';
import { buildIdOf, deploymentName } from '../../src/worker/versioning';

describe('configuration', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      PORT: 8000,
      GATEWAY_PORT: 8001,
      TEMPORAL_NAMESPACE: 'default',
      DATA_DIR: './data',
      ADMIN_EMAIL: 'admin@example.com',
      PUBLIC_BASE_URL: 'http://localhost:8000',
    });
    expect(c.TEMPORAL_ADDRESS).toBeUndefined();
    expect(c.dataDir).toMatch(/\/data$/);
  });

  it('rejects bad values naming every offending variable', () => {
    expect(() => loadConfig({ PORT: 'eighty', DATABASE_URL: 'nope', JWT_SECRET: 'short' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'nope', JWT_SECRET: 'short' });
    } catch (err) {
      const msg = (err as Error).message;
      expect(msg).toContain('PORT');
      expect(msg).toContain('DATABASE_URL');
      expect(msg).toContain('JWT_SECRET: must be at least 16 characters');
    }
  });

  it('takes a CPU priority (NICE) from -20 to 19, default 0', () => {
    expect(loadConfig({}).NICE).toBe(0);
    expect(loadConfig({ NICE: '10' }).NICE).toBe(10);
    expect(() => loadConfig({ NICE: '30' })).toThrow(/NICE/);
    expect(() => loadConfig({ NICE: 'low' })).toThrow(/NICE/);
  });

  it('spares GATEWAY_MIN_CALLS calls from the machine\'s CPU (default 4), validated at start-up', () => {
    expect(loadConfig({}).GATEWAY_MIN_CALLS).toBe(4);
    expect(loadConfig({ GATEWAY_MIN_CALLS: '0' }).GATEWAY_MIN_CALLS).toBe(0);
    expect(() => loadConfig({ GATEWAY_MIN_CALLS: '-1' })).toThrow(/GATEWAY_MIN_CALLS/);
    expect(() => loadConfig({ GATEWAY_MIN_CALLS: '2.5' })).toThrow(/GATEWAY_MIN_CALLS/);
    expect(loadConfig({}).GATEWAY_CGROUP_DIR).toBe('');
  });

  it('runs the VAD on its own thread unless GATEWAY_VAD_THREAD=off', () => {
    expect(loadConfig({}).GATEWAY_VAD_THREAD).toBe('on');
    expect(loadConfig({ GATEWAY_VAD_THREAD: 'off' }).GATEWAY_VAD_THREAD).toBe('off');
    expect(() => loadConfig({ GATEWAY_VAD_THREAD: 'yes' })).toThrow(/GATEWAY_VAD_THREAD/);
  });

  it('names the worker version: BUILD_ID, else the package version and a hash of the workflow code', () => {
    expect(buildIdOf(loadConfig({ BUILD_ID: 'a1b2c3d' }), 'code')).toBe('a1b2c3d');
    // An empty BUILD_ID (the Dockerfile's default) counts as unset.
    const hashed = buildIdOf(loadConfig({ BUILD_ID: '' }), 'export const a = 1;');
    expect(hashed).toMatch(/^\d+\.\d+\.\d+-[0-9a-f]{12}$/);
    expect(buildIdOf(loadConfig({}), 'export const a = 1;')).toBe(hashed);
    expect(buildIdOf(loadConfig({}), 'export const a = 2;')).not.toBe(hashed);
    expect(() => loadConfig({ BUILD_ID: 'has space' })).toThrow(/BUILD_ID/);
    expect(deploymentName(loadConfig({}))).toBe('calls');
    expect(deploymentName(loadConfig({ WORKER_DEPLOYMENT_NAME: 'voice-workers' }))).toBe('voice-workers');
    // A deployment name cannot hold a dot: a task queue with one needs a name of its own.
    expect(() => loadConfig({ TEMPORAL_TASK_QUEUE: 'calls.eu' })).toThrow(/WORKER_DEPLOYMENT_NAME/);
    expect(() => loadConfig({ WORKER_DEPLOYMENT_NAME: 'a.b' })).toThrow(/WORKER_DEPLOYMENT_NAME/);
    expect(loadConfig({ WORKER_SET_CURRENT: 'never' }).WORKER_SET_CURRENT).toBe('never');
    expect(() => loadConfig({ WORKER_SET_CURRENT: 'sometimes' })).toThrow(/WORKER_SET_CURRENT/);
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', TEMPORAL_ADDRESS: ' ' }).DATABASE_URL).toBeUndefined();
  });
});
