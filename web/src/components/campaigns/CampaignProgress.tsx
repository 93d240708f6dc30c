/** A campaign's progress: a bar of contacts settled, and the counts (dialled, completed, failed, remaining). */
import { Group, Progress, Stack, Text } from '@mantine/core';
import type { Campaign } from '../../api/types';
import { progressCounts } from '../../lib/campaign-form';

export function ProgressBar({ campaign, size = 'md' }: { campaign: Campaign; size?: 'sm' | 'md' }) {
  const c = progressCounts(campaign.progress);
  const pct = (n: number) => (c.total ? (100 * n) / c.total : 0);
  return (
    <Progress.Root size={size === 'sm' ? 'sm' : 'lg'} aria-label={`${campaign.name} progress`}>
      <Progress.Section value={pct(c.completed)} color="green" />
      <Progress.Section value={pct(c.failed)} color="red" />
      <Progress.Section value={pct(c.notCalled)} color="gray" />
    </Progress.Root>
  );
}

/** The counts as one line (the list) or labelled figures (the campaign page). */
export function ProgressCounts({ campaign, wide }: { campaign: Campaign; wide?: boolean }) {
  const c = progressCounts(campaign.progress);
  const p = campaign.progress;
  if (!wide) {
    return (
      <Text size="xs" c="dimmed">
        {c.dialled} dialled · {c.completed} completed · {c.failed} failed · {c.remaining} remaining
      </Text>
    );
  }
  const figures: Array<[string, string | number]> = [
    ['Contacts', c.total],
    ['Dialled', c.dialled],
    ['In flight', c.inFlight],
    ['Completed', c.completed],
    ['Failed', c.failed],
    ['Remaining', c.remaining],
    ['Do-not-call', p.by_state.skipped_dnc ?? 0],
    ['Invalid', p.by_state.invalid ?? 0],
    ['Answer rate', p.answer_rate === null ? '—' : `${Math.round(p.answer_rate * 100)}%`],
  ];
  return (
    <Group gap="xl" role="list" aria-label="Progress">
      {figures.map(([label, value]) => (
        <Stack key={label} gap={0} role="listitem" aria-label={label}>
          <Text size="xs" c="dimmed">
            {label}
          </Text>
          <Text fw={600} size="lg">
            {value}
          </Text>
        </Stack>
      ))}
    </Group>
  );
}
