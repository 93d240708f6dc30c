/**
 * An agent's tests (docs/agent-tests.md): the suite, "run all" with repeats, the latest run's live
 * progress and results, and earlier runs.
 */
import { useState } from 'react';
import { Badge, Button, Group, NumberInput, Paper, Select, Stack, Table, Text } from '@mantine/core';
import { IconPencil, IconPlayerPlay, IconPlus, IconTrash } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { api, unwrap } from '../api/client';
import type { AgentTest } from '../api/types';
import { ApiErrorAlert, QueryState } from '../components/ApiErrorAlert';
import { ConfirmModal } from '../components/ConfirmModal';
import { PageHeader } from '../components/PageHeader';
import { RunResults } from '../components/tests/RunResults';
import { TestFormModal } from '../components/tests/TestFormModal';

const POLL_MS = 1000;

export function AgentTestsPage() {
  const { agentId } = useParams();
  const agent = useQuery({
    queryKey: ['agents', agentId],
    queryFn: () => unwrap(api.GET('/api/agents/{agent_id}', { params: { path: { agent_id: agentId! } } })),
  });
  return <QueryState query={agent}>{(a) => <TestsView agentId={a.id} agentName={a.name} version={a.version} />}</QueryState>;
}

function TestsView({ agentId, agentName, version }: { agentId: string; agentName: string; version: number }) {
  const queryClient = useQueryClient();
  const path = { params: { path: { agent_id: agentId } } };
  const tests = useQuery({ queryKey: ['agents', agentId, 'tests'], queryFn: () => unwrap(api.GET('/api/agents/{agent_id}/tests', path)) });
  const runs = useQuery({ queryKey: ['agents', agentId, 'test-runs'], queryFn: () => unwrap(api.GET('/api/agents/{agent_id}/test-runs', path)) });
  const versions = useQuery({ queryKey: ['agents', agentId, 'versions'], queryFn: () => unwrap(api.GET('/api/agents/{agent_id}/versions', path)) });
  const [selectedRun, setSelectedRun] = useState<string | null>(null);
  const runId = selectedRun ?? runs.data?.[0]?.id ?? null;
  const run = useQuery({
    queryKey: ['test-runs', runId],
    queryFn: () => unwrap(api.GET('/api/test-runs/{run_id}', { params: { path: { run_id: runId! } } })),
    enabled: runId !== null,
    refetchInterval: (q) => (q.state.data?.status === 'running' ? POLL_MS : false),
  });
  const [editing, setEditing] = useState<AgentTest | 'new' | null>(null);
  const [deleting, setDeleting] = useState<AgentTest | null>(null);
  const [repeat, setRepeat] = useState<number | string>(1);
  const [compare, setCompare] = useState<string | null>(null);

  const start = useMutation({
    mutationFn: () =>
      unwrap(api.POST('/api/agents/{agent_id}/test-runs', { ...path, body: { repeat: Number(repeat), ...(compare ? { compare_version: Number(compare) } : {}) } })),
    onSuccess: (started) => {
      setSelectedRun(started.id);
      void queryClient.invalidateQueries({ queryKey: ['agents', agentId, 'test-runs'] });
    },
  });
  const remove = useMutation({
    mutationFn: (test: AgentTest) => unwrap(api.DELETE('/api/agents/{agent_id}/tests/{test_id}', { params: { path: { agent_id: agentId, test_id: test.id } } })),
    onSuccess: () => {
      setDeleting(null);
      void queryClient.invalidateQueries({ queryKey: ['agents', agentId, 'tests'] });
    },
  });

  const olderVersions = (versions.data ?? []).filter((v) => v.version !== version).map((v) => ({ value: String(v.version), label: `v${v.version}` }));
  return (
    <Stack gap="md">
      <PageHeader title={`Tests of ${agentName}`}>
        <Button variant="default" leftSection={<IconPlus size={16} />} onClick={() => setEditing('new')}>
          New test
        </Button>
      </PageHeader>
      <QueryState query={tests}>
        {(list) =>
          list.length === 0 ? (
            <Text c="dimmed">No tests yet. Create one, or open a call of this agent and create a test from it.</Text>
          ) : (
            <Table aria-label="Tests" highlightOnHover>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Name</Table.Th>
                  <Table.Th>Kind</Table.Th>
                  <Table.Th>Checks</Table.Th>
                  <Table.Th>Threshold</Table.Th>
                  <Table.Th />
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((t) => (
                  <Table.Tr key={t.id}>
                    <Table.Td>{t.name}</Table.Td>
                    <Table.Td>
                      <Badge variant="light">{t.kind}</Badge>
                    </Table.Td>
                    <Table.Td>
                      {t.expectations.length} expectations, {t.judge.length} judge criteria
                    </Table.Td>
                    <Table.Td>{Math.round(t.pass_threshold * 100)}%</Table.Td>
                    <Table.Td>
                      <Group gap={4} justify="flex-end">
                        <Button size="compact-sm" variant="subtle" aria-label={`Edit ${t.name}`} onClick={() => setEditing(t)}>
                          <IconPencil size={16} />
                        </Button>
                        <Button size="compact-sm" variant="subtle" color="red" aria-label={`Delete ${t.name}`} onClick={() => setDeleting(t)}>
                          <IconTrash size={16} />
                        </Button>
                      </Group>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )
        }
      </QueryState>

      <Paper withBorder p="md">
        <Group align="flex-end">
          <NumberInput label="Repeat each test" min={1} max={50} w={160} value={repeat} onChange={setRepeat} />
          <Select label="Compare with version" placeholder="none" clearable w={200} data={olderVersions} value={compare} onChange={setCompare} />
          <Button leftSection={<IconPlayerPlay size={16} />} loading={start.isPending} disabled={!tests.data?.length} onClick={() => start.mutate()}>
            Run all
          </Button>
          {(runs.data ?? []).length > 1 && (
            <Select
              label="Run"
              w={260}
              value={runId}
              onChange={setSelectedRun}
              data={(runs.data ?? []).map((r) => ({ value: r.id, label: `${r.created_at.replace('T', ' ')} · v${r.agent_version} · ${r.status}` }))}
            />
          )}
        </Group>
        {start.error && <ApiErrorAlert error={start.error} />}
      </Paper>

      {run.error ? <ApiErrorAlert error={run.error} /> : run.data ? <RunResults run={run.data} /> : null}

      {editing !== null && <TestFormModal agentId={agentId} test={editing === 'new' ? undefined : editing} opened onClose={() => setEditing(null)} />}
      <ConfirmModal opened={deleting !== null} title="Delete test" confirmLabel="Delete" danger busy={remove.isPending} onClose={() => setDeleting(null)} onConfirm={() => deleting && remove.mutate(deleting)}>
        Delete the test <b>{deleting?.name}</b>? Runs keep its results.
      </ConfirmModal>
    </Stack>
  );
}
