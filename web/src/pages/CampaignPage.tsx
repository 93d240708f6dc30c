/**
 * One campaign: its status with the actions its status allows (start, pause, resume, cancel),
 * live progress (polled while it can change), its settings, the contacts table and the CSV export.
 */
import { useState, type ReactNode } from 'react';
import { Alert, Badge, Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconDownload, IconPlayerPause, IconPlayerPlay, IconUserPlus, IconX } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { api, fetchBlob, unwrap } from '../api/client';
import type { Campaign } from '../api/types';
import { ApiErrorAlert, QueryState } from '../components/ApiErrorAlert';
import { AddContactsModal } from '../components/campaigns/AddContactsModal';
import { ProgressBar, ProgressCounts } from '../components/campaigns/CampaignProgress';
import { ContactsTable } from '../components/campaigns/ContactsTable';
import { ConfirmModal } from '../components/ConfirmModal';
import { PageHeader } from '../components/PageHeader';
import { allowedActions, CAMPAIGN_STATUS_COLOR, type CampaignAction } from '../lib/campaign-form';
import { formatTime } from '../lib/format';

const POLL_MS = 2000;
const ACTION_LABEL: Record<CampaignAction, string> = { start: 'Start', pause: 'Pause', resume: 'Resume', cancel: 'Cancel campaign' };
const ACTION_ICON: Record<CampaignAction, ReactNode> = {
  start: <IconPlayerPlay size={16} />,
  pause: <IconPlayerPause size={16} />,
  resume: <IconPlayerPlay size={16} />,
  cancel: <IconX size={16} />,
};
/** Statuses in which progress can still move (calls in flight also end after a pause). */
const live = (c: Campaign) => ['running', 'scheduled'].includes(c.status) || c.progress.attempts_in_flight > 0;

interface Schedule {
  windows?: Array<{ days: string[]; start: string; end: string }>;
  holidays?: string[];
  start_at?: string | null;
  end_at?: string | null;
}

function Settings({ campaign }: { campaign: Campaign }) {
  const schedule = (campaign.schedule ?? {}) as Schedule;
  const pacing = (campaign.pacing ?? {}) as { max_concurrent?: number; calls_per_minute?: number; reserved_inbound?: number };
  const retry = (campaign.retry ?? {}) as { max_attempts?: number; retry_on?: string[]; min_interval_secs?: number };
  const windows = schedule.windows?.length ? schedule.windows.map((w) => `${w.days.join(' ')} ${w.start}–${w.end}`).join('; ') : 'any time';
  return (
    <Card withBorder>
      <Stack gap={4}>
        <Text size="sm">
          <b>Agent</b> {campaign.agent_name} · <b>Time zone</b> {campaign.timezone}
          {campaign.from_number ? ` · from ${campaign.from_number}` : ''}
        </Text>
        <Text size="sm">
          <b>Calling hours</b> {windows}
          {schedule.holidays?.length ? ` · holidays ${schedule.holidays.join(', ')}` : ''}
          {schedule.start_at ? ` · from ${formatTime(schedule.start_at)}` : ''}
          {schedule.end_at ? ` · until ${formatTime(schedule.end_at)}` : ''}
        </Text>
        <Text size="sm">
          <b>Pacing</b> {pacing.max_concurrent} at once, {pacing.calls_per_minute} per minute{pacing.reserved_inbound ? `, ${pacing.reserved_inbound} lines kept for inbound` : ''} · <b>Retries</b>{' '}
          {retry.max_attempts} attempts{retry.max_attempts && retry.max_attempts > 1 ? ` on ${retry.retry_on?.join(', ')}, ${Math.round((retry.min_interval_secs ?? 0) / 60)} min apart` : ''}
        </Text>
        <Text size="xs" c="dimmed">
          Created {formatTime(campaign.created_at)}
          {campaign.started_at ? ` · started ${formatTime(campaign.started_at)}` : ''}
          {campaign.ended_at ? ` · ended ${formatTime(campaign.ended_at)}` : ''}
        </Text>
      </Stack>
    </Card>
  );
}

