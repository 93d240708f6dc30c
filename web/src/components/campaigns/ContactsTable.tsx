/** A campaign's contacts (GET /api/campaigns/{id}/contacts): state, attempts, last outcome and each attempt's call, a page at a time. */
import { useState } from 'react';
import { Anchor, Badge, Group, Pagination, Select, Stack, Table, Text } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { CONTACT_STATES } from '../../api/enums';
import type { CampaignContact } from '../../api/types';
import { CONTACT_STATE_COLOR } from '../../lib/campaign-form';
import { formatTime } from '../../lib/format';
import { QueryState } from '../ApiErrorAlert';
import { ListTable } from '../ListTable';

const PAGE_SIZE = 25;
type ContactState = CampaignContact['state'];

export function ContactsTable({ campaignId, pollMs }: { campaignId: string; pollMs: number | false }) {
  const [page, setPage] = useState(1);
  const [state, setState] = useState<ContactState | null>(null);
  const contacts = useQuery({
    queryKey: ['campaigns', campaignId, 'contacts', page, state],
    queryFn: () => unwrap(api.GET('/api/campaigns/{campaign_id}/contacts', { params: { path: { campaign_id: campaignId }, query: { page, page_size: PAGE_SIZE, ...(state ? { state } : {}) } } })),
    placeholderData: keepPreviousData,
    refetchInterval: pollMs,
  });
  const pages = Math.max(1, Math.ceil((contacts.data?.total ?? 0) / PAGE_SIZE));
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Select
          label="State"
          placeholder="All"
          clearable
          w={180}
          data={[...CONTACT_STATES]}
          value={state}
          onChange={(v) => {
            setState(v as ContactState | null);
            setPage(1);
          }}
        />
        {contacts.data && <Text size="sm" c="dimmed">{contacts.data.total} contacts</Text>}
      </Group>
      <QueryState query={contacts}>
        {({ contacts: list }) => (
          <ListTable
            label="Contacts"
            minWidth={760}
            columns={['Line', 'Phone', 'State', 'Attempts', 'Last outcome', 'Calls', 'Parameters']}
            items={list}
            rowKey={(c) => c.id}
            empty="No contacts in this state."
            row={(c) => (
              <>
                <Table.Td>{c.line ?? '—'}</Table.Td>
                <Table.Td>
                  {c.phone_number}
                  <Text size="xs" c="dimmed">
                    {c.timezone}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Badge color={CONTACT_STATE_COLOR[c.state]} variant="light">
                    {c.state}
                  </Badge>
                  {c.error && (
                    <Text size="xs" c="red">
                      {c.error}
                    </Text>
                  )}
                  {c.state === 'retry_wait' && c.next_attempt_at && (
                    <Text size="xs" c="dimmed">
                      next {formatTime(c.next_attempt_at)}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>{c.attempts}</Table.Td>
                <Table.Td>{c.last_outcome ?? '—'}</Table.Td>
                <Table.Td>
                  <Group gap={6}>
                    {c.calls.map((call) => (
                      <Anchor key={call.call_id} component={Link} to={`/calls/${call.call_id}`} size="sm">
                        #{call.attempt}
                        {call.outcome ? ` ${call.outcome}` : ''}
                      </Anchor>
                    ))}
                    {c.calls.length === 0 && '—'}
                  </Group>
                </Table.Td>
                <Table.Td>
                  <Text size="xs">{Object.entries(c.custom_parameters).map(([k, v]) => `${k}=${v}`).join(', ') || '—'}</Text>
                </Table.Td>
              </>
            )}
          />
        )}
      </QueryState>
      {pages > 1 && <Pagination total={pages} value={page} onChange={setPage} getControlProps={(control) => ({ 'aria-label': `${control} page` })} />}
    </Stack>
  );
}
