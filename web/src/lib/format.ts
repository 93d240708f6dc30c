/** Display helpers for the API's values (timestamps are UTC without an offset). */
export function parseApiTime(ts: string | null | undefined): Date | null {
  if (!ts) return null;
  return new Date(/(Z|[+-]\d{2}:?\d{2})$/.test(ts) ? ts : `${ts}Z`);
}

export function formatTime(ts: string | null | undefined): string {
  const d = parseApiTime(ts);
  return d ? d.toLocaleString() : '—';
}

export function formatDuration(secs: number | null | undefined): string {
  if (secs === null || secs === undefined) return '—';
  const m = Math.floor(secs / 60);
  const s = Math.round(secs % 60);
  return m ? `${m}m ${s}s` : `${secs.toFixed(secs < 10 ? 1 : 0)}s`;
}

export const STATUS_COLOR: Record<string, string> = {
  ringing: 'yellow',
  in_progress: 'blue',
  completed: 'green',
  failed: 'red',
  no_answer: 'gray',
};

/** The end reason, and for a hand-over the destination it went to (its transfer_completed event). */
export function endReasonText(reason: string | null | undefined, events: ReadonlyArray<{ event_type: string; data: Record<string, unknown> }>): string {
  if (!reason) return '—';
  if (reason !== 'transferred') return reason;
  const done = events.find((e) => e.event_type === 'transfer_completed');
  return typeof done?.data.destination === 'string' ? `transferred to ${done.data.destination}` : reason;
}

export const isLive = (status: string) => status === 'ringing' || status === 'in_progress';

/** Saves JSON as a file download. */
export function downloadJson(filename: string, value: unknown) {
  const url = URL.createObjectURL(new Blob([JSON.stringify(value, null, 2)], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.click();
  URL.revokeObjectURL(url);
}
