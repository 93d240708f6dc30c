/** Twilio's stored settings and the environment variables it reads. */
import { optionalUrl } from '../../../shared/config-fields';
import { setting } from '../settings';

export const TWILIO_SETTINGS = {
  account_sid: setting.text('Account SID', 'Console → Account info: starts with AC'),
  auth_token: setting.secret('Auth token', 'Console → Account info; signs every webhook (X-Twilio-Signature)'),
  phone_number: setting.phone('Phone number', 'A Twilio number of the account (E.164): the caller ID of outbound calls'),
  max_concurrent: setting.maxConcurrent(),
};

export const TWILIO_CONFIG = {
  // Replaces https://api.twilio.com (the fake Twilio in tests and local runs).
  TWILIO_API_BASE_URL: optionalUrl(),
};
