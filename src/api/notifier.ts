import type { Notifier } from './context';
import type { Logger } from '../shared/logger';

/**
 * Development notifier: writes the reset token to the server log so a single-machine install works
 * without mail. In production (NODE_ENV=production) the token is never logged; plug in a mailer.
 */
export function logNotifier(log: Logger, publicBaseUrl: string): Notifier {
  return {
    async sendPasswordReset(email, token) {
      if (process.env.NODE_ENV === 'production') {
        log.warn('password reset requested but no mail notifier is configured', { email });
        return;
      }
      log.info(`password reset for ${email}: POST ${publicBaseUrl}/api/auth/password-reset/confirm with token ${token}`);
    },
  };
}
