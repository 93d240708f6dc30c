import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import { modelOptions, nullableInt, nullableText, requiredText, uuidPk, type Timestamps } from './common';

/** A single row (id = 1) holding the credentials of every telephony provider. */
export interface TelephonySettingsRow extends Timestamps {
  id: number;
  provider: string | null;
  public_base_url: string | null;
  twilio_account_sid: string | null;
  twilio_auth_token_encrypted: string | null;
  twilio_phone_number: string | null;
  twilio_max_concurrent: number | null;
  exotel_account_sid: string | null;
  exotel_api_key: string | null;
  exotel_api_token_encrypted: string | null;
  exotel_phone_number: string | null;
  exotel_api_base: string | null;
  exotel_max_concurrent: number | null;
  plivo_auth_id: string | null;
  plivo_auth_token_encrypted: string | null;
  plivo_phone_number: string | null;
  plivo_max_concurrent: number | null;
}

export interface TelephonyEndpointRow extends Timestamps {
  id: string;
  phone_number: string;
  provider: string;
  inbound_agent_name: string | null;
  outbound_agent_name: string | null;
  label: string | null;
  is_active: boolean;
}

export type TelephonySettingsModel = ModelStatic<Model<TelephonySettingsRow, Partial<TelephonySettingsRow>>>;
export type TelephonyEndpointModel = ModelStatic<Model<TelephonyEndpointRow, Partial<TelephonyEndpointRow>>>;

export function defineTelephonyModels(sequelize: Sequelize) {
  const TelephonySettings: TelephonySettingsModel = sequelize.define(
    'TelephonySettings',
    {
      id: { type: DataTypes.INTEGER, primaryKey: true },
      provider: nullableText(),
      public_base_url: nullableText(),
      twilio_account_sid: nullableText(),
      twilio_auth_token_encrypted: nullableText(),
      twilio_phone_number: nullableText(),
      twilio_max_concurrent: nullableInt(),
      exotel_account_sid: nullableText(),
      exotel_api_key: nullableText(),
      exotel_api_token_encrypted: nullableText(),
      exotel_phone_number: nullableText(),
      exotel_api_base: nullableText(),
      exotel_max_concurrent: nullableInt(),
      plivo_auth_id: nullableText(),
      plivo_auth_token_encrypted: nullableText(),
      plivo_phone_number: nullableText(),
      plivo_max_concurrent: nullableInt(),
    },
    { ...modelOptions, tableName: 'telephony_settings' },
  );
  const TelephonyEndpoint: TelephonyEndpointModel = sequelize.define(
    'TelephonyEndpoint',
    {
      id: uuidPk(),
      phone_number: requiredText(),
      provider: requiredText(),
      inbound_agent_name: nullableText(),
      outbound_agent_name: nullableText(),
      label: nullableText(),
      is_active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    },
    { ...modelOptions, tableName: 'telephony_endpoints' },
  );
  return { TelephonySettings, TelephonyEndpoint };
}
