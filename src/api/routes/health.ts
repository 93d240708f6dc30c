import type { Request, Response } from 'express';
import type { ApiContext } from '../context';
import { temporalHealthy } from '../../temporal/client';

const CHECK_TIMEOUT_MS = 2_000; // a health probe must answer even when a dependency hangs

function withTimeout(p: Promise<boolean>): Promise<boolean> {
  return Promise.race([p, new Promise<boolean>((r) => setTimeout(() => r(false), CHECK_TIMEOUT_MS).unref())]);
}

/** GET /healthz (no auth): 200 when PostgreSQL and Temporal both answer, else 503. */
export function healthHandler(ctx: ApiContext) {
  return async (_req: Request, res: Response) => {
    const [database, temporal] = await Promise.all([
      withTimeout(ctx.db.sequelize.authenticate().then(() => true, () => false)),
      withTimeout(temporalHealthy(ctx.temporal)),
    ]);
    const ok = database && temporal;
    const state = (up: boolean) => (up ? 'ok' : 'down');
    res.status(ok ? 200 : 503).json({
      status: ok ? 'ok' : 'degraded',
      database: state(database),
      temporal: state(temporal),
      ...(ok ? {} : { detail: `Unavailable: ${[!database && 'database', !temporal && 'temporal'].filter(Boolean).join(', ')}` }),
    });
  };
}
