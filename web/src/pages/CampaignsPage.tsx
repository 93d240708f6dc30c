/**
 * Campaigns (docs/campaigns.md): the list with each campaign's agent, status and progress, kept
 * fresh while any is calling, and the dialog that creates one from a CSV contact list.
 */
import { useState } from 'react';
import { Anchor, Badge, Button, Stack, Table, Text } from '@mantine/core';
import { IconPhoneOff, IconPlus } from '@tabler/icons-react';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { QueryState } from '../components/ApiErrorAlert';
import { CampaignFormModal } from '../components/campaigns/CampaignFormModal';
import { ProgressBar, ProgressCounts } from '../components/campaigns/CampaignProgress';
import { ListTable } from '../components/ListTable';
import { PageHeader } from '../components/PageHeader';
import { CAMPAIGN_STATUS_COLOR } from '../lib/campaign-form';
import { formatTime } from '../lib/format';

const POLL_MS = 3000;
const isActive = (status: string) => status === 'running' || status === 'scheduled';

export function CampaignsPage() {
  const campaigns = useQuery({
    queryKey: ['campaigns'],
    queryFn: () => unwrap(api.GET('/api/campaigns')),
    refetchInterval: (q) => (q.state.data?.campaigns.some((c) => isActive(c.status) || c.progress.attempts_in_flight > 0) ? POLL_MS : false),
  });
  const [creating, setCreating] = useState(false);
  return (
    <>
      <PageHeader title="Campaigns">
        <Button variant="default" component={Link} to="/do-not-call" leftSection={<IconPhoneOff size={16} />}>
          Do-not-call list
        </Button>
        <Button leftSection={<IconPlus size={16} />} onClick={() => setCreating(true)}>
          New campaign
        </Button>
      </PageHeader>
      <QueryState query={campaigns}>
        {({ campaigns: list }) => (
          <ListTable
            label="Campaigns"
            minWidth={720}
            columns={['Name', 'Agent', 'Status', 'Progress', 'Created']}
            items={list}
            rowKey={(c) => c.id}
            empty="No campaigns yet: a campaign calls a list of contacts with one agent, within calling hours."
            row={(c) => (
              <>
                <Table.Td>
                  <Anchor component={Link} to={`/campaigns/${c.id}`} fw={500}>
                    {c.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>{c.agent_name}</Table.Td>
                <Table.Td>
                  <Badge color={CAMPAIGN_STATUS_COLOR[c.status]} variant="light" aria-label={`Status ${c.status}`}>
                    {c.status}
                  </Badge>
                  {c.status_reason && (
                    <Text size="xs" c="dimmed" lineClamp={2}>
                      {c.status_reason}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td miw={220}>
                  <Stack gap={4}>
                    <ProgressBar campaign={c} size="sm" />
                    <ProgressCounts campaign={c} />
                  </Stack>
                </Table.Td>
                <Table.Td>{formatTime(c.created_at)}</Table.Td>
              </>
            )}
          />
        )}
      </QueryState>
      {creating && <CampaignFormModal onClose={() => setCreating(false)} />}
    </>
  );
}
