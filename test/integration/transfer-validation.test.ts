/**
 * Flow nodes refer to the agent's transfer destinations by name: the API refuses, at save time,
 * a node whose pre_action transfers to a destination the agent does not have, a node offering
 * transfer_call on an agent without destinations, and an agent change that would leave a node
 * pointing at a destination it removed — whichever endpoint saves them (PUT /flow, the node
 * endpoints, PATCH /agents, bundle import).
 */
import { startHarness, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

const BILLING = { name: 'billing', phone_number: '+14155550123', description: 'Invoices and refunds', message: 'Connecting you to billing now.' };
const SALES = { name: 'sales', sip_uri: 'sip:sales@pbx.example.com', description: 'New plans', message: '' };

async function agentWith(name: string, transfer_destinations: unknown[]) {
  const res = await h.request('POST', '/api/agents', { body: { name, prompt: 'You are the front desk.', transfer_destinations } });
  expect(res.status).toBe(201);
  return res.body as { id: string };
}

const start = { node_key: 'start', is_initial: true, functions: [{ name: 'wants_human', description: 'The caller asks for a person', next_node_key: 'handover' }] };
const handover = (destination: string) => ({ node_key: 'handover', pre_actions: [{ type: 'say', text: 'One moment.' }, { type: 'transfer_call', destination }] });

describe('transfer destinations named by flow nodes', () => {
  it('PUT /flow refuses a pre_action naming an unknown destination, and accepts a known one', async () => {
    const agent = await agentWith('desk-put', [BILLING, SALES]);
    const bad = await h.request('PUT', `/api/agents/${agent.id}/flow`, { body: { nodes: [start, handover('biling')] } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toBe('nodes.1.pre_actions.1.destination: unknown transfer destination "biling" (the agent has: billing, sales)');
    expect((await h.request('GET', `/api/agents/${agent.id}/flow`)).body.nodes).toEqual([]);

    const good = await h.request('PUT', `/api/agents/${agent.id}/flow`, { body: { nodes: [{ ...start, builtin_tools: ['transfer_call'] }, handover('billing')] } });
    expect(good.status).toBe(200);
    expect(good.body.nodes[1].pre_actions[1]).toEqual({ type: 'transfer_call', destination: 'billing' });
  });

  it('the node endpoints refuse an unknown destination and transfer_call on an agent without destinations', async () => {
    const agent = await agentWith('desk-nodes', [BILLING]);
    const created = await h.request('POST', `/api/agents/${agent.id}/nodes`, { body: handover('sales') });
    expect(created.status).toBe(422);
    expect(created.body.detail).toBe('pre_actions.1.destination: unknown transfer destination "sales" (the agent has: billing)');
    expect((await h.request('POST', `/api/agents/${agent.id}/nodes`, { body: handover('billing') })).status).toBe(201);
    const patched = await h.request('PATCH', `/api/agents/${agent.id}/nodes/handover`, { body: { pre_actions: [{ type: 'transfer_call', destination: 'nobody' }] } });
    expect(patched.status).toBe(422);
    expect(patched.body.detail).toMatch(/^pre_actions\.0\.destination: unknown transfer destination "nobody"/);

    const bare = await agentWith('desk-bare', []);
    const offered = await h.request('POST', `/api/agents/${bare.id}/nodes`, { body: { node_key: 'start', is_initial: true, builtin_tools: ['end_call', 'transfer_call'] } });
    expect(offered.status).toBe(422);
    expect(offered.body.detail).toBe('builtin_tools.1: transfer_call needs transfer_destinations on the agent: add them first');
    const none = await h.request('POST', `/api/agents/${bare.id}/nodes`, { body: handover('billing') });
    expect(none.body.detail).toBe('pre_actions.1.destination: unknown transfer destination "billing" (the agent has no transfer_destinations)');
  });

  it('an agent cannot drop or rename a destination its flow still transfers to', async () => {
    const agent = await agentWith('desk-patch', [BILLING, SALES]);
    expect((await h.request('PUT', `/api/agents/${agent.id}/flow`, { body: { nodes: [start, handover('billing')] } })).status).toBe(200);
    const renamed = await h.request('PATCH', `/api/agents/${agent.id}`, { body: { transfer_destinations: [{ ...BILLING, name: 'accounts' }, SALES] } });
    expect(renamed.status).toBe(422);
    expect(renamed.body.detail).toBe('transfer_destinations: flow node "handover" transfers to "billing" (a pre_action): keep that destination or change the node first');
    // Dropping one nobody uses is fine.
    const dropped = await h.request('PATCH', `/api/agents/${agent.id}`, { body: { transfer_destinations: [BILLING] } });
    expect(dropped.status).toBe(200);
    expect(dropped.body.transfer_destinations.map((d: { name: string }) => d.name)).toEqual(['billing']);

    const offering = await agentWith('desk-offering', [BILLING]);
    expect((await h.request('PUT', `/api/agents/${offering.id}/flow`, { body: { nodes: [{ node_key: 'start', is_initial: true, builtin_tools: ['transfer_call'] }] } })).status).toBe(200);
    const emptied = await h.request('PATCH', `/api/agents/${offering.id}`, { body: { transfer_destinations: [] } });
    expect(emptied.status).toBe(422);
    expect(emptied.body.detail).toBe('transfer_destinations: flow node "start" offers transfer_call: keep a destination or change the node first');
  });

  it('a bundle whose flow transfers to a destination it does not define is refused, creating nothing', async () => {
    const bundle = {
      version: '1',
      agent: { name: 'desk-bundle', prompt: 'You are the front desk.', transfer_destinations: [BILLING] },
      tools: [],
      flow_nodes: [start, handover('support')],
    };
    const res = await h.request('POST', '/api/agents/import', { body: bundle });
    expect(res.status).toBe(422);
    expect(res.body.detail).toBe('flow_nodes.1.pre_actions.1.destination: unknown transfer destination "support" (the agent has: billing)');
    const agents = (await h.request('GET', '/api/agents')).body as Array<{ name: string }>;
    expect(agents.some((a) => a.name === 'desk-bundle')).toBe(false);
    expect((await h.request('POST', '/api/agents/import', { body: { ...bundle, flow_nodes: [start, handover('billing')] } })).status).toBe(201);
  });

  it('a destination is cold by default; warm keeps its summary prompt, hold audio and wait, through PATCH and the bundle', async () => {
    const cold = await agentWith('desk-cold', [BILLING]);
    const got = (await h.request('GET', `/api/agents/${cold.id}`)).body;
    expect(got.transfer_destinations[0]).toMatchObject({ name: 'billing', mode: 'cold', summary_prompt: null, hold_audio: 'tone', max_wait_secs: 30 });

    const warm = { ...BILLING, mode: 'warm', summary_prompt: 'the invoice number and the amount', hold_audio: 'https://cdn.example.com/hold.mp3', max_wait_secs: 45 };
    const patched = await h.request('PATCH', `/api/agents/${cold.id}`, { body: { transfer_destinations: [warm] } });
    expect(patched.status).toBe(200);
    expect(patched.body.transfer_destinations[0]).toMatchObject(warm);

    const exported = (await h.request('GET', `/api/agents/${cold.id}/export`)).body;
    expect(exported.agent.transfer_destinations[0]).toMatchObject(warm);
    const imported = await h.request('POST', '/api/agents/import', { body: { ...exported, agent: { ...exported.agent, name: 'desk-warm-copy' } } });
    expect(imported.status).toBe(201);
    const copy = (await h.request('GET', '/api/agents')).body.find((a: { name: string }) => a.name === 'desk-warm-copy');
    expect(copy.transfer_destinations[0]).toMatchObject(warm);

    for (const [field, value, detail] of [
      ['mode', 'lukewarm', /^transfer_destinations\.0\.mode: /],
      ['hold_audio', 'ftp://example.com/x.wav', /^transfer_destinations\.0\.hold_audio: /],
      ['max_wait_secs', 2, /^transfer_destinations\.0\.max_wait_secs: /],
      ['summary_prompt', '', /^transfer_destinations\.0\.summary_prompt: /],
    ] as const) {
      const res = await h.request('PATCH', `/api/agents/${cold.id}`, { body: { transfer_destinations: [{ ...warm, [field]: value }] } });
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(detail);
    }
  });
});
