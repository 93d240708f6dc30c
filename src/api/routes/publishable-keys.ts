/**
 * Publishable keys of an agent (docs/web-calls.md): created with the origins a website serves the
 * widget from, listed without the key (shown once, stored hashed), revoked at once.
 */
import { z } from 'zod';
import { plain, plainAll } from '../../db/database';
import type { PublishableKeyRow } from '../../db/models';
import { createPublishableKey, MAX_ALLOWED_ORIGINS, normalizeOrigin } from '../auth/publishable-keys';
import type { ApiContext } from '../context';
import { notFound } from '../errors';
import { Timestamp } from '../schemas/common';
import { ownedAgent } from '../ownership';
import { route } from '../route';
import { apiTimestamp } from '../../shared/time';

const timestamp = Timestamp;
const Origin = z
  .string()
  .max(300)
  .transform((v, ctx) => normalizeOrigin(v) ?? (ctx.addIssue({ code: 'custom', message: `"${v.slice(0, 80)}" is not an origin such as https://shop.example (scheme, host and port; no path)` }), z.NEVER));

const KeyCreateSchema = z.strictObject({
  name: z.string().trim().min(1).max(100).describe('for people: where the key is used'),
  allowed_origins: z.array(Origin).min(1).max(MAX_ALLOWED_ORIGINS).describe('page origins that may use the key, e.g. https://shop.example'),
});

const KeySchema = z.object({
  id: z.uuid(),
  agent_id: z.uuid(),
  name: z.string(),
  key_prefix: z.string().describe('the first characters of the key, to tell keys apart'),
  allowed_origins: z.array(z.string()),
  created_at: timestamp,
  last_used_at: timestamp.nullable(),
  revoked_at: timestamp.nullable(),
  key: z.string().optional().describe('pk_…: the key itself, only in the answer to create; put it in the widget snippet'),
}).meta({ id: 'PublishableKey' });

const iso = (d: Date | null) => apiTimestamp(d);
const keyJson = (row: PublishableKeyRow) => ({
  id: row.id,
  agent_id: row.agent_id,
  name: row.name,
  key_prefix: row.key_prefix,
  allowed_origins: row.allowed_origins,
  created_at: iso(row.created_at)!,
  last_used_at: iso(row.last_used_at),
  revoked_at: iso(row.revoked_at),
});

const AgentParams = z.object({ agent_id: z.uuid({ message: 'must be a UUID' }) });
const KeyParams = AgentParams.extend({ key_id: z.uuid({ message: 'must be a UUID' }) });
const TAG = 'Web calls';

export function publishableKeyRoutes(ctx: ApiContext) {
  const { db } = ctx;
  const { Agent, PublishableKey } = db.models;
  const owned = ownedAgent(db);
  const requireAgent = async (id: string) => {
    if (!(await Agent.findByPk(id, { attributes: ['id'] }))) throw notFound('Agent');
  };

  return [
    route({
      method: 'get',
      path: '/api/agents/{agent_id}/publishable-keys',
      operationId: 'listPublishableKeys',
      tag: TAG,
      access: 'member',
      summary: "The agent's publishable keys (revoked ones too), newest first",
      params: AgentParams,
      responses: { 200: { description: 'The keys, without the keys themselves', schema: z.array(KeySchema) }, 404: { description: 'No such agent' } },
      async handler({ params }) {
        await requireAgent(params.agent_id);
        const rows = plainAll(await PublishableKey.findAll({ where: { agent_id: params.agent_id }, order: [['created_at', 'DESC']] }));
        return { status: 200, body: rows.map(keyJson) };
      },
    }),
    route({
      method: 'post',
      path: '/api/agents/{agent_id}/publishable-keys',
      operationId: 'createPublishableKey',
      tag: TAG,
      access: 'member',
      owned,
      summary: 'Create a publishable key for the web widget',
      description:
        'The key (`pk_…`) is in the answer once and stored only as a hash. It can start web calls to this agent (POST /api/calls/web) from the listed origins, and nothing else.',
      params: AgentParams,
      body: KeyCreateSchema,
      responses: {
        201: { description: 'The key, shown this once', schema: KeySchema },
        404: { description: 'No such agent' },
      },
      async handler({ params, body, auth }) {
        await requireAgent(params.agent_id);
        const { key, row } = await createPublishableKey(db, { agentId: params.agent_id, name: body.name, allowedOrigins: [...new Set(body.allowed_origins)], createdBy: auth.userId });
        return { status: 201, body: { ...keyJson(row), key } };
      },
    }),
    route({
      method: 'delete',
      path: '/api/agents/{agent_id}/publishable-keys/{key_id}',
      operationId: 'revokePublishableKey',
      tag: TAG,
      access: 'member',
      owned,
      summary: 'Revoke a publishable key',
      description: 'From now on the key starts no call; a stream token it minted before still connects until its expiry (at most WEB_CALL_TOKEN_TTL_SECS).',
      params: KeyParams,
      responses: { 200: { description: 'The revoked key', schema: KeySchema }, 404: { description: 'No such agent or key' } },
      async handler({ params }) {
        const row = plain(await PublishableKey.findOne({ where: { id: params.key_id, agent_id: params.agent_id } }));
        if (!row) throw notFound('Publishable key');
        if (!row.revoked_at) await PublishableKey.update({ revoked_at: new Date() }, { where: { id: row.id } });
        const updated = plain(await PublishableKey.findByPk(row.id))!;
        return { status: 200, body: keyJson(updated) };
      },
    }),
  ];
}
