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
    // Flip one bit of the ciphertext itself (editing a base64 character can change only padding bits).
    const [version, iv, tag, data] = sealed.split(':') as [string, string, string, string];
    const bytes = Buffer.from(data, 'base64');
    bytes[0] = bytes[0]! ^ 1;
    expect(() => box.decrypt([version, iv, tag, bytes.toString('base64')].join(':'))).toThrow();
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
