/** User management (administrators; the API answers 403 to anyone else, shown as such). */
import { useState } from 'react';
import { ActionIcon, Badge, Button, PasswordInput, Select, Table, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { USER_ROLES } from '../../api/enums';
import type { User } from '../../api/types';
import { useSession } from '../../auth';
import { ApiErrorAlert, QueryState } from '../../components/ApiErrorAlert';
import { ConfirmModal } from '../../components/ConfirmModal';
import { ListTable } from '../../components/ListTable';
import { ModalForm } from '../../components/ModalForm';
import { PageHeader } from '../../components/PageHeader';
import { formatTime } from '../../lib/format';

export function UsersPage() {
  const { user: me } = useSession();
  const queryClient = useQueryClient();
  const users = useQuery({ queryKey: ['users'], queryFn: () => unwrap(api.GET('/api/users')) });
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<User | null>(null);
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/users/{user_id}', { params: { path: { user_id: id } } })),
    onSuccess: () => {
      setDeleting(null);
      void queryClient.invalidateQueries({ queryKey: ['users'] });
    },
  });
  return (
    <>
      <PageHeader title="Users">
        {users.isSuccess && (
          <Button leftSection={<IconPlus size={16} />} onClick={() => setCreating(true)}>
            New user
          </Button>
        )}
      </PageHeader>
      {remove.error && <ApiErrorAlert error={remove.error} />}
      <QueryState query={users}>
        {(list) => (
          <ListTable
            label="Users"
            minWidth={520}
            columns={['Email', 'Role', 'Created', '']}
            items={list}
            rowKey={(u) => u.id}
            empty="No users."
            row={(u) => (
              <>
                <Table.Td>{u.email}</Table.Td>
                <Table.Td>
                  <Badge variant="light" color={u.role === 'admin' ? 'red' : 'blue'}>
                    {u.role}
                  </Badge>
                </Table.Td>
                <Table.Td>{formatTime(u.created_at)}</Table.Td>
                <Table.Td>
                  {u.id !== me?.id && (
                    <ActionIcon variant="subtle" color="red" aria-label={`Delete ${u.email}`} onClick={() => setDeleting(u)}>
                      <IconTrash size={18} />
                    </ActionIcon>
                  )}
                </Table.Td>
              </>
            )}
          />
        )}
      </QueryState>
      {creating && <NewUserModal onClose={() => setCreating(false)} />}
      <ConfirmModal opened={deleting !== null} title="Delete user" confirmLabel="Delete" danger busy={remove.isPending} onClose={() => setDeleting(null)} onConfirm={() => deleting && remove.mutate(deleting.id)}>
        Delete <b>{deleting?.email}</b>? Their API keys stop working at once.
      </ConfirmModal>
    </>
  );
}

function NewUserModal({ onClose }: { onClose(): void }) {
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<string>('member');
  const create = useMutation({
    mutationFn: () => unwrap(api.POST('/api/users', { body: { email, password, role: role as User['role'] } })),
    onSuccess: (u) => {
      notifications.show({ message: `User ${u.email} created`, color: 'green' });
      void queryClient.invalidateQueries({ queryKey: ['users'] });
      onClose();
    },
  });
  return (
    <ModalForm opened title="New user" submitLabel="Create user" busy={create.isPending} error={create.error} errorTitle="Not created" onSubmit={() => create.mutate()} onClose={onClose}>
      <TextInput label="Email" type="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
      <PasswordInput label="Password" description="At least 8 characters" required autoComplete="new-password" value={password} onChange={(e) => setPassword(e.currentTarget.value)} />
      <Select label="Role" data={[...USER_ROLES]} allowDeselect={false} value={role} onChange={(v) => v && setRole(v)} />
    </ModalForm>
  );
}
