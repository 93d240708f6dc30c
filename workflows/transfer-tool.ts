/** The transfer_call builtin tool's schema (docs/phone-operations.md#transfer-to-a-human). Workflow-safe. */
import { TRANSFER_CALL, type TransferDestination } from '../src/shared/transfer';
import type { LlmToolSpec } from './call-definitions';

/** The transfer_call tool as the LLM sees it: one enum parameter, the descriptions listed. */
export function transferToolSpec(destinations: TransferDestination[]): LlmToolSpec {
  const list = destinations.map((d) => `- ${d.name}: ${d.description}`).join('\n');
  return {
    type: 'function',
    function: {
      name: TRANSFER_CALL,
      description: `Transfer the caller to a human at one of these destinations (the call with you ends once they are connected):\n${list}`,
      parameters: {
        type: 'object',
        properties: { destination: { type: 'string', enum: destinations.map((d) => d.name), description: 'the destination name' } },
        required: ['destination'],
      },
    },
  };
}
