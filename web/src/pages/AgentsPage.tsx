import { useState } from 'react';
import { ActionIcon, Anchor, Badge, Button, FileButton, Menu, Table } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconDots, IconDownload, IconPlus, IconSparkles, IconTrash, IconUpload, IconVectorTriangle } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import { api, ApiError, unwrap } from '../api/client';
import type { AgentListItem } from '../api/types';
import { ApiErrorAlert, QueryState } from '../components/ApiErrorAlert';
import { ConfirmModal } from '../components/ConfirmModal';
import { ListTable } from '../components/ListTable';
import { GenerateAgentModal } from '../components/GenerateAgentModal';
import { PageHeader } from '../components/PageHeader';
import { downloadJson, formatTime } from '../lib/format';

type Bundle = Record<string, unknown> & { agent?: { name?: string } };

export function AgentsPage() {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const agents = useQuery({ queryKey: ['agents'], queryFn: () => unwrap(api.GET('/api/agents')) });
  const [deleting, setDeleting] = useState<AgentListItem | null>(null);
  const [overwriteAsk, setOverwriteAsk] = useState<{ bundle: Bundle } | null>(null);
  const [generateOpen, setGenerateOpen] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/agents/{agent_id}', { params: { path: { agent_id: id } } })),
    onSuccess: () => {
      notifications.show({ message: `Agent ${deleting?.name} deleted`, color: 'green' });
      setDeleting(null);
      void queryClient.invalidateQueries({ queryKey: ['agents'] });
    },
    onError: (err) => {
      setDeleting(null);
      setError(err);
    },
  });

  const importBundle = useMutation({
    mutationFn: ({ bundle, overwrite }: { bundle: Bundle; overwrite: boolean }) =>
      unwrap(api.POST('/api/agents/import', { body: { ...bundle, overwrite } as never })),
    onSuccess: (result) => {
      setOverwriteAsk(null);
      const created = result.tools_created.length ? `; tools created: ${result.tools_created.join(', ')}` : '';
      notifications.show({ message: `Imported ${result.agent.name}${created}`, color: 'green' });
      void queryClient.invalidateQueries({ queryKey: ['agents'] });
      void queryClient.invalidateQueries({ queryKey: ['tools'] });
    },
    onError: (err, { bundle }) => {
      if (err instanceof ApiError && err.status === 409) return setOverwriteAsk({ bundle });
      setOverwriteAsk(null);
      setError(err);
    },
  });

  const onFile = async (file: File | null) => {
    if (!file) return;
    setError(null);
    let bundle: Bundle;
    try {
      bundle = JSON.parse(await file.text());
    } catch {
      setError(new Error(`${file.name} is not a JSON file`));
      return;
    }
    importBundle.mutate({ bundle, overwrite: false });
  };

  const exportAgent = async (agent: AgentListItem) => {
    try {
      const bundle = await unwrap(api.GET('/api/agents/{agent_id}/export', { params: { path: { agent_id: agent.id } } }));
      downloadJson(`${agent.name}.agent.json`, bundle);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <>
      <PageHeader title="Agents">
        <FileButton onChange={onFile} accept="application/json,.json">
          {(props) => (
            <Button {...props} variant="default" leftSection={<IconUpload size={16} />} loading={importBundle.isPending}>
              Import bundle
            </Button>
          )}
        </FileButton>
        <Button variant="default" leftSection={<IconSparkles size={16} />} onClick={() => setGenerateOpen(true)}>
          Generate
        </Button>
        <Button component={Link} to="/agents/new" leftSection={<IconPlus size={16} />}>
          New agent
        </Button>
      </PageHeader>
      {error !== null && <ApiErrorAlert error={error} />}
      <QueryState query={agents}>
        {(list) => (
          <ListTable
            label="Agents"
            minWidth={600}
            columns={['Name', 'Kind', 'Calls', 'Version', 'Updated', '']}
            items={list}
            rowKey={(agent) => agent.id}
            empty="No agents yet."
            row={(agent) => (
              <>
                <Table.Td>
                  <Anchor component={Link} to={`/agents/${agent.id}`} fw={500}>
                    {agent.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>
                  {agent.flow_nodes_count > 0 ? (
                    <Badge variant="light" color="grape">
                      flow · {agent.flow_nodes_count} nodes
                    </Badge>
                  ) : (
                    <Badge variant="light">freeform</Badge>
                  )}
                </Table.Td>
                <Table.Td>{agent.total_calls}</Table.Td>
                <Table.Td>{agent.version}</Table.Td>
                <Table.Td>{formatTime(agent.updated_at)}</Table.Td>
                <Table.Td>
                  <Menu position="bottom-end">
                    <Menu.Target>
                      <ActionIcon variant="subtle" aria-label={`Actions for ${agent.name}`}>
                        <IconDots size={18} />
                      </ActionIcon>
                    </Menu.Target>
                    <Menu.Dropdown>
                      <Menu.Item leftSection={<IconVectorTriangle size={16} />} onClick={() => navigate(`/agents/${agent.id}/flow`)}>
                        Flow editor
                      </Menu.Item>
                      <Menu.Item leftSection={<IconDownload size={16} />} onClick={() => void exportAgent(agent)}>
                        Export bundle
                      </Menu.Item>
                      <Menu.Item leftSection={<IconTrash size={16} />} color="red" onClick={() => setDeleting(agent)}>
                        Delete
                      </Menu.Item>
                    </Menu.Dropdown>
                  </Menu>
                </Table.Td>
              </>
            )}
          />
        )}
      </QueryState>

      <ConfirmModal
        opened={deleting !== null}
        title="Delete agent"
        confirmLabel="Delete"
        danger
        busy={remove.isPending}
        onClose={() => setDeleting(null)}
        onConfirm={() => deleting && remove.mutate(deleting.id)}
      >
        Delete <b>{deleting?.name}</b> and its flow? Its calls are kept.
      </ConfirmModal>
      <ConfirmModal
        opened={overwriteAsk !== null}
        title="Agent exists"
        confirmLabel="Overwrite"
        danger
        busy={importBundle.isPending}
        onClose={() => setOverwriteAsk(null)}
        onConfirm={() => overwriteAsk && importBundle.mutate({ bundle: overwriteAsk.bundle, overwrite: true })}
      >
        An agent named <b>{overwriteAsk?.bundle.agent?.name}</b> already exists. Replace its configuration and flow with the bundle’s?
      </ConfirmModal>
      <GenerateAgentModal opened={generateOpen} onClose={() => setGenerateOpen(false)} />
    </>
  );
}
