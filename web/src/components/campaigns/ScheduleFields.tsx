/**
 * When a campaign calls (schedule: calling windows in each contact's local time, holidays, start
 * and end) and how fast and how often (pacing, retry): the fields of POST /api/campaigns.
 */
import { ActionIcon, Button, Checkbox, Chip, Fieldset, Group, MultiSelect, NumberInput, Stack, Text, TextInput } from '@mantine/core';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import { ATTEMPT_OUTCOMES, WEEKDAYS } from '../../api/enums';
import type { CampaignFormState, RetryOutcome, Weekday, WindowRow } from '../../lib/campaign-form';

type Patch = (patch: Partial<CampaignFormState>) => void;

export function ScheduleFields({ form, set, fieldError }: { form: CampaignFormState; set: Patch; fieldError(f: string): string | undefined }) {
  const setWindow = (i: number, patch: Partial<WindowRow>) => set({ windows: form.windows.map((w, j) => (j === i ? { ...w, ...patch } : w)) });
  return (
    <Fieldset legend="Calling hours">
      <Stack gap="xs">
        <Text size="xs" c="dimmed">
          In each contact's own time zone; the end is excluded. No window: any time.
        </Text>
        {form.windows.map((w, i) => (
          <Group key={i} gap="xs" align="flex-end" role="group" aria-label={`Window ${i + 1}`}>
            <Chip.Group multiple value={w.days} onChange={(days) => setWindow(i, { days: days as Weekday[] })}>
              <Group gap={4}>
                {WEEKDAYS.map((d) => (
                  <Chip key={d} value={d} size="xs">
                    {d}
                  </Chip>
                ))}
              </Group>
            </Chip.Group>
            <TextInput type="time" label="From" size="xs" w={100} value={w.start} onChange={(e) => setWindow(i, { start: e.currentTarget.value })} />
            <TextInput type="time" label="Until" size="xs" w={100} value={w.end} onChange={(e) => setWindow(i, { end: e.currentTarget.value })} />
            <ActionIcon variant="subtle" color="red" aria-label={`Remove window ${i + 1}`} onClick={() => set({ windows: form.windows.filter((_, j) => j !== i) })}>
              <IconTrash size={16} />
            </ActionIcon>
          </Group>
        ))}
        {fieldError('schedule.windows') && (
          <Text size="xs" c="red">
            {fieldError('schedule.windows')}
          </Text>
        )}
        <Group>
          <Button size="xs" variant="light" leftSection={<IconPlus size={14} />} onClick={() => set({ windows: [...form.windows, { days: ['sat'], start: '10:00', end: '14:00' }] })}>
            Add window
          </Button>
        </Group>
        <TextInput label="Holidays" description="Dates without calls, e.g. 2026-12-25, 2027-01-01" value={form.holidays} error={fieldError('schedule.holidays')} onChange={(e) => set({ holidays: e.currentTarget.value })} />
        <Group grow>
          <TextInput type="datetime-local" label="Start at" description="Optional; your browser's time" value={form.startAt} error={fieldError('schedule.start_at')} onChange={(e) => set({ startAt: e.currentTarget.value })} />
          <TextInput type="datetime-local" label="End at" description="Optional; it completes then" value={form.endAt} error={fieldError('schedule.end_at')} onChange={(e) => set({ endAt: e.currentTarget.value })} />
        </Group>
      </Stack>
    </Fieldset>
  );
}

export function PacingFields({ form, set, fieldError }: { form: CampaignFormState; set: Patch; fieldError(f: string): string | undefined }) {
  return (
    <Fieldset legend="Pacing and retries">
      <Stack gap="xs">
        <Group grow align="flex-start">
          <NumberInput label="Calls at once" min={1} max={1000} value={form.maxConcurrent} error={fieldError('pacing.max_concurrent')} onChange={(v) => set({ maxConcurrent: v })} />
          <NumberInput label="New calls per minute" min={1} max={600} value={form.callsPerMinute} error={fieldError('pacing.calls_per_minute')} onChange={(v) => set({ callsPerMinute: v })} />
          <NumberInput label="Lines kept for inbound" min={0} value={form.reservedInbound} error={fieldError('pacing.reserved_inbound')} onChange={(v) => set({ reservedInbound: v })} />
        </Group>
        <Group grow align="flex-start">
          <NumberInput label="Attempts per contact" description="The first included" min={1} max={10} value={form.maxAttempts} error={fieldError('retry.max_attempts')} onChange={(v) => set({ maxAttempts: v })} />
          <NumberInput label="Minutes between attempts" min={0} value={form.minIntervalMins} error={fieldError('retry.min_interval_secs')} onChange={(v) => set({ minIntervalMins: v })} />
        </Group>
        <MultiSelect label="Retry on" data={[...ATTEMPT_OUTCOMES].filter((o) => o !== 'answered')} value={form.retryOn} error={fieldError('retry.retry_on')} onChange={(v) => set({ retryOn: v as RetryOutcome[] })} />
        <Checkbox label="Start calling when created (else it stays a draft)" checked={form.start} onChange={(e) => set({ start: e.currentTarget.checked })} />
      </Stack>
    </Fieldset>
  );
}
