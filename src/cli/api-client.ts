/** The running platform's API as the command-line tools use it: JSON over HTTP with a bearer token. */

export type ApiCall = (token: string | null, method: string, path: string, body?: unknown) => Promise<any>;

/** Answers the JSON body; a non-2xx answer throws with the API's `detail`. */
export function apiClient(baseUrl: string): ApiCall {
  return async (token, method, path, body) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${String(data.detail ?? res.statusText)}`);
    return data;
  };
}

/** An API key when given, else a login with ADMIN_EMAIL / ADMIN_PASSWORD. */
export async function apiToken(api: ApiCall, apiKey: string | undefined, env: NodeJS.ProcessEnv): Promise<string> {
  if (apiKey) return apiKey;
  const password = env.ADMIN_PASSWORD;
  if (!password) throw new Error('Set VAP_API_KEY (or --api-key), or ADMIN_PASSWORD (and ADMIN_EMAIL) to log in');
  return (await api(null, 'POST', '/api/auth/login', { email: env.ADMIN_EMAIL ?? 'admin@example.com', password })).access_token as string;
}
