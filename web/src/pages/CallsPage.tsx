import { Anchor, Badge, Button, Group, Pagination, Select, Table, Text } from '@mantine/core';
import { IconMessage, IconPhoneOutgoing } from '@tabler/icons-react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, unwrap } from '../api/client';
import { CALL_STATUSES, DIRECTIONS, END_REASONS } from '../api/enums';
import type { CallListItem, CallListQuery } from '../api/types';
import { QueryState } from '../components/ApiErrorAlert';
import { ListTable } from '../components/ListTable';
import { PageHeader } from '../components/PageHeader';
import { formatDuration, formatTime, isLive, STATUS_COLOR } from '../lib/format';
import { usePanels } from '../panels';

const PAGE_SIZE = 20;
/** The post-call analysis's verdict (`success=` of the API). */
const OUTCOMES = [
  { value: 'true', label: 'successful' },
  { value: 'false', label: 'not successful' },
];

function Outcome({ call }: { call: CallListItem }) {
  const success = call.analysis?.success;
  if (success === true || success === false) {
    return (
      <Badge color={success ? 'green' : 'red'} variant="light" title={call.analysis?.success_reason ?? undefined}>
        {success ? 'successful' : 'not successful'}
      </Badge>
    );
  }
  return <Text size="sm" c="dimmed">{call.analysis_status === 'pending' ? 'analysing…' : '—'}</Text>;
}

export function CallsPage() {
  const panels = usePanels();
  const [search, setSearch] = useSearchParams();
  const page = Math.max(1, Number(search.get('page') ?? 1) || 1);
  const filters = {
    status: search.get('status') ?? undefined,
    agent_name: search.get('agent') ?? undefined,
    direction: search.get('direction') ?? undefined,
    end_reason: search.get('end_reason') ?? undefined,
    success: search.get('success') ?? undefined,
  };
  const query = { page, page_size: PAGE_SIZE, ...filters } as CallListQuery;
  const agents = useQuery({ queryKey: ['agents'], queryFn: () => unwrap(api.GET('/api/agents')) });
  const calls = useQuery({
    queryKey: ['calls', query],
    queryFn: () => unwrap(api.GET('/api/calls', { params: { query } })),
    // The table stays while the next page or filter loads, instead of flashing a spinner.
    placeholderData: keepPreviousData,
    // Live calls change status and duration: refresh the page while any is shown.
    refetchInterval: (q) => (q.state.data?.calls.some((c) => isLive(c.status) || c.analysis_status === 'pending') ? 3000 : false),
  });

  const setFilter = (key: string, value: string | null) => {
    const next = new URLSearchParams(search);
    if (value) next.set(key, value);
    else next.delete(key);
    next.delete('page');
    setSearch(next);
  };

  return (
    <>
      <PageHeader title="Calls">
        <Button variant="default" leftSection={<IconMessage size={16} />} onClick={() => panels.openTestChat()}>
          Text test call
        </Button>
        <Button leftSection={<IconPhoneOutgoing size={16} />} onClick={() => panels.openOutboundCall()}>
          Place a call
        </Button>
      </PageHeader>
      <Group mb="md" gap="sm" role="search" aria-label="Filter calls">
        <Select label="Status" placeholder="any" clearable data={[...CALL_STATUSES]} value={filters.status ?? null} onChange={(v) => setFilter('status', v)} w={160} />
        <Select
          label="Agent"
          placeholder="any"
          clearable
          searchable
          data={(agents.data ?? []).map((a) => a.name)}
          value={filters.agent_name ?? null}
          onChange={(v) => setFilter('agent', v)}
          w={200}
        />
        <Select label="Direction" placeholder="any" clearable data={[...DIRECTIONS]} value={filters.direction ?? null} onChange={(v) => setFilter('direction', v)} w={150} />
        <Select label="End reason" placeholder="any" clearable data={[...END_REASONS]} value={filters.end_reason ?? null} onChange={(v) => setFilter('end_reason', v)} w={160} />
        <Select label="Outcome" placeholder="any" clearable data={OUTCOMES} value={filters.success ?? null} onChange={(v) => setFilter('success', v)} w={170} />
      </Group>
      <QueryState query={calls}>
        {({ calls: list, total, total_exact }) => (
          <>
            <ListTable
              label="Calls"
              minWidth={720}
              columns={['Started', 'Agent', 'Number', 'Direction', 'Status', 'Duration', 'End reason', 'Outcome']}
              items={list}
              rowKey={(call) => call.id}
              empty="No calls match."
              row={(call) => (
                <>
                  <Table.Td>
                    <Anchor component={Link} to={`/calls/${call.id}`}>
                      {formatTime(call.created_at)}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{call.agent_name}</Table.Td>
                  <Table.Td>{call.channel === 'web' ? 'browser' : call.phone_number}</Table.Td>
                  <Table.Td>{call.direction}</Table.Td>
                  <Table.Td>
                    <Badge color={STATUS_COLOR[call.status]} variant="light">
                      {call.status}
                    </Badge>
                  </Table.Td>
                  <Table.Td>{formatDuration(call.duration)}</Table.Td>
                  <Table.Td>{call.end_reason ?? '—'}</Table.Td>
                  <Table.Td>
                    <Outcome call={call} />
                  </Table.Td>
                </>
              )}
            />
            <Group justify="space-between" mt="md">
              <Text size="sm" c="dimmed">
                {total_exact === false ? `More than ${total.toLocaleString('en')} calls` : `${total} calls`}
              </Text>
              {total > PAGE_SIZE && (
                <Pagination
                  total={Math.ceil(total / PAGE_SIZE)}
                  value={page}
                  onChange={(p) => {
                    const next = new URLSearchParams(search);
                    next.set('page', String(p));
                    setSearch(next);
                  }}
                  getControlProps={(control) => ({ 'aria-label': `${control} page` })}
                  getItemProps={(p) => ({ 'aria-label': `Page ${p}` })}
                />
              )}
            </Group>
          </>
        )}
      </QueryState>
    </>
  );
}
