/**
 * The agent's publishable keys for the embeddable widget (docs/web-calls.md): create one for the
 * origins a website serves it from (the key is shown once, with the snippet to paste), revoke one.
 */
import { useState } from 'react';
import { Badge, Button, Code, CopyButton, Group, Modal, Stack, Table, Text, Textarea, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { ApiErrorAlert } from './ApiErrorAlert';

export function widgetSnippet(agentName: string, key: string): string {
  return `<script src="${window.location.origin}/widget.js" data-agent="${agentName}" data-key="${key}"></script>`;
}

export function WidgetKeysModal({ opened, agentId, agentName, onClose }: { opened: boolean; agentId: string; agentName: string; onClose(): void }) {
  const queryClient = useQueryClient();
  const path = { params: { path: { agent_id: agentId } } };
  const keys = useQuery({ queryKey: ['publishable-keys', agentId], queryFn: () => unwrap(api.GET('/api/agents/{agent_id}/publishable-keys', path)), enabled: opened });
  const [name, setName] = useState('');
  const [origins, setOrigins] = useState('');
  const [created, setCreated] = useState<string | null>(null);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ['publishable-keys', agentId] });
  const create = useMutation({
    mutationFn: () =>
      unwrap(api.POST('/api/agents/{agent_id}/publishable-keys', { ...path, body: { name, allowed_origins: origins.split(/[\s,]+/).filter(Boolean) } })),
    onSuccess: (r) => {
      setCreated(r.key ?? null);
      setName('');
      setOrigins('');
      refresh();
    },
  });
  const revoke = useMutation({
    mutationFn: (keyId: string) => unwrap(api.DELETE('/api/agents/{agent_id}/publishable-keys/{key_id}', { params: { path: { agent_id: agentId, key_id: keyId } } })),
    onSuccess: refresh,
  });

  return (
    <Modal opened={opened} onClose={onClose} title="Web widget" size="lg">
      <Stack>
        <Text size="sm" c="dimmed">
          A publishable key lets the "Talk to us" button on your website start calls to {agentName} — from the origins you list, and nothing else.
        </Text>
        {created && (
          <Stack gap="xs" data-testid="new-key">
            <Text size="sm" fw={600}>
              Paste this on your site (the key is shown only now):
            </Text>
            <Code block>{widgetSnippet(agentName, created)}</Code>
            <CopyButton value={widgetSnippet(agentName, created)}>{({ copied, copy }) => <Button size="xs" variant="light" onClick={copy}>{copied ? 'Copied' : 'Copy snippet'}</Button>}</CopyButton>
          </Stack>
        )}
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <Stack gap="xs">
            {create.error && <ApiErrorAlert error={create.error} title="Could not create the key" />}
            <TextInput label="Key name" placeholder="Shop website" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
            <Textarea label="Allowed origins" description="One per line, e.g. https://shop.example" required autosize minRows={2} value={origins} onChange={(e) => setOrigins(e.currentTarget.value)} />
            <Group justify="flex-end">
              <Button type="submit" loading={create.isPending}>
                Create key
              </Button>
            </Group>
          </Stack>
        </form>
        {revoke.error && <ApiErrorAlert error={revoke.error} title="Could not revoke" />}
        {(keys.data ?? []).length > 0 && (
          <Table aria-label="Publishable keys">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Key</Table.Th>
                <Table.Th>Origins</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {(keys.data ?? []).map((k) => (
                <Table.Tr key={k.id}>
                  <Table.Td>{k.name}</Table.Td>
                  <Table.Td>
                    <Code>{k.key_prefix}…</Code>
                  </Table.Td>
                  <Table.Td>{k.allowed_origins.join(', ')}</Table.Td>
                  <Table.Td>
                    {k.revoked_at ? (
                      <Badge color="gray">revoked</Badge>
                    ) : (
                      <Button size="xs" color="red" variant="light" loading={revoke.isPending && revoke.variables === k.id} onClick={() => revoke.mutate(k.id)}>
                        Revoke
                      </Button>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
    </Modal>
  );
}
