/**
 * The platform's typed TypeScript client: openapi-fetch over the types openapi-typescript wrote
 * from the OpenAPI document (schema.ts, models.ts; `npm run sdk:generate`). Every path, body,
 * query and answer is typed; `unwrap` turns an answer into its data or throws `ApiError` with
 * the API's `detail`. See ../README.md.
 */
import createClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';

export type { components, operations, paths } from './schema';
export * from './models';

export type VapClient = Client<paths>;

export interface VapClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where the platform answers, e.g. http://localhost:8000 (the paths start with /api). */
  baseUrl: string;
  /** A JWT from login, or an API key (`vap_…`); a function is asked before every request. */
  token?: string | (() => string | undefined);
}

/** A non-2xx answer: its status and the API's `detail`; the message names the request too. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly body: components['schemas']['Error'] | undefined,
    request = '',
  ) {
    super(`${request ? `${request} → ` : ''}${status}: ${detail}`);
    this.name = 'ApiError';
  }
}

// The request each answer came from: a Response knows its URL but not its method.
const requests = new WeakMap<Response, string>();

export function createVapClient(options: VapClientOptions): VapClient {
  const { token, ...rest } = options;
  const client = createClient<paths>(rest);
  const auth: Middleware = {
    onRequest({ request }) {
      const value = typeof token === 'function' ? token() : token;
      if (value) request.headers.set('Authorization', `Bearer ${value}`);
      return request;
    },
    onResponse({ request, response }) {
      requests.set(response, `${request.method} ${new URL(request.url).pathname}`);
    },
  };
  client.use(auth);
  return client;
}

/** The data of a 2xx answer; any other answer throws ApiError (every error body is `{detail}`). */
export async function unwrap<T>(answer: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await answer;
  if (response.ok) return data as T;
  const body = error as components['schemas']['Error'] | undefined;
  throw new ApiError(response.status, typeof body?.detail === 'string' ? body.detail : response.statusText, body, requests.get(response));
}

/** Logs in with an e-mail and password and answers the JWT (`access_token`). */
export async function login(baseUrl: string, email: string, password: string): Promise<string> {
  const anonymous = createVapClient({ baseUrl });
  return (await unwrap(anonymous.POST('/api/auth/login', { body: { email, password } }))).access_token;
}
