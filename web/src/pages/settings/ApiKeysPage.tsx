/** The user's API keys for server-to-server use; a new key is shown once. */
import { useState } from 'react';
import { ActionIcon, Alert, Button, Code, CopyButton, Group, Table, TextInput } from '@mantine/core';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { ApiKey } from '../../api/types';
import { ApiErrorAlert, QueryState } from '../../components/ApiErrorAlert';
import { ConfirmModal } from '../../components/ConfirmModal';
import { ListTable } from '../../components/ListTable';
import { ModalForm } from '../../components/ModalForm';
import { PageHeader } from '../../components/PageHeader';
import { formatTime } from '../../lib/format';

export function ApiKeysPage() {
  const queryClient = useQueryClient();
  const keys = useQuery({ queryKey: ['api-keys'], queryFn: () => unwrap(api.GET('/api/auth/api-keys')) });
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const create = useMutation({
    mutationFn: () => unwrap(api.POST('/api/auth/api-keys', { body: { name } })),
    onSuccess: (k) => {
      setCreating(false);
      setName('');
      setCreated(k.key ?? null);
      void queryClient.invalidateQueries({ queryKey: ['api-keys'] });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/auth/api-keys/{key_id}', { params: { path: { key_id: id } } })),
    onSuccess: () => {
      setRevoking(null);
      void queryClient.invalidateQueries({ queryKey: ['api-keys'] });
    },
  });
  return (
    <>
      <PageHeader title="API keys">
        <Button leftSection={<IconPlus size={16} />} onClick={() => setCreating(true)}>
          New key
        </Button>
      </PageHeader>
      {created && (
        <Alert color="blue" title="Your new API key (shown once)" mb="md" withCloseButton closeButtonLabel="Dismiss the key" onClose={() => setCreated(null)}>
          <Group gap="xs">
            <Code>{created}</Code>
            <CopyButton value={created}>{({ copied, copy }) => <Button size="xs" variant="light" onClick={copy}>{copied ? 'Copied' : 'Copy'}</Button>}</CopyButton>
          </Group>
        </Alert>
      )}
      {revoke.error && <ApiErrorAlert error={revoke.error} />}
      <QueryState query={keys}>
        {(list) => (
          <ListTable
            label="API keys"
            minWidth={520}
            columns={['Name', 'Starts with', 'Created', 'Last used', '']}
            items={list}
            rowKey={(k) => k.id}
            empty="No API keys."
            row={(k) => (
              <>
                <Table.Td>{k.name}</Table.Td>
                <Table.Td>
                  <Code>{k.prefix}…</Code>
                </Table.Td>
                <Table.Td>{formatTime(k.created_at)}</Table.Td>
                <Table.Td>{formatTime(k.last_used_at)}</Table.Td>
                <Table.Td>
                  <ActionIcon variant="subtle" color="red" aria-label={`Revoke ${k.name}`} onClick={() => setRevoking(k)}>
                    <IconTrash size={18} />
                  </ActionIcon>
                </Table.Td>
              </>
            )}
          />
        )}
      </QueryState>
      <ModalForm opened={creating} title="New API key" submitLabel="Create key" busy={create.isPending} error={create.error} onSubmit={() => create.mutate()} onClose={() => setCreating(false)}>
        <TextInput label="Name" description="What uses it, e.g. crm-sync" required data-autofocus value={name} onChange={(e) => setName(e.currentTarget.value)} />
      </ModalForm>
      <ConfirmModal opened={revoking !== null} title="Revoke key" confirmLabel="Revoke" danger busy={revoke.isPending} onClose={() => setRevoking(null)} onConfirm={() => revoking && revoke.mutate(revoking.id)}>
        Revoke <b>{revoking?.name}</b>? Requests with it fail at once.
      </ConfirmModal>
    </>
  );
}
