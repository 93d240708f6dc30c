/**
 * Delivers one signed webhook notification. Any non-2xx answer or network error fails the attempt
 * so Temporal retries it with backoff; 410 Gone stops retrying (the receiver asked us to);
 * a Retry-After on 429/503 sets the next delay.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import got from 'got';
import type { ActivityDeps } from '.';
import type { WebhookDelivery } from '../workflows/webhook-workflow';
import { webhookHeaders } from '../src/webhooks/standard-webhooks';
import { OUTBOUND_BLOCKED, outboundGuard } from '../src/security/outbound-guard';

const REQUEST_TIMEOUT_MS = 15_000; // the convention's receivers answer within 15 s

export function createWebhookActivities({ db, box, log, config }: ActivityDeps) {
  const outbound = outboundGuard(config);
  async function currentSecret(delivery: WebhookDelivery): Promise<string | null> {
    // A rotated secret applies to deliveries still being retried; a deleted agent keeps its old one.
    const agent = await db.models.Agent.findByPk(delivery.agentId, { attributes: ['webhook_secret_encrypted'] });
    const sealed = (agent?.get('webhook_secret_encrypted') as string | null | undefined) ?? delivery.secretEncrypted;
    return sealed ? box.decrypt(sealed) : null;
  }

  return {
    async deliverWebhook(delivery: WebhookDelivery): Promise<{ attempts: number; status: number }> {
      const attempt = Context.current().info.attempt;
      const { timestamp_ms, ...rest } = delivery.payload;
      const body = JSON.stringify({ ...rest, timestamp: new Date(timestamp_ms).toISOString().slice(0, 23) });
      const secret = await currentSecret(delivery);
      const headers = secret ? webhookHeaders(secret, delivery.messageId, body) : { 'content-type': 'application/json', 'webhook-id': delivery.messageId };
      let status: number;
      let retryAfter: string | undefined;
      try {
        const res = await got.post(delivery.url, {
          ...outbound.gotOptions(),
          body,
          headers: { ...headers, 'user-agent': 'voice-agent-platform-webhooks' },
          timeout: { request: REQUEST_TIMEOUT_MS },
          retry: { limit: 0 },
          throwHttpErrors: false,
          followRedirect: false,
        });
        status = res.statusCode;
        retryAfter = res.headers['retry-after'];
      } catch (err) {
        // A refused address is a configuration problem that retrying cannot fix.
        if ((err as { code?: string }).code === OUTBOUND_BLOCKED) {
          log.warn('webhook delivery refused by the outbound guard', { url: delivery.url, id: delivery.messageId, error: (err as Error).message });
          throw ApplicationFailure.nonRetryable((err as Error).message, 'WebhookBlocked');
        }
        log.warn('webhook delivery failed', { url: delivery.url, id: delivery.messageId, attempt, error: (err as Error).message });
        throw ApplicationFailure.retryable(`webhook request failed: ${(err as Error).message}`, 'WebhookUnreachable');
      }
      if (status >= 200 && status < 300) return { attempts: attempt, status };
      if (status === 410) throw ApplicationFailure.nonRetryable('receiver answered 410 Gone', 'WebhookGone');
      const seconds = retryAfter && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined;
      throw ApplicationFailure.create({
        message: `webhook receiver answered ${status}`,
        type: 'WebhookRejected',
        ...(seconds !== undefined && [429, 502, 503, 504].includes(status) ? { nextRetryDelay: `${seconds}s` } : {}),
      });
    },
  };
}
