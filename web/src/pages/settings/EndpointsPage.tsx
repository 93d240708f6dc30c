/** Phone numbers mapped to agents, with the inbound webhook URL to paste into the provider's console. */
import { useState } from 'react';
import { ActionIcon, Autocomplete, Badge, Button, Code, CopyButton, Group, Select, Switch, Table, Text, TextInput, Tooltip } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconCheck, IconCopy, IconEdit, IconPlus, IconTrash } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiError, unwrap } from '../../api/client';
import type { Endpoint, ProviderName } from '../../api/types';
import { ApiErrorAlert, QueryState } from '../../components/ApiErrorAlert';
import { ConfirmModal } from '../../components/ConfirmModal';
import { ListTable } from '../../components/ListTable';
import { ModalForm } from '../../components/ModalForm';
import { PageHeader } from '../../components/PageHeader';
import { splitFieldErrors } from '../../lib/field-errors';

export function EndpointsPage() {
  const queryClient = useQueryClient();
  const endpoints = useQuery({ queryKey: ['settings', 'endpoints'], queryFn: () => unwrap(api.GET('/api/settings/endpoints')) });
  const [editing, setEditing] = useState<Endpoint | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Endpoint | null>(null);
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/settings/endpoints/{endpoint_id}', { params: { path: { endpoint_id: id } } })),
    onSuccess: () => {
      setDeleting(null);
      void queryClient.invalidateQueries({ queryKey: ['settings', 'endpoints'] });
    },
  });
  return (
    <>
      <PageHeader title="Phone numbers">
        <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing('new')}>
          Add number
        </Button>
      </PageHeader>
      {remove.error && <ApiErrorAlert error={remove.error} />}
      <QueryState query={endpoints}>
        {(list) => (
          <ListTable
            label="Phone numbers"
            minWidth={760}
            columns={['Number', 'Provider', 'Inbound agent', 'Outbound agent', 'Inbound webhook URL', '']}
            items={list}
            rowKey={(ep) => ep.id}
            empty="No numbers yet."
            row={(ep) => (
              <>
                <Table.Td>
                  <Text size="sm" fw={500}>
                    {ep.phone_number}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {ep.label}
                  </Text>
                  {!ep.is_active && (
                    <Badge size="xs" color="gray">
                      inactive
                    </Badge>
                  )}
                </Table.Td>
                <Table.Td>{ep.provider}</Table.Td>
                <Table.Td>{ep.inbound_agent_name ?? '—'}</Table.Td>
                <Table.Td>{ep.outbound_agent_name ?? '—'}</Table.Td>
                <Table.Td>
                  {ep.inbound_webhook_url ? (
                    <Group gap={4} wrap="nowrap">
                      <Code style={{ wordBreak: 'break-all' }}>{ep.inbound_webhook_url}</Code>
                      <CopyButton value={ep.inbound_webhook_url}>
                        {({ copied, copy }) => (
                          <Tooltip label={copied ? 'Copied' : 'Copy'}>
                            <ActionIcon variant="subtle" onClick={copy} aria-label={`Copy webhook URL of ${ep.phone_number}`}>
                              {copied ? <IconCheck size={16} /> : <IconCopy size={16} />}
                            </ActionIcon>
                          </Tooltip>
                        )}
                      </CopyButton>
                    </Group>
                  ) : (
                    <Text size="sm" c="dimmed">
                      set an inbound agent
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    <ActionIcon variant="subtle" aria-label={`Edit ${ep.phone_number}`} onClick={() => setEditing(ep)}>
                      <IconEdit size={18} />
                    </ActionIcon>
                    <ActionIcon variant="subtle" color="red" aria-label={`Delete ${ep.phone_number}`} onClick={() => setDeleting(ep)}>
                      <IconTrash size={18} />
                    </ActionIcon>
                  </Group>
                </Table.Td>
              </>
            )}
          />
        )}
      </QueryState>
      {editing !== null && <EndpointModal endpoint={editing === 'new' ? undefined : editing} onClose={() => setEditing(null)} />}
      <ConfirmModal opened={deleting !== null} title="Delete number" confirmLabel="Delete" danger busy={remove.isPending} onClose={() => setDeleting(null)} onConfirm={() => deleting && remove.mutate(deleting.id)}>
        Delete the mapping of <b>{deleting?.phone_number}</b>?
      </ConfirmModal>
    </>
  );
}

