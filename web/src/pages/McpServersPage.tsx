/**
 * MCP servers (docs/tools.md, MCP servers): each server with the tools of its last refresh, which
 * of them agents may use, a refresh button and a test button per tool.
 */
import { useState } from 'react';
import { ActionIcon, Badge, Button, Group, Stack, Table, Text, Tooltip } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconEdit, IconPlayerPlay, IconPlus, IconRefresh, IconTrash } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { McpServer, McpTool } from '../api/types';
import { ApiErrorAlert, QueryState } from '../components/ApiErrorAlert';
import { ConfirmModal } from '../components/ConfirmModal';
import { ListTable } from '../components/ListTable';
import { McpServerFormModal } from '../components/McpServerFormModal';
import { McpToolTestModal } from '../components/McpToolTestModal';
import { PageHeader } from '../components/PageHeader';
import { formatTime } from '../lib/format';
import { RowAction } from '../components/RowAction';

function ToolList({ server, onTest }: { server: McpServer; onTest(tool: McpTool): void }) {
  if (server.tools.length === 0) return <Text size="sm" c="dimmed">{server.refreshed_at ? 'The server lists no tools' : 'Not refreshed yet'}</Text>;
  return (
    <Stack gap={4}>
      {server.tools.map((tool) => (
        <Group key={tool.name} gap={6} wrap="nowrap">
          <Tooltip label="Test">
            <ActionIcon size="sm" variant="subtle" aria-label={`Test ${tool.ref}`} onClick={() => onTest(tool)}>
              <IconPlayerPlay size={14} />
            </ActionIcon>
          </Tooltip>
          <Text size="sm" fw={500} c={tool.allowed ? undefined : 'dimmed'} td={tool.allowed ? undefined : 'line-through'}>
            {tool.name}
          </Text>
          <Text size="xs" c="dimmed" lineClamp={1}>
            {tool.description}
          </Text>
        </Group>
      ))}
    </Stack>
  );
}

export function McpServersPage() {
  const queryClient = useQueryClient();
  const servers = useQuery({ queryKey: ['mcp-servers'], queryFn: () => unwrap(api.GET('/api/mcp-servers')) });
  const [editing, setEditing] = useState<McpServer | 'new' | null>(null);
  const [testing, setTesting] = useState<{ server: McpServer; tool: McpTool } | null>(null);
  const [deleting, setDeleting] = useState<McpServer | null>(null);
  const refresh = useMutation({
    mutationFn: (id: string) => unwrap(api.POST('/api/mcp-servers/{server_id}/refresh', { params: { path: { server_id: id } } })),
    onSuccess: (server) => {
      notifications.show({ message: `${server.name}: ${server.tools.length} tools`, color: 'green' });
      void queryClient.invalidateQueries({ queryKey: ['mcp-servers'] });
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/mcp-servers/{server_id}', { params: { path: { server_id: id } } })),
    onSuccess: () => {
      notifications.show({ message: `MCP server ${deleting?.name} deleted`, color: 'green' });
      setDeleting(null);
      void queryClient.invalidateQueries({ queryKey: ['mcp-servers'] });
      void queryClient.invalidateQueries({ queryKey: ['agents'] });
    },
  });

  return (
    <>
      <PageHeader title="MCP servers">
        <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing('new')}>
          New MCP server
        </Button>
      </PageHeader>
      {refresh.error && <ApiErrorAlert error={refresh.error} title="Refresh failed" />}
      {remove.error && <ApiErrorAlert error={remove.error} />}
      <QueryState query={servers}>
        {(list) => (
          <ListTable
            label="MCP servers"
            minWidth={720}
            columns={['Name', 'URL', 'Tools', 'Refreshed', '']}
            items={list}
            rowKey={(server) => server.id}
            empty="No MCP servers yet: an MCP server offers the agent its tools; agents refer to them as server/tool."
            row={(server) => (
              <>
                <Table.Td>
                  <Text fw={500}>{server.name}</Text>
                  {server.transport && (
                    <Badge variant="outline" size="xs">
                      {server.transport === 'sse' ? 'HTTP+SSE' : 'Streamable HTTP'}
                    </Badge>
                  )}
                </Table.Td>
                <Table.Td>
                  <Text size="sm" style={{ wordBreak: 'break-all' }}>
                    {server.url}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <ToolList server={server} onTest={(tool) => setTesting({ server, tool })} />
                </Table.Td>
                <Table.Td>{server.refreshed_at ? formatTime(server.refreshed_at) : '—'}</Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    <RowAction label="Refresh tools" ariaLabel={`Refresh ${server.name}`} icon={IconRefresh} loading={refresh.isPending && refresh.variables === server.id} onClick={() => refresh.mutate(server.id)} />
                    <RowAction label="Edit" ariaLabel={`Edit ${server.name}`} icon={IconEdit} onClick={() => setEditing(server)} />
                    <RowAction label="Delete" ariaLabel={`Delete ${server.name}`} icon={IconTrash} danger onClick={() => setDeleting(server)} />
                  </Group>
                </Table.Td>
              </>
            )}
          />
        )}
      </QueryState>
      {editing !== null && <McpServerFormModal server={editing === 'new' ? undefined : editing} onClose={() => setEditing(null)} />}
      {testing && <McpToolTestModal server={testing.server} tool={testing.tool} onClose={() => setTesting(null)} />}
      <ConfirmModal opened={deleting !== null} title="Delete MCP server" confirmLabel="Delete" danger busy={remove.isPending} onClose={() => setDeleting(null)} onConfirm={() => deleting && remove.mutate(deleting.id)}>
        Delete <b>{deleting?.name}</b>? Its tools are removed from every agent and flow node that uses them.
      </ConfirmModal>
    </>
  );
}
