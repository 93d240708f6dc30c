/** The API form of a webhook tool, and the decrypted endpoint the webhook client needs. */
import type { ToolRow } from '../../db/models';
import { mask, type SecretBox } from '../../security/crypto';
import { apiTimestamp } from '../../shared/time';
import type { ToolEndpoint } from '../../tools/webhook-client';

export function toolHeaders(box: SecretBox, row: Pick<ToolRow, 'headers_encrypted'>): Record<string, string> {
  return row.headers_encrypted ? (JSON.parse(box.decrypt(row.headers_encrypted)) as Record<string, string>) : {};
}

export function toolEndpoint(box: SecretBox, row: ToolRow): ToolEndpoint {
  return { webhook_url: row.webhook_url, webhook_method: row.webhook_method, headers: toolHeaders(box, row), timeout_secs: row.timeout_secs };
}

export function toolJson(box: SecretBox, row: ToolRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    // Tools stored before `type` was kept lack it; it is always "object".
    parameters: { type: 'object', ...row.parameters },
    webhook_url: row.webhook_url,
    webhook_method: row.webhook_method,
    headers: maskHeaders(toolHeaders(box, row)),
    timeout_secs: row.timeout_secs,
    created_at: apiTimestamp(row.created_at)!,
    updated_at: apiTimestamp(row.updated_at)!,
    owner_id: row.owner_id ?? null,
  };
}

/** Header values are secrets (usually credentials): answers show only their last four characters. */
export function maskHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, mask(value)!]));
}

/** A form sends back what it loaded: a masked value keeps the stored one instead of replacing it with the mask. */
export function keepMaskedHeaders(sent: Record<string, string> | null, stored: Record<string, string>): Record<string, string> | null {
  if (!sent) return sent;
  return Object.fromEntries(Object.entries(sent).map(([name, value]) => [name, name in stored && value === mask(stored[name]!) ? stored[name]! : value]));
}

/** Sealed column value for a headers map; null when there are none. */
export function sealHeaders(box: SecretBox, headers: Record<string, string> | null | undefined): string | null {
  return headers && Object.keys(headers).length > 0 ? box.encrypt(JSON.stringify(headers)) : null;
}
