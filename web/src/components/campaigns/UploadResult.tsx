/** What the API made of an uploaded contact list: added, merged, do-not-call, and the rows it rejected with their line. */
import { Alert, Group, Stack, Table, Text } from '@mantine/core';
import type { CampaignUpload } from '../../api/types';

export function UploadResult({ upload }: { upload: CampaignUpload }) {
  return (
    <Stack gap="xs" role="region" aria-label="Upload result">
      <Group gap="lg">
        <Text size="sm">
          <b>{upload.added}</b> contacts to call
        </Text>
        <Text size="sm">
          <b>{upload.duplicates}</b> duplicates merged
        </Text>
        <Text size="sm">
          <b>{upload.skipped_dnc}</b> on the do-not-call list
        </Text>
        <Text size="sm" c={upload.invalid_count ? 'red' : undefined}>
          <b>{upload.invalid_count}</b> rejected
        </Text>
      </Group>
      {upload.missing_variables.length > 0 && (
        <Alert color="orange" title="Missing call parameters">
          The agent's prompt uses {upload.missing_variables.map((m) => `${m.name} (missing in ${m.rows} rows)`).join(', ')}; those calls get no value for it.
        </Alert>
      )}
      {upload.invalid.length > 0 && (
        <Table aria-label="Rejected rows" withTableBorder>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Line</Table.Th>
              <Table.Th>Phone</Table.Th>
              <Table.Th>Why</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {upload.invalid.map((r) => (
              <Table.Tr key={r.line}>
                <Table.Td>{r.line}</Table.Td>
                <Table.Td>{r.phone || '—'}</Table.Td>
                <Table.Td>{r.error}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {upload.invalid_count > upload.invalid.length && (
        <Text size="xs" c="dimmed">
          The first {upload.invalid.length} of {upload.invalid_count} rejected rows; the campaign's contacts list (state invalid) has them all.
        </Text>
      )}
    </Stack>
  );
}
