import type { Request, Response } from 'express';
import type { ApiContext } from '../context';
import { temporalHealthy } from '../../temporal/client';
import type { PartState } from '../../runtime/readiness';

const CHECK_TIMEOUT_MS = 2_000; // a health probe must answer even when a dependency hangs

function withTimeout(p: Promise<boolean>): Promise<boolean> {
  return Promise.race([p, new Promise<boolean>((r) => setTimeout(() => r(false), CHECK_TIMEOUT_MS).unref())]);
}

/**
 * GET /healthz (no auth): 200 when PostgreSQL and Temporal answer and every other part of this
 * process (the worker and the media gateway under `npm start`) accepts work; else 503, with
 * `status` `starting` while parts are still starting and `degraded` when something is down. A
 * gateway part that drains shows as `gateway: "draining"` and leaves the API ready: it still
 * serves the provider webhooks of the calls being drained.
 */
export function healthHandler(ctx: ApiContext) {
  return async (_req: Request, res: Response) => {
    const [database, temporal] = await Promise.all([
      withTimeout(ctx.db.sequelize.authenticate().then(() => true, () => false)),
      withTimeout(temporalHealthy(ctx.temporal)),
    ]);
    const parts: Record<string, PartState> = {
      database: database ? 'ok' : 'down',
      temporal: temporal ? 'ok' : 'down',
      ...(ctx.readiness?.states() ?? {}),
    };
    const named = (state: PartState) => Object.keys(parts).filter((name) => parts[name] === state);
    const [down, starting] = [named('down'), named('starting')];
    const status = down.length ? 'degraded' : starting.length ? 'starting' : 'ok';
    const detail = [down.length && `Unavailable: ${down.join(', ')}`, starting.length && `Starting: ${starting.join(', ')}`].filter(Boolean).join('; ');
    res.status(status === 'ok' ? 200 : 503).json({ status, ...parts, ...(detail ? { detail } : {}) });
  };
}
