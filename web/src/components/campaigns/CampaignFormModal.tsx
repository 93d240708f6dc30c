/**
 * Creates a campaign (POST /api/campaigns): name, agent, time zone, calling hours, pacing and
 * retries, and the contact list from a CSV file with its column mapping. The answer's upload
 * (rejected rows with their line) is shown in the same dialog, with a link to the campaign.
 */
import { useState } from 'react';
import { Autocomplete, Button, Group, Modal, Select, Stack, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, ApiError, unwrap } from '../../api/client';
import type { Campaign } from '../../api/types';
import { campaignBody, emptyCampaignForm, timeZones, type CampaignFormState } from '../../lib/campaign-form';
import { splitFieldErrors } from '../../lib/field-errors';
import { ApiErrorAlert } from '../ApiErrorAlert';
import { ContactsStep, useContactsFile } from './ContactsStep';
import { PacingFields, ScheduleFields } from './ScheduleFields';
import { UploadResult } from './UploadResult';

const FIELDS = ['name', 'agent_name', 'from_number', 'timezone', 'default_country', 'contacts_csv', 'schedule', 'pacing', 'retry'];
const ZONES = timeZones();

export function CampaignFormModal({ onClose }: { onClose(): void }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const agents = useQuery({ queryKey: ['agents'], queryFn: () => unwrap(api.GET('/api/agents')) });
  const [form, setForm] = useState<CampaignFormState>(emptyCampaignForm);
  const set = (patch: Partial<CampaignFormState>) => setForm((f) => ({ ...f, ...patch }));
  const contacts = useContactsFile();
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [general, setGeneral] = useState<string[]>([]);
  const [created, setCreated] = useState<Campaign | null>(null);

  const create = useMutation({
    mutationFn: () => unwrap(api.POST('/api/campaigns', { body: campaignBody(form, contacts.csv!) })),
    onMutate: () => {
      setErrors({});
      setGeneral([]);
    },
    onSuccess: (campaign) => {
      setCreated(campaign);
      void queryClient.invalidateQueries({ queryKey: ['campaigns'] });
    },
    onError: (err) => {
      if (!(err instanceof ApiError && err.status === 422)) return;
      const split = splitFieldErrors(err.detail, (f) => FIELDS.includes(f.split('.')[0]!));
      setErrors(split.fields);
      setGeneral(split.general);
    },
  });
  // A message for the field itself, one inside it ("schedule.windows.0.start" at the windows), or for what holds it.
  const fieldError = (f: string) =>
    errors[f] ?? Object.entries(errors).find(([k]) => k.startsWith(`${f}.`))?.[1] ?? Object.entries(errors).find(([k]) => f.startsWith(`${k}.`))?.[1];
  const ready = !!form.name.trim() && !!form.agentName && contacts.csv !== null;

  if (created?.upload) {
    return (
      <Modal opened onClose={onClose} title="Campaign created" size="lg">
        <Stack>
          <UploadResult upload={created.upload} />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Close
            </Button>
            <Button onClick={() => navigate(`/campaigns/${created.id}`)}>Open campaign</Button>
          </Group>
        </Stack>
      </Modal>
    );
  }
  return (
    <Modal opened onClose={onClose} title="New campaign" size="xl">
      <form
        aria-label="New campaign"
        onSubmit={(e) => {
          e.preventDefault();
          if (ready) create.mutate();
        }}
      >
        <Stack>
          {create.error && !Object.keys(errors).length ? <ApiErrorAlert error={create.error} title="The campaign was not created" /> : null}
          {general.length > 0 && Object.keys(errors).length > 0 ? <ApiErrorAlert error={new Error(general.join('; '))} title="The campaign was not created" /> : null}
          <Group grow align="flex-start">
            <TextInput label="Name" required value={form.name} error={fieldError('name')} onChange={(e) => set({ name: e.currentTarget.value })} />
            <Select label="Agent" required searchable data={(agents.data ?? []).map((a) => a.name)} value={form.agentName} error={fieldError('agent_name')} onChange={(v) => set({ agentName: v })} />
            <TextInput label="Caller ID" description="Optional; default: the agent's outbound number" value={form.fromNumber} error={fieldError('from_number')} onChange={(e) => set({ fromNumber: e.currentTarget.value })} />
          </Group>
          <Group grow align="flex-start">
            <Autocomplete label="Time zone" description="For contacts without their own (IANA)" required limit={20} data={ZONES} value={form.timezone} error={fieldError('timezone')} onChange={(v) => set({ timezone: v })} />
            <TextInput label="Country of national numbers" description="ISO code such as IN or US; empty: E.164 numbers only" value={form.defaultCountry} error={fieldError('default_country')} onChange={(e) => set({ defaultCountry: e.currentTarget.value })} />
          </Group>
          <ContactsStep {...contacts.step} error={fieldError('contacts_csv')} />
          <ScheduleFields form={form} set={set} fieldError={fieldError} />
          <PacingFields form={form} set={set} fieldError={fieldError} />
          <Group justify="flex-end">
            <Button type="submit" loading={create.isPending} disabled={!ready}>
              Create campaign
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