export function CampaignPage() {
  const { campaignId = '' } = useParams();
  const queryClient = useQueryClient();
  const campaign = useQuery({
    queryKey: ['campaigns', campaignId],
    queryFn: () => unwrap(api.GET('/api/campaigns/{campaign_id}', { params: { path: { campaign_id: campaignId } } })),
    refetchInterval: (q) => (q.state.data && live(q.state.data) ? POLL_MS : false),
  });
  const [cancelling, setCancelling] = useState(false);
  const [adding, setAdding] = useState(false);
  const act = useMutation({
    mutationFn: (action: CampaignAction) => unwrap(api.POST(`/api/campaigns/{campaign_id}/${action}`, { params: { path: { campaign_id: campaignId } } })),
    onSuccess: (c) => {
      setCancelling(false);
      queryClient.setQueryData(['campaigns', campaignId], c);
      void queryClient.invalidateQueries({ queryKey: ['campaigns'] });
      notifications.show({ message: `${c.name} is ${c.status}`, color: 'green' });
    },
  });
  const exportCsv = useMutation({
    mutationFn: () => fetchBlob(`/api/campaigns/${campaignId}/contacts.csv`),
    onSuccess: (blob) => {
      const a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = `campaign-${campaignId}.csv`;
      a.click();
      URL.revokeObjectURL(a.href);
    },
  });

  return (
    <QueryState query={campaign}>
      {(c) => (
        <Stack>
          <PageHeader
            title={
              <Group gap="sm">
                {c.name}
                <Badge color={CAMPAIGN_STATUS_COLOR[c.status]} variant="light" size="lg" aria-label="Campaign status">
                  {c.status}
                </Badge>
              </Group>
            }
          >
            {allowedActions(c.status).map((a) => (
              <Button
                key={a}
                variant={a === 'cancel' ? 'light' : 'filled'}
                color={a === 'cancel' ? 'red' : undefined}
                leftSection={ACTION_ICON[a]}
                loading={act.isPending && act.variables === a}
                onClick={() => (a === 'cancel' ? setCancelling(true) : act.mutate(a))}
              >
                {ACTION_LABEL[a]}
              </Button>
            ))}
            {!['completed', 'cancelled'].includes(c.status) && (
              <Button variant="default" leftSection={<IconUserPlus size={16} />} onClick={() => setAdding(true)}>
                Add contacts
              </Button>
            )}
            <Button variant="default" leftSection={<IconDownload size={16} />} loading={exportCsv.isPending} onClick={() => exportCsv.mutate()}>
              Export CSV
            </Button>
          </PageHeader>
          {c.status_reason && (
            <Alert color={c.status === 'stopped' ? 'red' : 'orange'} title={c.status === 'stopped' ? 'Stopped' : 'Paused'}>
              {c.status_reason}
            </Alert>
          )}
          {act.error && <ApiErrorAlert error={act.error} title="Not done" />}
          {exportCsv.error && <ApiErrorAlert error={exportCsv.error} title="Export failed" />}
          <Card withBorder>
            <Stack gap="sm">
              <ProgressBar campaign={c} />
              <ProgressCounts campaign={c} wide />
            </Stack>
          </Card>
          <Settings campaign={c} />
          <Title order={3}>Contacts</Title>
          <ContactsTable campaignId={c.id} pollMs={live(c) ? POLL_MS : false} />
          {adding && <AddContactsModal campaignId={c.id} onClose={() => setAdding(false)} />}
          <ConfirmModal opened={cancelling} title="Cancel campaign" confirmLabel="Cancel campaign" danger busy={act.isPending} onClose={() => setCancelling(false)} onConfirm={() => act.mutate('cancel')}>
            Cancel <b>{c.name}</b>? No new call starts; calls in flight end as they would. This cannot be undone.
          </ConfirmModal>
        </Stack>
      )}
    </QueryState>
  );
}
