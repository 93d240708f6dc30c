/**
 * The agent form's Transfer section: the agent's `transfer_destinations` as rows, and their
 * conversion to the API's list. Each row is where the agent may hand the caller to a human
 * (builtin tool transfer_call, docs/phone-operations.md#transfer-to-a-human).
 */
import type { Agent } from '../api/types';

export interface DestinationRow {
  name: string;
  phone_number: string;
  sip_uri: string;
  description: string;
  message: string;
}

export const DESTINATION_FIELDS = ['name', 'phone_number', 'sip_uri', 'description', 'message'] as const satisfies ReadonlyArray<keyof DestinationRow>;

export const emptyDestination = (): DestinationRow => ({ name: '', phone_number: '', sip_uri: '', description: '', message: '' });

export function destinationRows(list: Agent['transfer_destinations'] | undefined): DestinationRow[] {
  return (list ?? []).map((d) => ({
    name: d.name,
    phone_number: d.phone_number ?? '',
    sip_uri: d.sip_uri ?? '',
    description: d.description,
    message: d.message ?? '',
  }));
}

/**
 * The request's list, or undefined when the rows did not change. Every row goes as typed (an
 * empty row too), so the API's errors name the row the user sees at that index.
 */
export function destinationsRequest(rows: DestinationRow[], initial: DestinationRow[]) {
  if (JSON.stringify(rows) === JSON.stringify(initial)) return undefined;
  return rows.map((r) => ({
    name: r.name.trim(),
    phone_number: r.phone_number.trim() || null,
    sip_uri: r.sip_uri.trim() || null,
    description: r.description.trim(),
    message: r.message.trim(),
  }));
}

/** "transfer_destinations.1.phone_number" is shown at that input of row 2. */
export function destinationFormPath(apiField: string): string | undefined {
  const m = /^transfer_destinations\.(\d+)\.(\w+)$/.exec(apiField);
  return m && (DESTINATION_FIELDS as readonly string[]).includes(m[2]!) ? apiField : undefined;
}
