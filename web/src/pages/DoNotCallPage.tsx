/**
 * The do-not-call list (GET/POST/DELETE /api/do-not-call): the numbers no campaign of yours dials
 * (your own and the global list), adding numbers one a line, removing one. Administrators may add
 * to the global list every campaign honours.
 */
import { useState } from 'react';
import { Badge, Button, Checkbox, Pagination, Stack, Table, Text, Textarea, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { DoNotCallEntry } from '../api/types';
import { useSession } from '../auth';
import { ApiErrorAlert, QueryState } from '../components/ApiErrorAlert';
import { ConfirmModal } from '../components/ConfirmModal';
import { ListTable } from '../components/ListTable';
import { ModalForm } from '../components/ModalForm';
import { PageHeader } from '../components/PageHeader';
import { formatTime } from '../lib/format';
import { RowAction } from '../components/RowAction';

const PAGE_SIZE = 50;

function AddNumbersModal({ onClose }: { onClose(): void }) {
  const { isAdmin } = useSession();
  const queryClient = useQueryClient();
  const [numbers, setNumbers] = useState('');
  const [country, setCountry] = useState('');
  const [note, setNote] = useState('');
  const [global, setGlobal] = useState(false);
  const add = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/do-not-call', {
          body: { phone_numbers: numbers.split('\n').map((n) => n.trim()).filter(Boolean), ...(country.trim() ? { default_country: country.trim() } : {}), ...(note ? { note } : {}), global },
        }),
      ),
    onSuccess: (r) => {
      void queryClient.invalidateQueries({ queryKey: ['do-not-call'] });
      notifications.show({ message: `${r.added} numbers added`, color: 'green' });
      if (r.invalid.length === 0) onClose();
    },
  });
  return (
    <ModalForm opened title="Add to the do-not-call list" submitLabel="Add" busy={add.isPending} error={add.error} onSubmit={() => add.mutate()} onClose={onClose}>
      <Textarea label="Phone numbers" description="One a line: E.164, or national with the country below" required autosize minRows={4} value={numbers} onChange={(e) => setNumbers(e.currentTarget.value)} />
      <TextInput label="Country of national numbers" description="ISO code such as IN or US" value={country} onChange={(e) => setCountry(e.currentTarget.value)} />
      <TextInput label="Note" value={note} onChange={(e) => setNote(e.currentTarget.value)} />
      {isAdmin && <Checkbox label="Global: every campaign honours it, not only yours" checked={global} onChange={(e) => setGlobal(e.currentTarget.checked)} />}
      {add.data && add.data.invalid.length > 0 && (
        <Stack gap={2} role="region" aria-label="Rejected numbers">
          <Text size="sm" c="red">
            Not added:
          </Text>
          {add.data.invalid.map((r) => (
            <Text key={r.line} size="sm">
              line {r.line}: {r.phone || '—'} — {r.error}
            </Text>
          ))}
        </Stack>
      )}
    </ModalForm>
  );
}

export function DoNotCallPage() {
  const { user, isAdmin } = useSession();
  const queryClient = useQueryClient();
  const [page, setPage] = useState(1);
  const [adding, setAdding] = useState(false);
  const [removing, setRemoving] = useState<DoNotCallEntry | null>(null);
  const entries = useQuery({
    queryKey: ['do-not-call', page],
    queryFn: () => unwrap(api.GET('/api/do-not-call', { params: { query: { page, page_size: PAGE_SIZE } } })),
    placeholderData: keepPreviousData,
  });
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/do-not-call/{entry_id}', { params: { path: { entry_id: id } } })),
    onSuccess: () => {
      notifications.show({ message: `${removing?.phone_number} removed`, color: 'green' });
      setRemoving(null);
      void queryClient.invalidateQueries({ queryKey: ['do-not-call'] });
    },
  });
  const pages = Math.max(1, Math.ceil((entries.data?.total ?? 0) / PAGE_SIZE));
  const mayRemove = (e: DoNotCallEntry) => isAdmin || e.owner_id === user?.id;
  return (
    <>
      <PageHeader title="Do-not-call list">
        <Button leftSection={<IconPlus size={16} />} onClick={() => setAdding(true)}>
          Add numbers
        </Button>
      </PageHeader>
      <Text size="sm" c="dimmed" mb="sm">
        Campaigns never dial these numbers; a number added while a campaign runs is skipped from its next dial on.
      </Text>
      {remove.error && <ApiErrorAlert error={remove.error} />}
      <QueryState query={entries}>
        {({ entries: list }) => (
          <ListTable
            label="Do-not-call numbers"
            minWidth={560}
            columns={['Number', 'List', 'Note', 'Added', '']}
            items={list}
            rowKey={(e) => e.id}
            empty="No numbers on the list."
            row={(e) => (
              <>
                <Table.Td>{e.phone_number}</Table.Td>
                <Table.Td>
                  <Badge variant="light" color={e.owner_id ? 'gray' : 'grape'}>
                    {e.owner_id ? 'yours' : 'global'}
                  </Badge>
                </Table.Td>
                <Table.Td>{e.note ?? '—'}</Table.Td>
                <Table.Td>{formatTime(e.created_at)}</Table.Td>
                <Table.Td>
                  {mayRemove(e) && (
                    <RowAction label="Remove" ariaLabel={`Remove ${e.phone_number}`} icon={IconTrash} danger onClick={() => setRemoving(e)} />
                  )}
                </Table.Td>
              </>
            )}
          />
        )}
      </QueryState>
      {pages > 1 && <Pagination mt="sm" total={pages} value={page} onChange={setPage} getControlProps={(control) => ({ 'aria-label': `${control} page` })} />}
      {adding && <AddNumbersModal onClose={() => setAdding(false)} />}
      <ConfirmModal opened={removing !== null} title="Remove number" confirmLabel="Remove" danger busy={remove.isPending} onClose={() => setRemoving(null)} onConfirm={() => removing && remove.mutate(removing.id)}>
        Remove <b>{removing?.phone_number}</b> from the do-not-call list? Campaigns may dial it again.
      </ConfirmModal>
    </>
  );
}
