/**
 * What the warm-transfer tests of every vendor share (warm-transfer-twilio, warm-transfer-plivo):
 * the destinations, the summary the LLM fake gives, and the agent's script.
 */
import type { FakeOpenAI } from '../fakes/openai-server';

export const MS_PER_CHAR = 60; // the TTS fake's audio length per character
export const SUMMARY = 'The caller wants a refund for invoice 1234; I have checked it was paid twice.';

export const warmDestinations = (billing: string, sales: string) => [
  { name: 'billing', phone_number: billing, description: 'Invoices, refunds and payments', message: 'Please hold while I brief billing.', mode: 'warm', max_wait_secs: 10 },
  { name: 'sales', phone_number: sales, description: 'New plans and upgrades', message: 'One moment.', mode: 'warm', max_wait_secs: 5 },
];

export const lastMessage = (body: any) => body.messages[body.messages.length - 1];
/** The briefing's LLM request (src/shared/warm-briefing.ts), told from the call's own. */
export const isBriefing = (body: any) => String(body.messages[0]?.content ?? '').includes('handing a call over to a colleague');

/** An agent that transfers to `destination` on the caller's first words, and says `sorry` when a transfer fails. */
export function scriptWarmAgent(openai: FakeOpenAI, destination: string, sorry: string, briefings: any[]): void {
  openai.setResponder((body) => {
    const last = lastMessage(body);
    if (isBriefing(body)) {
      briefings.push(body);
      return { content: SUMMARY };
    }
    if (last.role === 'tool' && String(last.content).includes('did not go through')) return { content: sorry };
    if (last.role === 'user') return { tool_calls: [{ name: 'transfer_call', arguments: { destination } }] };
    return { content: 'Sorry?' };
  });
}
