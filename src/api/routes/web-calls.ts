/**
 * Web calls (docs/web-calls.md): POST /api/calls/web starts a call a browser talks to through its
 * microphone — for a signed-in member (the dashboard's Talk button) or a publishable key (the
 * embeddable widget on another site, checked against the key's agent and origins and rate
 * limited per key and per client address).
 */
import type { Request } from 'express';
import { z } from 'zod';
import { countInWindows } from '../auth/login-throttle';
import type { PublishableKeyContext } from '../auth/publishable-keys';
import { touchPublishableKey } from '../auth/publishable-keys';
import { CallError } from '../../calls/call-service';
import { GatewayCapacityError } from '../../calls/gateway-capacity';
import { RETRY_AFTER_SECS, retryAfterHeader } from '../../shared/retry-after';
import { startWebCall, webStreamUrl } from '../../calls/web-calls';
import { countRefusedCall } from '../../observability/metrics';
import type { ApiContext } from '../context';
import { forbidden, HttpError } from '../errors';
import { corsHeaders } from '../http/web-call-cors';
import { route } from '../route';
import { CustomParameters } from '../schemas/call-input';
import { Timestamp } from '../schemas/common';
import { apiTimestamp } from '../../shared/time';

/** A refused key request's client waits this long at most before asking again. */
const RATE_WINDOW_SECS = 60;

const WebCallBody = z.strictObject({
  agent_name: z.string().min(1).max(200),
  custom_parameters: CustomParameters.describe('the call\'s variables, as for phone calls ({{name}} in the prompt and greeting)'),
});

const WebCallResponse = z.object({
  call_id: z.uuid(),
  stream_url: z.string().describe('the media gateway\'s WebSocket (/media/web): send `start` with call_id and token, then 16-bit PCM'),
  token: z.string().describe('authenticates the stream of this call only; single use, until expires_at'),
  expires_at: Timestamp.describe('the stream must connect before then'),
}).meta({ id: 'WebCall' });

export function webCallRoutes(ctx: ApiContext) {
  const { db, config } = ctx;
  const deps = { db, config, temporal: ctx.temporal, streamSecret: ctx.jwtSecret };

  /** Checks a publishable key's request: its origin, its agent, its rate. Answers the CORS headers. */
  const admitKey = async (key: PublishableKeyContext, req: Request, agentName: string): Promise<Record<string, string>> => {
    const origin = req.get('origin');
    if (!origin || !key.allowedOrigins.includes(origin)) throw forbidden(`This publishable key may not be used from ${origin ? `origin ${origin}` : 'a request without an Origin'}`);
    const cors = corsHeaders(origin);
    const fail = (status: number, detail: string, headers: Record<string, string> = {}) => new HttpError(status, detail, { ...cors, ...headers });
    if (agentName !== key.agentName) throw fail(403, 'This publishable key starts calls to another agent');
    const verdict = await countInWindows(db, [
      { key: `web-call:key:${key.id}`, windowSecs: RATE_WINDOW_SECS, max: config.WEB_CALL_KEY_RATE_PER_MIN },
      { key: `web-call:address:${req.ip ?? 'unknown'}`, windowSecs: RATE_WINDOW_SECS, max: config.WEB_CALL_ADDRESS_RATE_PER_MIN },
    ]);
    if (!verdict.allowed) throw fail(429, 'Too many web calls: try again later', { 'Retry-After': String(verdict.retryAfterSecs) });
    return cors;
  };

  return [
    route({
      method: 'post',
      path: '/api/calls/web',
      operationId: 'startWebCall',
      tag: 'Calls',
      access: 'member',
      publishableKey: true,
      summary: 'Start a call a browser talks to (the Talk button, the widget)',
      description: [
        'Creates the call (status `in_progress`, direction `inbound`, `channel` `web`, no provider) and its workflow, and answers where and how the browser streams its microphone: open `stream_url`, send `{"event":"start","call_id","token","sample_rate"}`, then 20 ms frames of 16-bit PCM; the agent answers in the same format (docs/web-calls.md).',
        'Credentials: a member\'s JWT or API key, or a publishable key (`pk_…`) of the agent, sent from a page whose `Origin` the key allows; a publishable key is refused on every other route.',
        `Publishable keys are rate limited per key and per client address (WEB_CALL_KEY_RATE_PER_MIN, WEB_CALL_ADDRESS_RATE_PER_MIN): over it, 429 with Retry-After. When no media gateway has room, 503 with \`Retry-After: ${RETRY_AFTER_SECS.gatewayFull}\`.`,
      ].join(' '),
      body: WebCallBody,
      responses: {
        201: { description: 'The call is waiting for its stream', schema: WebCallResponse },
        401: { description: 'No credentials, or an unknown or revoked publishable key' },
        403: { description: "A publishable key used from an origin it does not allow, or for another agent" },
        404: { description: 'Unknown agent' },
        422: { description: "Invalid body, or the agent's STT, LLM or TTS cannot run here (the detail is its `warnings`)" },
        429: { description: 'A publishable key or client address started too many web calls; retry after Retry-After' },
        503: { description: 'No media gateway has room for the call, or Temporal cannot be reached' },
      },
      async handler({ body, auth, publishableKey, req }) {
        const cors = publishableKey ? await admitKey(publishableKey, req, body.agent_name) : {};
        const origin = publishableKey ? (req.get('origin') as string) : null;
        const metadata = publishableKey ? { publishable_key_id: publishableKey.id, origin } : { user_id: auth.userId };
        try {
          const call = await startWebCall(deps, { agentName: body.agent_name, customParameters: body.custom_parameters, origin, metadata });
          if (publishableKey) await touchPublishableKey(db, publishableKey.id);
          const streamUrl = webStreamUrl(config, `${req.protocol}://${req.get('host')}`);
          return {
            status: 201,
            headers: cors,
            body: { call_id: call.callId, stream_url: streamUrl, token: call.token, expires_at: apiTimestamp(call.expiresAt) },
          };
        } catch (err) {
          if (err instanceof GatewayCapacityError) {
            countRefusedCall(err.reason, 'inbound');
            throw new HttpError(503, err.message, { ...cors, ...retryAfterHeader('gatewayFull') });
          }
          if (err instanceof CallError) throw new HttpError(err.status, err.message, cors);
          throw err;
        }
      },
    }),
  ];
}
