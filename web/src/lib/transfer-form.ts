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
  /** cold, or warm: the agent briefs the person first (docs/phone-operations.md#warm-transfer). */
  mode: 'cold' | 'warm';
  /** Warm: empty for the API's default. */
  summary_prompt: string;
  /** Warm: `tone` or an http(s) URL. */
  hold_audio: string;
  max_wait_secs: number | string;
}

export const DESTINATION_FIELDS = ['name', 'phone_number', 'sip_uri', 'description', 'message', 'mode', 'summary_prompt', 'hold_audio', 'max_wait_secs'] as const satisfies ReadonlyArray<keyof DestinationRow>;

export const emptyDestination = (): DestinationRow => ({ name: '', phone_number: '', sip_uri: '', description: '', message: '', mode: 'cold', summary_prompt: '', hold_audio: 'tone', max_wait_secs: 30 });

export function destinationRows(list: Agent['transfer_destinations'] | undefined): DestinationRow[] {
  return (list ?? []).map((d) => ({
    name: d.name,
    phone_number: d.phone_number ?? '',
    sip_uri: d.sip_uri ?? '',
    description: d.description,
    message: d.message ?? '',
    mode: d.mode ?? 'cold',
    summary_prompt: d.summary_prompt ?? '',
    hold_audio: d.hold_audio ?? 'tone',
    max_wait_secs: d.max_wait_secs ?? 30,
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
    mode: r.mode,
    summary_prompt: r.summary_prompt.trim() || null,
    hold_audio: r.hold_audio.trim() || 'tone',
    // A number the user typed goes as typed; an emptied field takes the default.
    max_wait_secs: r.max_wait_secs === '' ? 30 : Number(r.max_wait_secs),
  }));
}

/** "transfer_destinations.1.phone_number" is shown at that input of row 2. */
export function destinationFormPath(apiField: string): string | undefined {
  const m = /^transfer_destinations\.(\d+)\.(\w+)$/.exec(apiField);
  return m && (DESTINATION_FIELDS as readonly string[]).includes(m[2]!) ? apiField : undefined;
}
