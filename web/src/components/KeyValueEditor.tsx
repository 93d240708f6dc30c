/** Rows of name → value (HTTP headers, a call's custom parameters). */
import { ActionIcon, Button, Group, Stack, Text, TextInput } from '@mantine/core';
import { IconPlus, IconTrash } from '@tabler/icons-react';

export interface KeyValueRow {
  key: string;
  value: string;
}

export const rowsOf = (record: Record<string, unknown> | null | undefined): KeyValueRow[] =>
  Object.entries(record ?? {}).map(([key, value]) => ({ key, value: String(value) }));

export const recordOf = (rows: KeyValueRow[]): Record<string, string> =>
  Object.fromEntries(rows.filter((r) => r.key.trim()).map((r) => [r.key.trim(), r.value]));

export function KeyValueEditor(props: {
  label: string;
  rows: KeyValueRow[];
  onChange(rows: KeyValueRow[]): void;
  keyLabel?: string;
  valueLabel?: string;
  addLabel?: string;
  error?: string;
}) {
  const { rows, onChange } = props;
  const set = (i: number, patch: Partial<KeyValueRow>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <Stack gap={6} role="group" aria-label={props.label}>
      <Text size="sm" fw={500}>
        {props.label}
      </Text>
      {rows.map((row, i) => (
        <Group key={i} gap="xs" wrap="nowrap" align="flex-start">
          <TextInput aria-label={`${props.keyLabel ?? 'Name'} ${i + 1}`} placeholder={props.keyLabel ?? 'Name'} style={{ flex: 1 }} value={row.key} onChange={(e) => set(i, { key: e.currentTarget.value })} />
          <TextInput aria-label={`${props.valueLabel ?? 'Value'} ${i + 1}`} placeholder={props.valueLabel ?? 'Value'} style={{ flex: 2 }} value={row.value} onChange={(e) => set(i, { value: e.currentTarget.value })} />
          <ActionIcon variant="subtle" color="red" size="lg" aria-label={`Remove ${props.keyLabel ?? 'row'} ${i + 1}`} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
            <IconTrash size={16} />
          </ActionIcon>
        </Group>
      ))}
      {props.error && (
        <Text size="xs" c="red" role="alert">
          {props.error}
        </Text>
      )}
      <Group>
        <Button variant="light" size="xs" leftSection={<IconPlus size={14} />} onClick={() => onChange([...rows, { key: '', value: '' }])}>
          {props.addLabel ?? 'Add'}
        </Button>
      </Group>
    </Stack>
  );
}
