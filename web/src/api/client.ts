/**
 * The typed API client, generated from the API's OpenAPI document (src/api/schema.ts, written by
 * openapi-typescript at build time). Every request carries the session's bearer token; a 401
 * ends the session (expired or revoked token) through the handler the auth provider installs.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';

const TOKEN_KEY = 'vap.token';

export const tokenStore = {
  get: () => localStorage.getItem(TOKEN_KEY),
  set: (token: string) => localStorage.setItem(TOKEN_KEY, token),
  clear: () => localStorage.removeItem(TOKEN_KEY),
};

let onUnauthorized: (detail: string) => void = () => {};
export function setUnauthorizedHandler(handler: (detail: string) => void) {
  onUnauthorized = handler;
}

const auth: Middleware = {
  onRequest({ request }) {
    const token = tokenStore.get();
    if (token) request.headers.set('Authorization', `Bearer ${token}`);
    return request;
  },
  async onResponse({ request, response }) {
    if (response.status === 401 && !request.url.endsWith('/api/auth/login')) {
      const body = await response.clone().json().catch(() => ({}));
      onUnauthorized(typeof body?.detail === 'string' ? body.detail : 'Not authenticated');
    }
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use(auth);

/** A non-2xx answer: the API's `{detail}` with the status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

export function detailOf(error: unknown, fallback = 'Request failed'): string {
  if (error && typeof error === 'object' && typeof (error as { detail?: unknown }).detail === 'string') return (error as { detail: string }).detail;
  return fallback;
}

/** Awaits an openapi-fetch call and returns its data, or throws ApiError. */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new ApiError(response.status, detailOf(error, `${response.status} ${response.statusText}`));
  return data as T;
}

/** GETs a binary resource with the session's credentials (recordings): audio elements cannot send headers. */
export async function fetchBlob(path: string): Promise<Blob> {
  const res = await fetch(path, { headers: { Authorization: `Bearer ${tokenStore.get() ?? ''}` } });
  if (!res.ok) {
    const body = await res.json().catch(() => ({}));
    if (res.status === 401) onUnauthorized(detailOf(body, 'Not authenticated'));
    throw new ApiError(res.status, detailOf(body, `${res.status} ${res.statusText}`));
  }
  return res.blob();
}
