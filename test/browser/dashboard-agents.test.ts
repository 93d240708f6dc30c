/**
 * The dashboard in a real headless Chromium against the real platform (API over a socket,
 * PostgreSQL, Temporal worker): logging in, agents, the flow editor, tools, bundles, the assistant
 * and what a member may not open.
 */
import fs from 'node:fs';
import jwt from 'jsonwebtoken';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver';
import { eventually } from '../support/fixtures';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../support/harness';
import { DESKTOP, ensureDashboardBuilt, launchChromium, logIn, pick, screenshot, stableBox, watchPageErrors } from './support/chromium';

let h: Harness;
let llm: FakeOpenAI;
let hook: WebhookReceiver;
let mcp: FakeMcpServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  ensureDashboardBuilt();
  llm = await startFakeOpenAI();
  hook = await startWebhookReceiver();
  mcp = await startFakeMcpServer({ requiredHeaders: { authorization: 'Bearer crm-key-4242' } });
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test' }, worker: true });
  browser = await launchChromium();
  context = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
  pageErrors = watchPageErrors(page);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await h?.stop();
  await llm?.stop();
  await hook?.stop();
  await mcp?.stop();
});

afterEach(() => expect(pageErrors).toEqual([]));

const api = async (method: string, path: string, body?: unknown) => {
  const res = await h.request(method, path, body === undefined ? {} : { body });
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};
const agentNamed = async (name: string) => ((await api('GET', '/api/agents')) as Array<{ id: string; name: string }>).find((a) => a.name === name);

