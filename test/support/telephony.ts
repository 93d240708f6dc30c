import type { Harness } from './harness';

/** Stores Twilio settings through the API, pointing Twilio's callbacks at the harness's API. */
export async function configureTwilio(
  h: Harness,
  twilio: { accountSid: string; authToken: string; phoneNumber: string },
  fields: Record<string, unknown> = {},
) {
  const res = await h.request('PUT', '/api/settings/telephony', {
    body: {
      provider: 'twilio',
      public_base_url: h.api.url,
      twilio_account_sid: twilio.accountSid,
      twilio_auth_token: twilio.authToken,
      twilio_phone_number: twilio.phoneNumber,
      twilio_max_concurrent: 10,
      ...fields,
    },
  });
  if (res.status !== 200) throw new Error(`PUT /api/settings/telephony → ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

/** Stores Plivo settings through the API, pointing Plivo's callbacks at the harness's API. */
export async function configurePlivo(
  h: Harness,
  plivo: { authId: string; authToken: string; phoneNumber: string },
  fields: Record<string, unknown> = {},
) {
  const res = await h.request('PUT', '/api/settings/telephony', {
    body: {
      provider: 'plivo',
      public_base_url: h.api.url,
      plivo_auth_id: plivo.authId,
      plivo_auth_token: plivo.authToken,
      plivo_phone_number: plivo.phoneNumber,
      plivo_max_concurrent: 10,
      ...fields,
    },
  });
  if (res.status !== 200) throw new Error(`PUT /api/settings/telephony → ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

/** Stores Exotel settings through the API, pointing Exotel's callbacks at the harness's API. */
export async function configureExotel(
  h: Harness,
  exotel: { accountSid: string; apiKey: string; apiToken: string; phoneNumber: string },
  fields: Record<string, unknown> = {},
) {
  const res = await h.request('PUT', '/api/settings/telephony', {
    body: {
      provider: 'exotel',
      public_base_url: h.api.url,
      exotel_account_sid: exotel.accountSid,
      exotel_api_key: exotel.apiKey,
      exotel_api_token: exotel.apiToken,
      exotel_phone_number: exotel.phoneNumber,
      exotel_max_concurrent: 10,
      ...fields,
    },
  });
  if (res.status !== 200) throw new Error(`PUT /api/settings/telephony → ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}
