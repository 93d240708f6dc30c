/**
 * The demo's printout of a finished call (scripts/demo.ts): its transcript, marking the replies
 * the caller cut off, and its events with the details worth reading.
 */

export interface CallEvent {
  id: number;
  event_type: string;
  timestamp: string;
  data: Record<string, any>;
}

/** Seconds since the phone rang, of an epoch-ms time. */
type At = (ms: number) => string;

export function printTranscript(call: { transcript: unknown }, events: CallEvent[], at: At, print: (line: string) => void): void {
  print('\nTranscript (GET /api/calls/{id}; times: when each entry was recorded):');
  const spoke = events.filter((e) => e.event_type === 'agent_spoke');
  let agentIdx = 0;
  for (const entry of call.transcript as Array<{ role: string; text: string; timestamp: string }>) {
    const cut = entry.role === 'assistant' && spoke[agentIdx++]?.data.interrupted ? '  [cut off by the caller]' : '';
    print(`  ${at(Date.parse(`${entry.timestamp}Z`))}  ${entry.role === 'user' ? 'caller' : 'agent '}  ${entry.text}${cut}`);
  }
}

export function printEvents(events: CallEvent[], at: At, print: (line: string) => void): void {
  print(`\nEvents (GET /api/calls/{id}/events): ${events.length}`);
  const counts = new Map<string, number>();
  for (const e of events) counts.set(e.event_type, (counts.get(e.event_type) ?? 0) + 1);
  print(`  ${[...counts].map(([t, n]) => (n > 1 ? `${t} ×${n}` : t)).join(' · ')}`);
  for (const e of events) {
    const d = e.data;
    let text: string | null = null;
    if (e.event_type === 'tool_called') text = `${d.function}(${JSON.stringify(d.args)})`;
    else if (e.event_type === 'tool_result') text = `${d.function} → ${JSON.stringify(d.result)}${d.duration_ms !== undefined ? ` in ${d.duration_ms} ms` : ''}`;
    else if (e.event_type === 'interruption') text = `heard before the barge-in: "${d.heard_text}"`;
    else if (e.event_type === 'call_status') text = `${d.status}${d.source ? ` (${d.source})` : ''}${d.ignored ? ' ignored' : ''}`;
    else if (e.event_type === 'call_ended') text = `${d.status}, ${d.end_reason}, usage ${JSON.stringify(d.usage)}`;
    else if (e.event_type === 'transfer_started') text = `${d.mode} transfer to ${d.destination} (${d.to})`;
    else if (e.event_type === 'transfer_completed') text = `${d.destination} answered: the caller is theirs`;
    else if (e.event_type === 'transfer_failed') text = `${d.destination}: ${d.reason}`;
    else if (e.event_type === 'error') text = `${d.context}: ${d.message}`;
    if (text) print(`  ${at(Date.parse(`${e.timestamp}Z`))}  ${e.event_type.padEnd(18)} ${text}`);
  }
}
