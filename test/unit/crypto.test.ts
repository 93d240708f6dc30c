import crypto from 'node:crypto';
import { hashPassword, mask, SecretBox, verifyPassword } from '../../src/security/crypto';
import { redact } from '../../src/shared/logger';

describe('security primitives', () => {
  it('hashes passwords with salted scrypt and verifies them', async () => {
    const a = await hashPassword('s3cret-pass');
    const b = await hashPassword('s3cret-pass');
    expect(a).not.toBe(b);
    expect(await verifyPassword('s3cret-pass', a)).toBe(true);
    expect(await verifyPassword('wrong', a)).toBe(false);
  });

  it('encrypts secrets with authenticated encryption', () => {
    const box = new SecretBox(crypto.randomBytes(32).toString('base64'));
    const sealed = box.encrypt('auth-token-123');
    expect(sealed).not.toContain('auth-token-123');
    expect(box.decrypt(sealed)).toBe('auth-token-123');
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'B' : 'A') + '=';
    expect(() => box.decrypt(tampered)).toThrow();
    const other = new SecretBox(crypto.randomBytes(32).toString('base64'));
    expect(() => other.decrypt(sealed)).toThrow();
  });

  it('masks secrets and redacts secret-looking log fields', () => {
    expect(mask('abcdef123456')).toBe('****3456');
    expect(redact({ password: 'x', nested: { auth_token: 'y', name: 'ok' }, headers: { Authorization: 'Bearer z' } })).toEqual({
      password: '[redacted]',
      nested: { auth_token: '[redacted]', name: 'ok' },
      headers: { Authorization: '[redacted]' },
    });
  });
});
