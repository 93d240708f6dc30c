/** Plivo's stored settings and the environment variables it reads. */
import { optionalUrl } from '../../../shared/config-fields';
import { setting } from '../settings';

export const PLIVO_SETTINGS = {
  auth_id: setting.text('Auth ID', 'Console → Overview: the account Auth ID (MA… or SA…)'),
  auth_token: setting.secret('Auth token', 'Console → Overview; signs every callback (X-Plivo-Signature-V3)'),
  phone_number: setting.phone('Phone number', 'A Plivo number of the account (E.164): the caller ID of outbound calls'),
  max_concurrent: setting.maxConcurrent(),
};

export const PLIVO_CONFIG = {
  // Replaces https://api.plivo.com (the fake Plivo in tests and local runs).
  PLIVO_API_BASE_URL: optionalUrl(),
};