const FIELDS = ['phone_number', 'provider', 'inbound_agent_name', 'outbound_agent_name', 'label'];

function EndpointModal({ endpoint, onClose }: { endpoint?: Endpoint; onClose(): void }) {
  const queryClient = useQueryClient();
  const agents = useQuery({ queryKey: ['agents'], queryFn: () => unwrap(api.GET('/api/agents')) });
  const settings = useQuery({ queryKey: ['settings', 'telephony'], queryFn: () => unwrap(api.GET('/api/settings/telephony')) });
  const providers = useQuery({ queryKey: ['settings', 'telephony', 'providers'], queryFn: () => unwrap(api.GET('/api/settings/telephony/providers')) });
  const [phone, setPhone] = useState(endpoint?.phone_number ?? '');
  const [provider, setProvider] = useState(endpoint?.provider ?? (settings.data?.provider as string | undefined) ?? '');
  const [inbound, setInbound] = useState<string | null>(endpoint?.inbound_agent_name ?? null);
  const [outbound, setOutbound] = useState<string | null>(endpoint?.outbound_agent_name ?? null);
  const [label, setLabel] = useState(endpoint?.label ?? '');
  const [active, setActive] = useState(endpoint?.is_active ?? true);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const agentNames = (agents.data ?? []).map((a) => a.name);

  const save = useMutation({
    mutationFn: () =>
      endpoint
        ? unwrap(api.PUT('/api/settings/endpoints/{endpoint_id}', { params: { path: { endpoint_id: endpoint.id } }, body: { inbound_agent_name: inbound, outbound_agent_name: outbound, label: label || null, is_active: active } }))
        : unwrap(api.POST('/api/settings/endpoints', { body: { phone_number: phone, provider: provider as ProviderName, inbound_agent_name: inbound, outbound_agent_name: outbound, label: label || null } })),
    onSuccess: (saved) => {
      notifications.show({ message: `${saved.phone_number} saved`, color: 'green' });
      void queryClient.invalidateQueries({ queryKey: ['settings', 'endpoints'] });
      onClose();
    },
    onError: (err) => {
      if (err instanceof ApiError && err.status === 409) setErrors({ phone_number: err.detail });
      else if (err instanceof ApiError && err.status === 422) setErrors(splitFieldErrors(err.detail, () => true).fields);
    },
  });
  const knownError = Object.keys(errors).length > 0;
  return (
    <ModalForm
      opened
      title={endpoint ? `Edit ${endpoint.phone_number}` : 'Add a phone number'}
      submitLabel="Save"
      busy={save.isPending}
      error={knownError ? undefined : save.error}
      onSubmit={() => {
        setErrors({});
        save.mutate();
      }}
      onClose={onClose}
    >
      <TextInput label="Phone number" description="E.164, e.g. +14155550123" required disabled={!!endpoint} value={phone} error={errors.phone_number} onChange={(e) => setPhone(e.currentTarget.value)} />
      <Autocomplete label="Provider" required disabled={!!endpoint} data={(providers.data ?? []).map((p) => p.name)} value={provider} error={errors.provider} onChange={setProvider} />
      <Select label="Inbound agent" description="Answers calls to this number" clearable searchable data={agentNames} value={inbound} error={errors.inbound_agent_name} onChange={setInbound} />
      <Select label="Outbound agent" description="Calls from this number" clearable searchable data={agentNames} value={outbound} error={errors.outbound_agent_name} onChange={setOutbound} />
      <TextInput label="Label" value={label} error={errors.label} onChange={(e) => setLabel(e.currentTarget.value)} />
      {endpoint && <Switch label="Active" checked={active} onChange={(e) => setActive(e.currentTarget.checked)} />}
      {Object.entries(errors)
        .filter(([f]) => !FIELDS.includes(f))
        .map(([f, m]) => (
          <Text key={f} size="sm" c="red" role="alert">
            {f}: {m}
          </Text>
        ))}
    </ModalForm>
  );
}