describe('the dashboard, as an administrator', () => {
  it('logs in and shows the home page with call statistics', async () => {
    await page.goto(`${h.api.url}/agents`);
    await page.getByRole('button', { name: 'Log in' }).waitFor();
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByRole('textbox', { name: 'Password' }).fill('wrong-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong email or password' }).waitFor();

    await page.getByRole('textbox', { name: 'Password' }).fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    // Back where the visitor wanted to go.
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    await page.getByRole('link', { name: 'Home', exact: true }).click();
    await page.getByText('Active now').waitFor();
    expect(await page.getByRole('link', { name: 'Users' }).count()).toBe(1);
  });

  it('creates a freeform agent, showing the API’s validation next to the field', async () => {
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: 'New agent' }).click();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('support bot');
    await page.getByRole('textbox', { name: 'Prompt' }).fill('You answer questions about the shop. Be brief.');
    await page.getByRole('textbox', { name: 'Greeting' }).fill('Hello {{first_name}}, this is the shop.');
    await pick(page, 'TTS provider', 'elevenlabs');
    await page.getByRole('button', { name: 'Create agent' }).click();
    // The API's 422 names the field; the form shows it under the name input.
    const nameInput = page.getByRole('textbox', { name: 'Name', exact: true });
    await page.getByText(/name: must be a slug/).waitFor();
    expect(await nameInput.getAttribute('aria-invalid')).toBe('true');

    await nameInput.fill('support-bot');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByText('Webhook signing secret (shown once)').waitFor();
    await page.getByRole('heading', { name: 'support-bot' }).waitFor();
    expect(page.url()).toMatch(/\/agents\/[0-9a-f-]{36}$/);
    // The placeholders the greeting uses are listed.
    await page.getByRole('group', { name: 'Variables used' }).filter({ hasText: '{{first_name}}' }).waitFor();

    // This installation has no ElevenLabs key: the API warns, and the form says so at the picker.
    await page.getByRole('status').filter({ hasText: 'ELEVENLABS_API_KEY is not set' }).waitFor();
    const agent = await api('GET', `/api/agents/${(await agentNamed('support-bot'))!.id}`);
    expect(agent.warnings).toContain('tts_provider elevenlabs: ELEVENLABS_API_KEY is not set');
    expect(agent).toMatchObject({ prompt: 'You answer questions about the shop. Be brief.', greeting: 'Hello {{first_name}}, this is the shop.', tts_provider: 'elevenlabs', flow_nodes_count: 0 });

    // An edit is a PATCH of what changed.
    await page.getByRole('textbox', { name: 'Temperature' }).fill('0.3');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    // (The creation's "saved" toast may still be up: wait for the new version instead.)
    await page.getByText('v2', { exact: true }).waitFor();
    expect((await api('GET', `/api/agents/${agent.id}`)).llm_settings).toEqual({ temperature: 0.3 });
    await page.getByRole('button', { name: 'Dismiss the secret' }).click();
    await screenshot(page, 'agent-editor');
  });

  it('builds a three-node flow by dragging and connecting, and keeps it across a reload', async () => {
    const agent = await api('POST', '/api/agents', { name: 'booking', prompt: 'You book appointments.' });
    await page.goto(`${h.api.url}/agents/${agent.id}/flow`);
    for (const key of ['greet', 'ask_date', 'confirm']) {
      await page.getByRole('button', { name: 'Add node' }).click();
      await page.getByRole('textbox', { name: 'Node key' }).fill(key);
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      await page.getByTestId(`flow-node-${key}`).waitFor();
    }
    const node = (key: string) => page.locator(`.react-flow__node[data-id="${key}"]`);

    // Drag "confirm" below the others — once the canvas has stopped re-framing (it fits the view
    // shortly after a node is added, and the add dialog fades out): a press on a stale position
    // would pan the canvas instead.
    const before = await stableBox(node('confirm'));
    await page.mouse.move(before.x + before.width / 2, before.y + 20);
    await page.mouse.down();
    await page.mouse.move(before.x + before.width / 2 - 80, before.y + 260, { steps: 12 });
    await page.mouse.up();
    await eventually(async () => {
      const flow = await api('GET', `/api/agents/${agent.id}/flow`);
      const xy = flow.nodes.find((n: any) => n.node_key === 'confirm').position_xy;
      return xy && xy.y >= 200 && xy;
    });

    // Connect greet → ask_date → confirm, handle to handle.
    const edges = page.locator('.react-flow__edge');
    const connect = async (from: string, to: string) => {
      const count = await edges.count();
      const source = await stableBox(node(from).locator('.react-flow__handle.source'));
      const target = await stableBox(node(to).locator('.react-flow__handle.target'));
      await page.mouse.move(source.x + source.width / 2, source.y + source.height / 2);
      await page.mouse.down();
      await page.mouse.move(target.x + target.width / 2, target.y + target.height / 2, { steps: 15 });
      await page.mouse.up();
      // Saved and drawn (the nodes may change size as their problems go away) before the next one.
      await edges.nth(count).waitFor();
    };
    await connect('greet', 'ask_date');
    await connect('ask_date', 'confirm');
    const flow = await eventually(async () => {
      const f = await api('GET', `/api/agents/${agent.id}/flow`);
      return f.nodes.every((n: any) => n.node_key === 'confirm' || n.functions.length === 1) && f;
    });
    const transitions = flow.nodes.flatMap((n: any) => n.functions.map((fn: any) => `${n.node_key}>${fn.next_node_key}`));
    expect(transitions).toEqual(['greet>ask_date', 'ask_date>confirm']);
    expect(flow.problems).toEqual([]);
    expect(flow.nodes.find((n: any) => n.node_key === 'greet').is_initial).toBe(true);

    // A node's messages, with their {{variables}} highlighted, edited in the side panel.
    await node('greet').click();
    await page.getByRole('button', { name: 'Add task message' }).click();
    await page.getByRole('textbox', { name: 'Task messages 1', exact: true }).fill('Greet {{first_name}} and ask which day suits them.');
    await page.getByTestId('variable-preview').locator('mark').filter({ hasText: '{{first_name}}' }).waitFor();
    await page.getByRole('switch', { name: 'Terminal' }).waitFor();
    await page.getByRole('button', { name: 'Save node' }).click();
    await page.getByText('Node greet saved').waitFor();
    await screenshot(page, 'flow-editor');

    await page.reload();
    await node('confirm').waitFor();
    expect(await page.locator('.react-flow__edge').count()).toBe(2);
    const greetBox = (await node('greet').boundingBox())!;
    const confirmBox = (await node('confirm').boundingBox())!;
    expect(confirmBox.y).toBeGreaterThan(greetBox.y + 150);
    const kept = await api('GET', `/api/agents/${agent.id}/flow`);
    expect(kept.nodes.find((n: any) => n.node_key === 'greet').task_messages).toEqual([{ role: 'system', content: 'Greet {{first_name}} and ask which day suits them.' }]);
    expect(await page.getByRole('status', { name: 'Flow problems' }).count()).toBe(0);

    // Removing the last transition leaves "confirm" unreachable: the graph says so on the node.
    await page.locator('.react-flow__edge').filter({ hasText: 'go_to_confirm' }).click();
    await page.keyboard.press('Delete');
    await page.getByTestId('flow-node-confirm').getByText('unreachable from the initial node').waitFor();
  });

  it('exports an agent bundle and imports it back, asking before overwriting', async () => {
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('button', { name: 'Actions for support-bot' }).click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: 'Export bundle' }).click()]);
    expect(download.suggestedFilename()).toBe('support-bot.agent.json');
    const bundle = JSON.parse(fs.readFileSync((await download.path())!, 'utf8'));
    expect(bundle).toMatchObject({ version: '1', agent: { name: 'support-bot', tts_provider: 'elevenlabs' }, flow_nodes: [] });

    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Import bundle' }).click()]);
    const edited = { ...bundle, agent: { ...bundle.agent, prompt: 'Imported prompt.' } };
    await chooser.setFiles({ name: 'support-bot.agent.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(edited)) });
    const dialog = page.getByRole('dialog', { name: 'Agent exists' });
    await dialog.getByText('already exists').waitFor();
    await dialog.getByRole('button', { name: 'Overwrite' }).click();
    await page.getByText('Imported support-bot').waitFor();
    expect((await api('GET', `/api/agents/${(await agentNamed('support-bot'))!.id}`)).prompt).toBe('Imported prompt.');
  });

  it('creates a webhook tool and tests it against a local receiver', async () => {
    hook.respond({ status: 200, body: { status: 'shipped' } }, { path: '/orders' });
    await page.getByRole('link', { name: 'Tools' }).click();
    await page.getByRole('button', { name: 'New tool' }).click();
    const form = page.getByRole('form', { name: 'New tool' });
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill('lookup_order');
    await form.getByRole('textbox', { name: 'Description' }).fill('Look up an order by its number');
    await form.getByRole('textbox', { name: 'Webhook URL' }).fill(`${hook.url}/orders`);
    await form.getByRole('button', { name: 'Add parameter' }).click();
    await form.getByRole('textbox', { name: 'Parameter 1 name' }).fill('order_id');
    await form.getByRole('textbox', { name: 'Parameter 1 description' }).fill('the order number');
    await form.getByRole('checkbox', { name: 'required' }).check();
    await form.getByRole('button', { name: 'Add header' }).click();
    await form.getByRole('textbox', { name: 'Header 1' }).fill('X-Shop-Key');
    await form.getByRole('textbox', { name: 'Value 1' }).fill('shop-secret');
    await form.getByRole('button', { name: 'Save tool' }).click();
    await page.getByText('Tool lookup_order saved').waitFor();

    await page.getByRole('button', { name: 'Test lookup_order' }).click();
    await page.getByRole('textbox', { name: 'Arguments' }).fill('{"order_id": "A-17"}');
    await page.getByRole('button', { name: 'Send test request' }).click();
    const result = page.getByRole('region', { name: 'Test result' });
    await result.getByText('200', { exact: true }).waitFor();
    await result.getByText(/\d+ ms/).waitFor();
    expect(await page.getByTestId('tool-test-response').textContent()).toContain('"status": "shipped"');

    const request = await hook.waitForRequest((r) => r.path === '/orders');
    expect(request.body).toEqual({ order_id: 'A-17' });
    expect(request.headers['x-shop-key']).toBe('shop-secret');
    const tools = await api('GET', '/api/tools');
    expect(tools[0]).toMatchObject({ name: 'lookup_order', parameters: { properties: { order_id: { type: 'string', description: 'the order number' } }, required: ['order_id'] } });
    await page.keyboard.press('Escape');
  });

  it('adds an MCP server, refreshes its tools and tests one', async () => {
    await page.getByRole('link', { name: 'MCP servers' }).click();
    await page.getByRole('button', { name: 'New MCP server' }).click();
    const form = page.getByRole('form', { name: 'New MCP server' });
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill('crm');
    await form.getByRole('textbox', { name: 'URL' }).fill(mcp.url);
    await form.getByRole('button', { name: 'Add header' }).click();
    await form.getByRole('textbox', { name: 'Header 1' }).fill('Authorization');
    await form.getByRole('textbox', { name: 'Value 1' }).fill('Bearer crm-key-4242');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/MCP server crm saved/).waitFor();
    await page.getByText('Not refreshed yet').waitFor();

    await page.getByRole('button', { name: 'Refresh crm' }).click();
    await page.getByRole('button', { name: 'Test crm/lookup_customer' }).waitFor();
    await page.getByRole('button', { name: 'Test crm/lookup_customer' }).click();
    await page.getByRole('textbox', { name: 'Arguments' }).fill('{"customer_id": "C-5"}');
    await page.getByRole('button', { name: 'Call the tool' }).click();
    await page.getByRole('region', { name: 'Test result' }).getByText('ok', { exact: true }).waitFor();
    expect(await page.getByTestId('mcp-test-response').textContent()).toContain('"plan": "gold"');
    expect(mcp.calls.at(-1)).toMatchObject({ tool: 'lookup_customer', args: { customer_id: 'C-5' } });
    await page.keyboard.press('Escape');
    const [server] = await api('GET', '/api/mcp-servers');
    expect(server.headers).toEqual({ Authorization: '****4242' });
  });

  it('drafts an agent from a description and saves it after review', async () => {
    const draft = {
      name: 'Clinic Reminder',
      prompt: 'You call patients of Sunrise Clinic to confirm their appointment on {{appointment_date}}. Speak Hindi.',
      greeting: 'नमस्ते {{patient_name}}!',
      context_variables: [{ name: 'patient_name', type: 'string', description: 'patient first name' }],
      pipeline_settings: { idle_warn_secs: null, idle_end_secs: null, min_words: 1 },
      llm_settings: { temperature: 0.3 },
      suggested_tools: [],
    };
    llm.enqueue({ content: JSON.stringify(draft) });
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('button', { name: 'Generate' }).click();
    await page.getByRole('textbox', { name: 'What should the agent do?' }).fill('Call patients a day before to confirm their appointment.');
    await page.getByRole('textbox', { name: 'Language' }).fill('hi');
    await page.getByRole('button', { name: 'Generate draft' }).click();

    // Nothing is saved yet: the draft is in the editor, with the server's completions.
    await page.getByRole('heading', { name: 'Review generated agent' }).waitFor();
    expect(await page.getByRole('textbox', { name: 'Name', exact: true }).inputValue()).toBe('clinic-reminder');
    expect(await page.getByRole('textbox', { name: 'STT language' }).inputValue()).toBe('hi-IN');
    expect(await page.getByRole('textbox', { name: 'Variable' }).inputValue()).toBe('patient_name');
    expect(await agentNamed('clinic-reminder')).toBeUndefined();

    await page.getByRole('textbox', { name: 'Greeting' }).fill('नमस्ते {{patient_name}}, सनराइज़ क्लिनिक से।');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { name: 'clinic-reminder' }).waitFor();
    const saved = await api('GET', `/api/agents/${(await agentNamed('clinic-reminder'))!.id}`);
    expect(saved).toMatchObject({
      greeting: 'नमस्ते {{patient_name}}, सनराइज़ क्लिनिक से।',
      stt_language: 'hi-IN',
      llm_settings: { temperature: 0.3 },
      pipeline_settings: { min_words: 1 },
      context_variables: { patient_name: { type: 'string', description: 'patient first name' } },
    });
  });

  it('stores telephony credentials write-only and shows a number’s inbound webhook URL to copy', async () => {
    await page.getByRole('link', { name: 'Telephony' }).click();
    const form = page.getByRole('form', { name: 'Telephony settings' });
    await form.getByRole('textbox', { name: 'Public base URL' }).fill('https://voice.example.com');
    await form.getByRole('textbox', { name: 'Account sid' }).fill('AC0123456789');
    await form.getByLabel('Auth token').fill('twilio-secret-9876');
    await form.getByRole('textbox', { name: 'Phone number' }).fill('+14155550100');
    await form.getByRole('button', { name: 'Save telephony settings' }).click();
    await page.getByText('Telephony settings saved').waitFor();
    // The secret never comes back: the field stays empty and says what is stored, masked.
    await form.getByText('Stored: ****9876. Leave empty to keep it.').waitFor();
    expect(await form.getByLabel('Auth token').inputValue()).toBe('');
    const stored = await api('GET', '/api/settings/telephony');
    expect(stored).toMatchObject({ provider: 'twilio', twilio_account_sid: 'AC0123456789', twilio_auth_token: '****9876' });

    // Saving again without touching the secret keeps it.
    await form.getByRole('textbox', { name: 'Phone number' }).fill('+14155550111');
    await form.getByRole('button', { name: 'Save telephony settings' }).click();
    await page.getByText('Telephony settings saved').first().waitFor();
    await eventually(async () => (await api('GET', '/api/settings/telephony')).twilio_phone_number === '+14155550111');
    expect((await api('GET', '/api/settings/telephony')).twilio_auth_token).toBe('****9876');

    await page.getByRole('link', { name: 'Phone numbers' }).click();
    await page.getByRole('button', { name: 'Add number' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a phone number' });
    await dialog.getByRole('textbox', { name: 'Phone number' }).fill('+14155550111');
    await dialog.getByLabel('Provider').fill('twilio');
    await dialog.getByLabel('Provider').press('Tab');
    await dialog.getByRole('combobox', { name: 'Inbound agent' }).click();
    await page.getByRole('option', { name: 'support-bot', exact: true }).click();
    await dialog.getByRole('button', { name: 'Save' }).click();
    const table = page.getByRole('table', { name: 'Phone numbers' });
    await table.getByText('https://voice.example.com/telephony/twilio/inbound/support-bot').waitFor();
    await table.getByRole('button', { name: 'Copy webhook URL of +14155550111' }).waitFor();
  });

  it('answers in the assistant side panel on every page', async () => {
    llm.enqueue({ content: 'You have two agents: support-bot and booking.' });
    await page.getByRole('button', { name: 'Toggle assistant' }).click();
    await page.getByRole('textbox', { name: 'Message to the assistant' }).fill('Which agents do I have?');
    await page.getByRole('button', { name: 'Send to assistant' }).click();
    await page.getByText('You have two agents: support-bot and booking.').waitFor();
    expect(llm.requests.at(-1)!.body.messages.at(-1)).toMatchObject({ role: 'user', content: 'Which agents do I have?' });
    await page.getByRole('button', { name: 'Close assistant' }).click();
  });
});

