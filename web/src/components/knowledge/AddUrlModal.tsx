/** Add a URL document: fetched through the outbound request guard, re-fetched every `refresh_hours` if set. */
import { useState } from 'react';
import { NumberInput, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { KnowledgeDocumentCreate } from '../../api/types';
import { ModalForm } from '../ModalForm';
import { documentsKey } from './DocumentList';

export function AddUrlModal({ baseId, onClose }: { baseId: string; onClose(): void }) {
  const queryClient = useQueryClient();
  const [url, setUrl] = useState('');
  const [name, setName] = useState('');
  const [refreshHours, setRefreshHours] = useState<number | string>('');
  const add = useMutation({
    mutationFn: () => {
      const body: KnowledgeDocumentCreate = { url: url.trim(), refresh_hours: refreshHours === '' ? null : Number(refreshHours) };
      if (name.trim()) body.name = name.trim();
      return unwrap(api.POST('/api/knowledge-bases/{knowledge_base_id}/documents', { params: { path: { knowledge_base_id: baseId } }, body }));
    },
    onSuccess: (doc) => {
      notifications.show({ message: `Fetching ${doc.name}`, color: 'green' });
      void queryClient.invalidateQueries({ queryKey: documentsKey(baseId) });
      onClose();
    },
  });
  return (
    <ModalForm opened title="Add a URL" submitLabel="Add" busy={add.isPending} error={add.error} onSubmit={() => add.mutate()} onClose={onClose}>
      <TextInput label="URL" required placeholder="https://…" value={url} onChange={(e) => setUrl(e.currentTarget.value)} />
      <TextInput label="Name" description="Shown with its passages; default: the URL" value={name} onChange={(e) => setName(e.currentTarget.value)} />
      <NumberInput
        label="Refresh every (hours)"
        description="Fetched again on this schedule (1–720); empty: never"
        min={1}
        max={720}
        allowDecimal={false}
        w={220}
        value={refreshHours}
        onChange={setRefreshHours}
      />
    </ModalForm>
  );
}
