/**
 * Web calls (docs/web-calls.md): a browser talks to an agent through its microphone. The call is
 * an ordinary call record (`direction` inbound, no provider, `channel` web) whose workflow runs as
 * a voice call; it is admitted like a phone call (gateway room), starts `in_progress` so the
 * browser's stream connects at once, and the browser gets a short-lived token for the gateway's
 * /media/web socket.
 */
import type { Config } from '../config';
import { plain } from '../db/database';
import { providerProblems } from '../providers/agent-readiness';
import { webCallToken } from '../providers/channels/web/token';
import { CallError, startCall, type CallDeps } from './call-service';
import { gatewayAdmission } from './gateway-capacity';
import { gatewayStreamUrl } from './telephony-calls';

/** What a web call has in `phone_number` (and the Temporal UI's PhoneNumber): there is no number. */
export const WEB_CALLER = 'web';
export const WEB_CHANNEL = 'web';

export interface WebCallRequest {
  agentName: string;
  customParameters: Record<string, string | number>;
  /** The page origin a publishable key allowed: the socket must come from it. Null for members. */
  origin: string | null;
  /** Who started it (the user, or the publishable key), kept in the call's metadata. */
  metadata: Record<string, unknown>;
}

export interface WebCall {
  callId: string;
  token: string;
  expiresAt: Date;
}

export class AgentUnready extends CallError {}

export async function startWebCall(deps: CallDeps & { streamSecret: string }, req: WebCallRequest): Promise<WebCall> {
  const agent = plain(
    await deps.db.models.Agent.findOne({ where: { name: req.agentName }, attributes: ['id', 'stt_provider', 'stt_mode', 'llm_provider', 'tts_provider'] }),
  );
  if (!agent) throw new CallError(404, `Agent ${req.agentName} not found`);
  // A call that could not listen or speak would only be silence in the browser.
  const problems = providerProblems(agent, deps.config);
  if (problems.length) throw new AgentUnready(422, `Agent ${req.agentName} cannot take calls: ${problems.join('; ')}`);
  const { callId } = await startCall(deps, {
    agentName: req.agentName,
    phoneNumber: WEB_CALLER,
    direction: 'inbound',
    channel: WEB_CHANNEL,
    customParameters: req.customParameters,
    metadata: req.metadata,
    initialStatus: 'in_progress',
    admit: gatewayAdmission(deps.db, deps.config),
  });
  const expiresAtSecs = Math.floor(Date.now() / 1000) + deps.config.WEB_CALL_TOKEN_TTL_SECS;
  const token = webCallToken(deps.streamSecret, { callId, expiresAtSecs, origin: req.origin });
  return { callId, token, expiresAt: new Date(expiresAtSecs * 1000) };
}

/**
 * The gateway's /media/web as the browser reaches it: GATEWAY_PUBLIC_URL when set; otherwise the
 * address the browser reached the API at (a reverse proxy routes /media to the gateway), and for a
 * local setup the gateway's port on loopback (telephony-calls.ts).
 */
export function webStreamUrl(config: Pick<Config, 'GATEWAY_PUBLIC_URL' | 'GATEWAY_PORT'>, requestBaseUrl: string): string {
  return gatewayStreamUrl(config, requestBaseUrl, WEB_CHANNEL);
}