describe('the dashboard, as a member', () => {
  let member: Page;
  beforeAll(async () => {
    await api('POST', '/api/users', { email: 'member@example.com', password: 'member-password', role: 'member' });
    member = await (await browser.newContext({ viewport: DESKTOP })).newPage();
  });

  it('cannot open user management', async () => {
    const errors = watchPageErrors(member);
    await logIn(member, h.api.url, 'member@example.com', 'member-password');
    const nav = member.getByRole('navigation', { name: 'Main navigation' });
    await nav.getByRole('link', { name: 'Agents' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Users' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Telephony' }).count()).toBe(0);

    // Typing the address: the API refuses (403) and the page says so instead of breaking.
    await member.goto(`${h.api.url}/settings/users`);
    await member.getByRole('alert').filter({ hasText: 'Not allowed' }).waitFor();
    expect(await member.getByRole('table', { name: 'Users' }).count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it('is sent to the login page when the token expires, and can log out', async () => {
    const user = (await h.db.models.User.findOne({ where: { email: 'member@example.com' } }))!;
    const expired = jwt.sign({ email: 'member@example.com', role: 'member' }, h.config.JWT_SECRET!, { algorithm: 'HS256', subject: user.get('id') as string, expiresIn: -10 });
    await member.evaluate(`localStorage.setItem('vap.token', ${JSON.stringify(expired)})`);
    await member.goto(`${h.api.url}/calls`);
    await member.getByText('Your session expired. Please log in again.').waitFor();

    await logIn(member, h.api.url, 'member@example.com', 'member-password');
    await member.getByRole('button', { name: 'Account menu' }).click();
    await member.getByRole('menuitem', { name: 'Log out' }).click();
    await member.getByRole('button', { name: 'Log in' }).waitFor();
    expect(await member.evaluate("localStorage.getItem('vap.token')")).toBeNull();
  });
});
