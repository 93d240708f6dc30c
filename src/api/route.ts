/**
 * Route definitions that carry their own zod schemas. The same definition validates requests,
 * types the handler and produces the OpenAPI document (src/api/openapi.ts), so the docs cannot
 * drift from what the server accepts.
 *
 * Each route also declares who may call it (`public`, `access`, `owned`), and mountRoutes enforces
 * it before the handler runs: the role model lives here, not in the handlers (docs/security.md).
 */
import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import { describeIssues, HttpError, forbidden, unauthorized } from './errors';
import { raiseHeldInputError } from './http/conformance';
import type { PublishableKeyContext } from './auth/publishable-keys';

export type Role = 'admin' | 'member';

export interface AuthContext {
  userId: string;
  email: string;
  role: Role;
  via: 'jwt' | 'api_key';
}

/** The role a non-public route requires. */
export const requiredRole = (def: { access?: Role }): Role => def.access ?? 'admin';

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ResponseDoc {
  description: string;
  schema?: z.ZodType;
  /** Non-JSON content, e.g. audio/wav. */
  contentType?: string;
}

type Infer<T> = T extends z.ZodType ? z.output<T> : undefined;

export interface HandlerContext<B, Q, P> {
  body: Infer<B>;
  query: Infer<Q>;
  params: Infer<P>;
  /** The signed-in user; absent only on a `publishableKey` route called with a publishable key. */
  auth: AuthContext;
  /** The publishable key the request came with (routes declaring `publishableKey` only). */
  publishableKey?: PublishableKeyContext;
  req: Request;
  res: Response;
}

export interface RouteDef<B, Q, P> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI-style path, e.g. /api/agents/{agent_id}. */
  path: string;
  /**
   * The operation's name in the OpenAPI document, which generated clients use as the method name:
   * unique, camelCase, a verb first (`listCalls`, `getCall`, `createOutboundCall`).
   */
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /** Reachable without credentials (login, password reset, provider callbacks). */
  public?: boolean;
  /** Who may call an authenticated route: any signed-in user (`member`) or `admin` only (the default). */
  access?: Role;
  /**
   * Also accepts a publishable key (`pk_…`, docs/web-calls.md) in place of a user's credentials;
   * every other route answers a publishable key 401.
   */
  publishableKey?: boolean;
  /**
   * The resource the route changes has an owner: a member may act only on their own (an admin on
   * any). `owner` answers the owner's id, null for a resource of the administrators, undefined
   * when it does not exist (the handler then answers 404).
   */
  owned?: { what: string; owner(params: Infer<P>): Promise<string | null | undefined> };
  body?: B;
  /**
   * A body the handler reads itself from `req` as a stream (not JSON, not parsed or size-limited by
   * the app), e.g. `text/csv`: documented as the request body of that type.
   */
  rawBody?: { contentType: string; description: string };
  query?: Q;
  params?: P;
  responses: Record<number, ResponseDoc>;
  /** Handler returns a Reply, or nothing when it wrote to `res` itself (streams). */
  handler(ctx: HandlerContext<B, Q, P>): Promise<Reply | void>;
}

export type AnyRoute = RouteDef<z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined>;

export function route<
  B extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  P extends z.ZodType | undefined = undefined,
>(def: RouteDef<B, Q, P>): AnyRoute {
  return def as unknown as AnyRoute;
}

function parse(schema: z.ZodType | undefined, value: unknown, prefix: string): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw new HttpError(422, describeIssues(result.error.issues, prefix));
  return result.data;
}

const toExpressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/**
 * The route's role and ownership rules for this caller; answers the parsed path parameters. The one
 * permission check: REST requests and the platform's MCP tools (src/api/mcp/) both go through it.
 */
async function authorizedParams(def: AnyRoute, auth: AuthContext | undefined, rawParams: unknown): Promise<unknown> {
  if (!def.public && auth && requiredRole(def) === 'admin' && auth.role !== 'admin') throw forbidden('Administrator role required');
  const params = parse(def.params, rawParams, 'path');
  if (!def.public && def.owned && auth?.role !== 'admin') {
    const owner = await def.owned.owner(params as never);
    if (owner !== undefined && owner !== auth?.userId) {
      throw forbidden(`Only the owner of this ${def.owned.what} or an administrator may change it`);
    }
  }
  return params;
}

/**
 * Runs a route for a signed-in user without an HTTP request of its own (the platform's MCP tools):
 * the same role and ownership checks, the same validation, the same handler. Only for routes whose
 * handler answers a Reply (none that stream to `res`).
 */
export async function invokeRoute(def: AnyRoute, auth: AuthContext, input: { params?: unknown; query?: unknown; body?: unknown }): Promise<Reply> {
  const params = await authorizedParams(def, auth, input.params ?? {});
  const ctx = { params, query: parse(def.query, input.query, 'query'), body: parse(def.body, input.body, ''), auth, req: undefined, res: undefined };
  const reply = await def.handler(ctx as unknown as HandlerContext<any, any, any>);
  if (!reply) throw new HttpError(500, `${def.operationId} cannot be called this way`);
  return reply;
}

export function mountRoutes(router: Router, routes: AnyRoute[]): void {
  for (const def of routes) {
    router[def.method](toExpressPath(def.path), async (req, res, next) => {
      try {
        const { authContext: auth, publishableKey } = req as Request & { authContext?: AuthContext; publishableKey?: PublishableKeyContext };
        if (!def.public && !auth && publishableKey && !def.publishableKey) throw unauthorized('A publishable key can only start web calls (POST /api/calls/web)');
        if (!def.public && !auth && !publishableKey) throw unauthorized();
        const params = await authorizedParams(def, auth, req.params);
        // Only now is the caller told that the request itself is malformed (http/conformance.ts).
        raiseHeldInputError(req);
        const ctx = {
          params,
          query: parse(def.query, req.query, 'query'),
          body: parse(def.body, req.body, ''),
          auth: auth as AuthContext,
          ...(def.publishableKey && !auth ? { publishableKey } : {}),
          req,
          res,
        };
        const reply = await def.handler(ctx as HandlerContext<any, any, any>);
        if (!reply) return;
        res.status(reply.status).set(reply.headers ?? {});
        if (reply.body === undefined) res.end();
        else res.json(reply.body);
      } catch (err) {
        next(err);
      }
    });
  }
}

/** Common schemas. */
export const uuidParam = (name: string) => z.object({ [name]: z.uuid({ message: 'must be a UUID' }) });
export const ErrorSchema = z
  .object({ detail: z.string().describe('what went wrong, for a person to read; validation errors name the field') })
  .meta({ id: 'Error', description: 'The body of every non-2xx response' });
