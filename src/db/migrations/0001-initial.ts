import { DataTypes, type QueryInterface } from 'sequelize';

const id = { type: DataTypes.UUID, primaryKey: true, allowNull: false };
const timestamps = {
  created_at: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
  updated_at: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
};
const json = (defaultValue: unknown) => ({ type: DataTypes.JSONB, allowNull: false, defaultValue });
const text = (allowNull = true) => ({ type: DataTypes.TEXT, allowNull });

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable('users', {
    id,
    email: { type: DataTypes.TEXT, allowNull: false, unique: true },
    password_hash: text(false),
    role: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'member' },
    ...timestamps,
  });

  await qi.createTable('api_keys', {
    id,
    user_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    name: text(false),
    key_prefix: text(false),
    key_hash: { type: DataTypes.TEXT, allowNull: false, unique: true },
    last_used_at: { type: DataTypes.DATE, allowNull: true },
    revoked_at: { type: DataTypes.DATE, allowNull: true },
    ...timestamps,
  });

  await qi.createTable('password_reset_tokens', {
    id,
    user_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    token_hash: { type: DataTypes.TEXT, allowNull: false, unique: true },
    expires_at: { type: DataTypes.DATE, allowNull: false },
    used_at: { type: DataTypes.DATE, allowNull: true },
    ...timestamps,
  });

  await qi.createTable('login_failures', {
    id: { type: DataTypes.BIGINT, autoIncrement: true, primaryKey: true },
    client_key: text(false),
    created_at: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
  });
  await qi.addIndex('login_failures', ['client_key', 'created_at']);

  await qi.createTable('tools', {
    id,
    name: { type: DataTypes.TEXT, allowNull: false, unique: true },
    description: text(false),
    parameters: json({ properties: {}, required: [] }),
    webhook_url: text(false),
    webhook_method: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'POST' },
    headers_encrypted: text(),
    timeout_secs: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 10 },
    ...timestamps,
  });

  await qi.createTable('agents', {
    id,
    name: { type: DataTypes.TEXT, allowNull: false, unique: true },
    prompt: text(false),
    greeting: text(),
    stt_provider: text(false),
    stt_model: text(),
    stt_language: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'en' },
    stt_mode: text(),
    stt_settings: json({}),
    llm_provider: text(false),
    llm_model: text(false),
    llm_settings: json({}),
    tts_provider: text(false),
    tts_model: text(),
    voice: text(),
    tts_language: text(),
    tts_settings: json({}),
    pipeline_settings: json({}),
    pre_call_tool_ids: json([]),
    tool_ids: json([]),
    context_variables: json({}),
    webhook_url: text(),
    webhook_events: json([]),
    webhook_secret_encrypted: text(),
    // Incremented on every change: a call records the version of the snapshot it runs on.
    version: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
    ...timestamps,
  });

  await qi.createTable('flow_nodes', {
    id,
    agent_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'agents', key: 'id' }, onDelete: 'CASCADE' },
    node_key: text(false),
    position: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    is_initial: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    is_terminal: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    role_messages: json([]),
    task_messages: json([]),
    functions: json([]),
    tool_ids: json([]),
    builtin_tools: json([]),
    pre_actions: json([]),
    position_xy: { type: DataTypes.JSONB, allowNull: true },
    ...timestamps,
  });
  await qi.addIndex('flow_nodes', ['agent_id', 'node_key'], { unique: true });

  await qi.createTable('telephony_settings', {
    id: { type: DataTypes.INTEGER, primaryKey: true },
    provider: text(),
    public_base_url: text(),
    twilio_account_sid: text(),
    twilio_auth_token_encrypted: text(),
    twilio_phone_number: text(),
    twilio_max_concurrent: { type: DataTypes.INTEGER, allowNull: true },
    exotel_account_sid: text(),
    exotel_api_key: text(),
    exotel_api_token_encrypted: text(),
    exotel_phone_number: text(),
    exotel_api_base: text(),
    exotel_max_concurrent: { type: DataTypes.INTEGER, allowNull: true },
    plivo_auth_id: text(),
    plivo_auth_token_encrypted: text(),
    plivo_phone_number: text(),
    plivo_max_concurrent: { type: DataTypes.INTEGER, allowNull: true },
    ...timestamps,
  });

  await qi.createTable('telephony_endpoints', {
    id,
    phone_number: text(false),
    provider: text(false),
    inbound_agent_name: text(),
    outbound_agent_name: text(),
    label: text(),
    is_active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    ...timestamps,
  });
  await qi.addIndex('telephony_endpoints', ['phone_number', 'provider'], { unique: true });

  await qi.createTable('calls', {
    id,
    agent_id: { type: DataTypes.UUID, allowNull: true, references: { model: 'agents', key: 'id' }, onDelete: 'SET NULL' },
    agent_name: text(false),
    agent_version: { type: DataTypes.INTEGER, allowNull: true },
    phone_number: text(false),
    direction: text(false),
    status: text(false),
    provider: text(),
    provider_call_sid: text(),
    workflow_id: text(false),
    start_time: { type: DataTypes.DATE, allowNull: true },
    end_time: { type: DataTypes.DATE, allowNull: true },
    duration: { type: DataTypes.DOUBLE, allowNull: true },
    recording_path: text(),
    end_reason: text(),
    current_node_key: text(),
    llm_prompt_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    llm_completion_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    tts_characters: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    metadata: json({}),
    context: json({}),
    ...timestamps,
  });
  await qi.addIndex('calls', ['created_at']);
  await qi.addIndex('calls', ['status']);
  await qi.addIndex('calls', ['agent_name']);
  await qi.addIndex('calls', ['provider', 'provider_call_sid']);

  // Events are keyed by the sequence number the call workflow assigns, so a retried write
  // (after a worker crash) is recognised and never duplicated.
  await qi.createTable('call_events', {
    call_id: { type: DataTypes.UUID, allowNull: false, primaryKey: true, references: { model: 'calls', key: 'id' }, onDelete: 'CASCADE' },
    seq: { type: DataTypes.INTEGER, allowNull: false, primaryKey: true },
    event_type: text(false),
    timestamp: { type: DataTypes.DATE(6), allowNull: false },
    data: json({}),
  });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  for (const table of [
    'call_events',
    'calls',
    'telephony_endpoints',
    'telephony_settings',
    'flow_nodes',
    'agents',
    'tools',
    'login_failures',
    'password_reset_tokens',
    'api_keys',
    'users',
  ]) {
    await qi.dropTable(table);
  }
}
