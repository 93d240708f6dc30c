import { ConfigError, loadConfig } from '../../src/config';

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

  it('runs the VAD on its own thread unless GATEWAY_VAD_THREAD=off', () => {
    expect(loadConfig({}).GATEWAY_VAD_THREAD).toBe('on');
    expect(loadConfig({ GATEWAY_VAD_THREAD: 'off' }).GATEWAY_VAD_THREAD).toBe('off');
    expect(() => loadConfig({ GATEWAY_VAD_THREAD: 'yes' })).toThrow(/GATEWAY_VAD_THREAD/);
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', TEMPORAL_ADDRESS: ' ' }).DATABASE_URL).toBeUndefined();
  });
});
