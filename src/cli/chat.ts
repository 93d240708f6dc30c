/**
 * Talk to an agent from the terminal through the text test channel (the same call workflow as a
 * phone call):  npm run chat -- <agent_name> [name=value ...]
 *
 * Uses the running API at VAP_API_URL (default http://localhost:8000) with VAP_API_KEY, or logs in
 * with ADMIN_EMAIL / ADMIN_PASSWORD. Type /quit (or Ctrl-D) to hang up.
 */
import readline from 'node:readline/promises';

const baseUrl = (process.env.VAP_API_URL ?? `http://localhost:${process.env.PORT ?? 8000}`).replace(/\/$/, '');

async function api(token: string | null, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${String(data.detail ?? res.statusText)}`);
  return data;
}

async function token(): Promise<string> {
  if (process.env.VAP_API_KEY) return process.env.VAP_API_KEY;
  const email = process.env.ADMIN_EMAIL ?? 'admin@example.com';
  const password = process.env.ADMIN_PASSWORD;
  if (!password) throw new Error('Set VAP_API_KEY, or ADMIN_PASSWORD (and ADMIN_EMAIL) to log in');
  return (await api(null, 'POST', '/api/auth/login', { email, password })).access_token as string;
}

function parseParameters(args: string[]): Record<string, string> {
  return Object.fromEntries(args.map((a) => a.split('=', 2) as [string, string]).filter(([k, v]) => k && v !== undefined));
}

async function main(): Promise<void> {
  const [agentName, ...rest] = process.argv.slice(2);
  if (!agentName) throw new Error('usage: npm run chat -- <agent_name> [name=value ...]');
  const auth = await token();
  const started = await api(auth, 'POST', '/api/calls/test', { agent_name: agentName, custom_parameters: parseParameters(rest) });
  const callId = started.call_id as string;
  console.log(`call ${callId} — type /quit to hang up`);
  if (started.greeting) console.log(`agent> ${started.greeting}`);
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
  try {
    for (;;) {
      const line = await rl.question('you> ').catch(() => '/quit');
      if (line.trim() === '/quit') break;
      if (!line.trim()) continue;
      const turn = await api(auth, 'POST', `/api/calls/${callId}/test/messages`, { text: line });
      for (const reply of turn.replies as string[]) console.log(`agent> ${reply}`);
      if (turn.status !== 'in_progress') {
        console.log(`(call ${turn.status})`);
        return;
      }
    }
  } finally {
    rl.close();
    const ended = await api(auth, 'POST', '/api/calls/end', { call_id: callId }).catch(() => null);
    if (ended) console.log(`(call ${ended.status}, ${ended.end_reason ?? 'no end reason'}, ${ended.duration ?? 0}s)`);
  }
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
