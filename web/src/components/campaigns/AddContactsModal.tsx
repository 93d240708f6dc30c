/**
 * Adds contacts to a campaign, also while it runs: the same file and mapping as at creation, then
 * what the API made of it. The mapped file goes as the body of the streamed CSV upload
 * (POST /api/campaigns/{id}/contacts.csv), which the 1 MB JSON body limit does not bound.
 */
import { useState } from 'react';
import { Button, Group, Modal, Stack, TextInput } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { CampaignUpload } from '../../api/types';
import { ApiErrorAlert } from '../ApiErrorAlert';
import { ContactsStep, useContactsFile } from './ContactsStep';
import { UploadResult } from './UploadResult';

export function AddContactsModal({ campaignId, onClose }: { campaignId: string; onClose(): void }) {
  const queryClient = useQueryClient();
  const contacts = useContactsFile();
  const [country, setCountry] = useState('');
  const [result, setResult] = useState<CampaignUpload | null>(null);
  const add = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/campaigns/{campaign_id}/contacts.csv', {
          params: { path: { campaign_id: campaignId }, query: country.trim() ? { default_country: country.trim() } : {} },
          body: contacts.csv!,
          // The CSV text as it is: openapi-fetch would otherwise send it as a JSON string.
          bodySerializer: (csv: string) => csv,
          headers: { 'Content-Type': 'text/csv' },
        }),
      ),
    onSuccess: (upload) => {
      setResult(upload);
      void queryClient.invalidateQueries({ queryKey: ['campaigns'] });
    },
  });
  return (
    <Modal opened onClose={onClose} title="Add contacts" size="lg">
      {result ? (
        <Stack>
          <UploadResult upload={result} />
          <Group justify="flex-end">
            <Button onClick={onClose}>Close</Button>
          </Group>
        </Stack>
      ) : (
        <form
          aria-label="Add contacts"
          onSubmit={(e) => {
            e.preventDefault();
            if (contacts.csv !== null) add.mutate();
          }}
        >
          <Stack>
            {add.error ? <ApiErrorAlert error={add.error} title="No contacts added" /> : null}
            <ContactsStep {...contacts.step} />
            <TextInput label="Country of national numbers" description="ISO code such as IN or US; empty: the campaign's" value={country} onChange={(e) => setCountry(e.currentTarget.value)} />
            <Group justify="flex-end">
              <Button type="submit" loading={add.isPending} disabled={contacts.csv === null}>
                Add contacts
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
