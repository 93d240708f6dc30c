/** A list as a table: scrolls inside its own box on narrow screens, says so when it is empty. */
import { Table, Text, VisuallyHidden } from '@mantine/core';
import type { ReactNode } from 'react';

/** A column headed '' holds row actions; its header is only read out. */
export function ListTable<T>(props: { label: string; minWidth: number; columns: string[]; items: T[]; rowKey(item: T): string; row(item: T): ReactNode; empty: ReactNode }) {
  return (
    <Table.ScrollContainer minWidth={props.minWidth}>
      <Table striped highlightOnHover aria-label={props.label}>
        <Table.Thead>
          <Table.Tr>
            {props.columns.map((c) => (
              <Table.Th key={c}>{c || <VisuallyHidden>Actions</VisuallyHidden>}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {props.items.map((item) => (
            <Table.Tr key={props.rowKey(item)}>{props.row(item)}</Table.Tr>
          ))}
          {props.items.length === 0 && (
            <Table.Tr>
              <Table.Td colSpan={props.columns.length}>
                <Text c="dimmed">{props.empty}</Text>
              </Table.Td>
            </Table.Tr>
          )}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
