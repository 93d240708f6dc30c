/** Adds a transfer_call pre-action naming one of the agent's transfer destinations. */
import { Select } from '@mantine/core';

/** The pre-actions JSON with `action` appended; text that is not a list is left for the user to fix. */
export function appendPreAction(json: string, action: Record<string, unknown>): string {
  try {
    const list = JSON.parse(json.trim() || '[]');
    if (Array.isArray(list)) return JSON.stringify([...list, action], null, 2);
  } catch {
    // not JSON: keep what the user typed
  }
  return json;
}

export function TransferPreActionPicker({ destinations, onPick }: { destinations: string[]; onPick(destination: string): void }) {
  if (destinations.length === 0) return null;
  return (
    <Select
      label="Add a transfer pre-action"
      description="On entry, the agent says the destination's message and hands the caller over"
      placeholder="pick a destination"
      data={destinations}
      value={null}
      onChange={(v) => v && onPick(v)}
      clearable={false}
    />
  );
}
