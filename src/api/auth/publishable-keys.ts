/**
 * Publishable keys (`pk_…`, docs/web-calls.md): shown on a website by the embeddable widget, so
 * they are not secrets in the usual sense; what makes one safe to publish is what it cannot do.
 * A key names one agent and a list of page origins, and authenticates exactly one operation —
 * starting a web call to that agent (POST /api/calls/web) from one of those origins, under a rate
 * limit per key and per client address. Stored as a SHA-256 hash, like API keys; shown once.
 */
import crypto from 'node:crypto';
import { Op } from 'sequelize';
import { plain, type Database } from '../../db/database';
import type { PublishableKeyRow } from '../../db/models';
import { randomToken, sha256Hex } from '../../security/crypto';

export const PUBLISHABLE_KEY_PREFIX = 'pk_';
export const MAX_ALLOWED_ORIGINS = 20;

/** What a request authenticated with a publishable key may act as. */
export interface PublishableKeyContext {
  id: string;
  agentId: string;
  agentName: string;
  allowedOrigins: string[];
}

/** `https://shop.example[:port]` exactly as browsers send it in `Origin`; null for anything else. */
export function normalizeOrigin(value: string): string | null {
  const url = URL.parse(value.trim());
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return null;
  // A path, query or credentials mean the value is a page URL, not an origin: refused, not guessed.
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return null;
  if (value.trim().replace(/\/$/, '') !== url.origin) return null;
  return url.origin;
}

export async function createPublishableKey(db: Database, input: { agentId: string; name: string; allowedOrigins: string[]; createdBy: string | null }) {
  const key = `${PUBLISHABLE_KEY_PREFIX}${randomToken(24)}`;
  const row = await db.models.PublishableKey.create({
    id: crypto.randomUUID(),
    agent_id: input.agentId,
    name: input.name,
    key_prefix: key.slice(0, 10),
    key_hash: sha256Hex(key),
    allowed_origins: input.allowedOrigins,
    created_by: input.createdBy,
  });
  return { key, row: row.get({ plain: true }) as PublishableKeyRow };
}

/** The key's grant, or null for an unknown or revoked key (or one whose agent is gone). */
export async function findPublishableKey(db: Database, key: string): Promise<PublishableKeyContext | null> {
  if (!key.startsWith(PUBLISHABLE_KEY_PREFIX) || key.length > 100) return null;
  const row = plain(await db.models.PublishableKey.findOne({ where: { key_hash: sha256Hex(key), revoked_at: null } }));
  if (!row) return null;
  const agent = plain(await db.models.Agent.findByPk(row.agent_id, { attributes: ['name'] }));
  if (!agent) return null;
  return { id: row.id, agentId: row.agent_id, agentName: agent.name, allowedOrigins: row.allowed_origins };
}

/** Whether any live key allows `origin` (CORS preflights carry no key, only the origin). */
export async function anyKeyAllowsOrigin(db: Database, origin: string): Promise<boolean> {
  const found = await db.models.PublishableKey.findOne({
    where: { revoked_at: null, allowed_origins: { [Op.contains]: [origin] } },
    attributes: ['id'],
  });
  return !!found;
}

export async function touchPublishableKey(db: Database, id: string): Promise<void> {
  await db.models.PublishableKey.update({ last_used_at: new Date() }, { where: { id } });
}
