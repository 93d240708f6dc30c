import { Anchor, Paper, SimpleGrid, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { QueryState } from '../components/ApiErrorAlert';
import { ListTable } from '../components/ListTable';
import { PageHeader } from '../components/PageHeader';
import { formatDuration } from '../lib/format';

export function HomePage() {
  const stats = useQuery({ queryKey: ['agents', 'stats'], queryFn: () => unwrap(api.GET('/api/agents/stats')), refetchInterval: 10_000 });
  return (
    <>
      <PageHeader title="Home" />
      <QueryState query={stats}>
        {(s) => (
          <>
            <SimpleGrid cols={{ base: 2, sm: 3, lg: 5 }} mb="lg">
              <Stat label="Calls" value={s.total_calls} />
              <Stat label="Active now" value={s.active_calls} />
              <Stat label="Completed" value={s.completed_calls} />
              <Stat label="Failed" value={s.failed_calls} />
              <Stat label="Average duration" value={formatDuration(s.avg_duration)} />
            </SimpleGrid>
            <Title order={3} size="h4" mb="xs">
              By agent
            </Title>
            <ListTable
              label="Calls by agent"
              minWidth={520}
              columns={['Agent', 'Calls', 'Completed', 'Failed', 'Average duration']}
              items={s.agents}
              rowKey={(a) => a.agent_id}
              empty={
                <>
                  No agents yet. <Anchor component={Link} to="/agents/new">Create one</Anchor>.
                </>
              }
              row={(a) => (
                <>
                  <Table.Td>
                    <Anchor component={Link} to={`/agents/${a.agent_id}`}>
                      {a.agent_name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{a.total_calls}</Table.Td>
                  <Table.Td>{a.completed}</Table.Td>
                  <Table.Td>{a.failed}</Table.Td>
                  <Table.Td>{formatDuration(a.avg_duration)}</Table.Td>
                </>
              )}
            />
          </>
        )}
      </QueryState>
    </>
  );
}

function Stat({ label, value }: { label: string; value: string | number }) {
  return (
    <Paper withBorder p="md">
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="xl" fw={700}>
        {value}
      </Text>
    </Paper>
  );
}
