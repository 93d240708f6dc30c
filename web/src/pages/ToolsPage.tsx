import { useState } from 'react';
import { Badge, Button, Group, Table, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconEdit, IconPlayerPlay, IconPlus, IconTrash } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { Tool } from '../api/types';
import { ApiErrorAlert, QueryState } from '../components/ApiErrorAlert';
import { ConfirmModal } from '../components/ConfirmModal';
import { ListTable } from '../components/ListTable';
import { PageHeader } from '../components/PageHeader';
import { ToolFormModal } from '../components/ToolFormModal';
import { ToolTestModal } from '../components/ToolTestModal';
import { RowAction } from '../components/RowAction';

export function ToolsPage() {
  const queryClient = useQueryClient();
  const tools = useQuery({ queryKey: ['tools'], queryFn: () => unwrap(api.GET('/api/tools')) });
  const [editing, setEditing] = useState<Tool | 'new' | null>(null);
  const [testing, setTesting] = useState<Tool | null>(null);
  const [deleting, setDeleting] = useState<Tool | null>(null);
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/tools/{tool_id}', { params: { path: { tool_id: id } } })),
    onSuccess: () => {
      notifications.show({ message: `Tool ${deleting?.name} deleted`, color: 'green' });
      setDeleting(null);
      void queryClient.invalidateQueries({ queryKey: ['tools'] });
      void queryClient.invalidateQueries({ queryKey: ['agents'] });
    },
  });

  return (
    <>
      <PageHeader title="Tools">
        <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing('new')}>
          New tool
        </Button>
      </PageHeader>
      {remove.error && <ApiErrorAlert error={remove.error} />}
      <QueryState query={tools}>
        {(list) => (
          <ListTable
            label="Tools"
            minWidth={640}
            columns={['Name', 'Webhook', 'Parameters', 'Timeout', '']}
            items={list}
            rowKey={(tool) => tool.id}
            empty="No tools yet: a tool is an HTTP endpoint of yours that the agent can call during a call."
            row={(tool) => (
              <>
                <Table.Td>
                  <Text fw={500}>{tool.name}</Text>
                  <Text size="xs" c="dimmed" lineClamp={2}>
                    {tool.description}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Group gap={6} wrap="nowrap">
                    <Badge variant="outline" size="sm">
                      {tool.webhook_method}
                    </Badge>
                    <Text size="sm" style={{ wordBreak: 'break-all' }}>
                      {tool.webhook_url}
                    </Text>
                  </Group>
                </Table.Td>
                <Table.Td>{Object.keys(tool.parameters.properties ?? {}).join(', ') || '—'}</Table.Td>
                <Table.Td>{tool.timeout_secs}s</Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    <RowAction label="Test" ariaLabel={`Test ${tool.name}`} icon={IconPlayerPlay} onClick={() => setTesting(tool)} />
                    <RowAction label="Edit" ariaLabel={`Edit ${tool.name}`} icon={IconEdit} onClick={() => setEditing(tool)} />
                    <RowAction label="Delete" ariaLabel={`Delete ${tool.name}`} icon={IconTrash} danger onClick={() => setDeleting(tool)} />
                  </Group>
                </Table.Td>
              </>
            )}
          />
        )}
      </QueryState>
      {editing !== null && <ToolFormModal tool={editing === 'new' ? undefined : editing} onClose={() => setEditing(null)} />}
      {testing && <ToolTestModal tool={testing} onClose={() => setTesting(null)} />}
      <ConfirmModal opened={deleting !== null} title="Delete tool" confirmLabel="Delete" danger busy={remove.isPending} onClose={() => setDeleting(null)} onConfirm={() => deleting && remove.mutate(deleting.id)}>
        Delete <b>{deleting?.name}</b>? It is removed from every agent and flow node that uses it.
      </ConfirmModal>
    </>
  );
}
