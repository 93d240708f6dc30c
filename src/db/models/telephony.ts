import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import { jsonb, modelOptions, nullableText, requiredText, uuidPk, type Timestamps } from './common';

/** A single row (id = 1): the active provider and the public base URL. */
export interface TelephonySettingsRow extends Timestamps {
  id: number;
  provider: string | null;
  public_base_url: string | null;
}

/**
 * One row per telephony provider: its settings as declared by its descriptor, plain fields in
 * `fields` and secret ones in `secrets` (each value SecretBox-encrypted). Keys are the field
 * suffixes (`account_sid`, `auth_token`); an absent or null key is unset.
 */
export interface TelephonyProviderSettingsRow extends Timestamps {
  provider: string;
  fields: Record<string, string | number | null>;
  secrets: Record<string, string | null>;
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
export type TelephonyProviderSettingsModel = ModelStatic<Model<TelephonyProviderSettingsRow, Partial<TelephonyProviderSettingsRow>>>;
export type TelephonyEndpointModel = ModelStatic<Model<TelephonyEndpointRow, Partial<TelephonyEndpointRow>>>;

export function defineTelephonyModels(sequelize: Sequelize) {
  const TelephonySettings: TelephonySettingsModel = sequelize.define(
    'TelephonySettings',
    {
      id: { type: DataTypes.INTEGER, primaryKey: true },
      provider: nullableText(),
      public_base_url: nullableText(),
    },
    { ...modelOptions, tableName: 'telephony_settings' },
  );
  const TelephonyProviderSettings: TelephonyProviderSettingsModel = sequelize.define(
    'TelephonyProviderSettings',
    { provider: { type: DataTypes.TEXT, primaryKey: true }, fields: jsonb({}), secrets: jsonb({}) },
    { ...modelOptions, tableName: 'telephony_provider_settings' },
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
  return { TelephonySettings, TelephonyProviderSettings, TelephonyEndpoint };
}
