/** The API form of a webhook tool, and the decrypted endpoint the webhook client needs. */
import type { ToolRow } from '../../db/models';
import type { SecretBox } from '../../security/crypto';
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
    parameters: row.parameters,
    webhook_url: row.webhook_url,
    webhook_method: row.webhook_method,
    headers: toolHeaders(box, row),
    timeout_secs: row.timeout_secs,
    created_at: apiTimestamp(row.created_at)!,
    updated_at: apiTimestamp(row.updated_at)!,
  };
}

/** Sealed column value for a headers map; null when there are none. */
export function sealHeaders(box: SecretBox, headers: Record<string, string> | null | undefined): string | null {
  return headers && Object.keys(headers).length > 0 ? box.encrypt(JSON.stringify(headers)) : null;
}
