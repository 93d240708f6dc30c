/** The running platform's API as the command-line tools use it: the typed SDK of clients/typescript. */
import { createVapClient, login, type VapClient } from '../../clients/typescript/src';

export { unwrap } from '../../clients/typescript/src';

/** A client with an API key when given, else logged in with ADMIN_EMAIL / ADMIN_PASSWORD. */
export async function connect(baseUrl: string, apiKey: string | undefined, env: NodeJS.ProcessEnv): Promise<VapClient> {
  if (apiKey) return createVapClient({ baseUrl, token: apiKey });
  const password = env.ADMIN_PASSWORD;
  if (!password) throw new Error('Set VAP_API_KEY (or --api-key), or ADMIN_PASSWORD (and ADMIN_EMAIL) to log in');
  return createVapClient({ baseUrl, token: await login(baseUrl, env.ADMIN_EMAIL ?? 'admin@example.com', password) });
}
