/**
 * Talk to an agent from the terminal through the text test channel (the same call workflow as a
 * phone call):  npm run chat -- <agent_name> [name=value ...]
 *
 * Uses the running API at VAP_API_URL (default http://localhost:8000) with VAP_API_KEY, or logs in
 * with ADMIN_EMAIL / ADMIN_PASSWORD. Type /quit (or Ctrl-D) to hang up.
 */
import readline from 'node:readline/promises';
import { connect, unwrap } from './api-client';

const baseUrl = (process.env.VAP_API_URL ?? `http://localhost:${process.env.PORT ?? 8000}`).replace(/\/$/, '');


function parseParameters(args: string[]): Record<string, string> {
  return Object.fromEntries(args.map((a) => a.split('=', 2) as [string, string]).filter(([k, v]) => k && v !== undefined));
}

async function main(): Promise<void> {
  const [agentName, ...rest] = process.argv.slice(2);
  if (!agentName) throw new Error('usage: npm run chat -- <agent_name> [name=value ...]');
  const api = await connect(baseUrl, process.env.VAP_API_KEY, process.env);
  const started = await unwrap(api.POST('/api/calls/test', { body: { agent_name: agentName, custom_parameters: parseParameters(rest) } }));
  const callId = started.call_id;
  console.log(`call ${callId} — type /quit to hang up`);
  if (started.greeting) console.log(`agent> ${started.greeting}`);
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
  try {
    for (;;) {
      const line = await rl.question('you> ').catch(() => '/quit');
      if (line.trim() === '/quit') break;
      if (!line.trim()) continue;
      const turn = await unwrap(api.POST('/api/calls/{call_id}/test/messages', { params: { path: { call_id: callId } }, body: { text: line } }));
      for (const reply of turn.replies) console.log(`agent> ${reply}`);
      if (turn.status !== 'in_progress') {
        console.log(`(call ${turn.status})`);
        return;
      }
    }
  } finally {
    rl.close();
    const ended = await unwrap(api.POST('/api/calls/end', { body: { call_id: callId } })).catch(() => null);
    if (ended) console.log(`(call ${ended.status}, ${ended.end_reason ?? 'no end reason'}, ${ended.duration ?? 0}s)`);
  }
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
