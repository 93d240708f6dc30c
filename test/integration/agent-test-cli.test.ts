/**
 * `npm run agent-test` (docs/agent-tests.md) against a running platform: a table of the suite's
 * results and an exit code a CI pipeline can gate on — 0 when every test reached its threshold,
 * 1 when one did not, 2 on a usage or API error.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { BOOKING_PROMPT, bookingAgentReply, createBookingAgent, WEEKENDS_ONLY } from '../support/booking-agent';
import { startHarness, type Harness } from '../support/harness';

let h: Harness;
let llm: FakeOpenAI;
let apiKey: string;

beforeAll(async () => {
  llm = await startFakeOpenAI();
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test' }, worker: true });
  llm.setResponder(bookingAgentReply);
  const key = await h.request('POST', '/api/auth/api-keys', { body: { name: 'ci' } });
  apiKey = key.body.key;
});
afterAll(async () => {
  await h?.stop();
  await llm?.stop();
});

function cli(args: string[]): Promise<{ code: number; stdout: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '../../src/cli/agent-test.ts'), ...args], {
    env: { PATH: process.env.PATH },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stdout += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code: code ?? -1, stdout })));
}

it('exits 0 when every test passes, 1 when a prompt change breaks one, 2 on bad usage', async () => {
  const agent = await createBookingAgent(h, 'ci-booker', 'http://127.0.0.1:9/never-called');
  const res = await h.request('POST', `/api/agents/${agent.agentId}/tests`, {
    body: {
      name: 'books friday',
      kind: 'scripted',
      script: ['I want to book', 'friday', 'bye'],
      tool_mocks: { [agent.toolName]: [{ confirmation: 'C-1' }] },
      expectations: [{ type: 'tool_called', tool: agent.toolName, args: { day: 'friday' } }],
    },
  });
  expect(res.status).toBe(201);
  const args = ['--agent', 'ci-booker', '--url', h.api.url, '--api-key', apiKey];

  const green = await cli([...args, '--repeat', '2']);
  expect(green.stdout).toMatch(/books friday\s+scripted\s+v\d+\s+100% \(2\/2\)\s+100%\s+PASS/);
  expect(green.code).toBe(0);

  await h.request('PATCH', `/api/agents/${agent.agentId}`, { body: { prompt: `${BOOKING_PROMPT} ${WEEKENDS_ONLY}` } });
  const red = await cli(args);
  expect(red.stdout).toMatch(/books friday\s+scripted\s+v\d+\s+0% \(0\/1\)\s+100%\s+FAIL/);
  expect(red.stdout).toContain(`tool ${agent.toolName} is called with {"day":"friday"}: ${agent.toolName} was not called`);
  expect(red.code).toBe(1);

  const unknown = await cli(['--agent', 'no-such-agent', '--url', h.api.url, '--api-key', apiKey]);
  expect(unknown.stdout).toContain('error: no agent named "no-such-agent"');
  expect(unknown.code).toBe(2);
  const missing = await cli(['--url', h.api.url]);
  expect(missing.stdout).toContain('error: --agent <name> is required');
  expect(missing.code).toBe(2);
  const badKey = await cli(['--agent', 'ci-booker', '--url', h.api.url, '--api-key', 'vap_wrong']);
  expect(badKey.stdout).toMatch(/error: GET \/api\/agents → 401/);
  expect(badKey.code).toBe(2);
}, 180_000);
