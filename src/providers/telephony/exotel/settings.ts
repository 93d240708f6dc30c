/** Exotel's stored settings and the environment variables it reads. */
import { z } from 'zod';
import { optionalUrl } from '../../../shared/config-fields';
import { setting } from '../settings';

export const EXOTEL_SETTINGS = {
  account_sid: setting.text('Account SID', 'Dashboard → API settings: the account SID'),
  api_key: setting.text('API key', 'Dashboard → API settings: the API key (HTTP Basic user)'),
  api_token: setting.secret('API token', 'Dashboard → API settings: the API token (HTTP Basic password)'),
  phone_number: setting.phone('Phone number', 'An ExoPhone of the account (E.164): the caller ID of outbound calls'),
  api_base: setting.url('API base', "The account's region: https://api.exotel.com (Singapore, default) or https://api.in.exotel.com (Mumbai)"),
  max_concurrent: setting.maxConcurrent(),
};

export const EXOTEL_CONFIG = {
  // Replaces the stored exotel_api_base (https://api.exotel.com by default): the fake Exotel in
  // tests and local runs. An operator setting, so it may point anywhere; the stored one may not.
  EXOTEL_API_BASE_URL: optionalUrl(),
  // Sample rate of Exotel's Voicebot streams (16-bit PCM): 8000 (PSTN) or 16000 (wideband).
  EXOTEL_SAMPLE_RATE: z.enum(['8000', '16000']).default('8000').transform(Number),
};
