/** Create a knowledge base (name, language, description) or rename and describe one: its language is fixed once created. */
import { useState } from 'react';
import { Textarea, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { KnowledgeBase } from '../../api/types';
import { ModalForm } from '../ModalForm';

export function KnowledgeBaseFormModal({ base, onClose, onCreated }: { base?: KnowledgeBase; onClose(): void; onCreated?(base: KnowledgeBase): void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(base?.name ?? '');
  const [language, setLanguage] = useState(base?.language ?? '');
  const [description, setDescription] = useState(base?.description ?? '');
  const save = useMutation({
    mutationFn: () =>
      base
        ? unwrap(api.PATCH('/api/knowledge-bases/{knowledge_base_id}', { params: { path: { knowledge_base_id: base.id } }, body: { name, description } }))
        : // An empty language is left to the API's default.
          unwrap(api.POST('/api/knowledge-bases', { body: { name, description, ...(language.trim() ? { language: language.trim() } : {}) } })),
    onSuccess: (saved) => {
      notifications.show({ message: `Knowledge base ${saved.name} saved`, color: 'green' });
      void queryClient.invalidateQueries({ queryKey: ['knowledge-bases'] });
      if (!base) onCreated?.(saved);
      onClose();
    },
  });
  const title = base ? `Edit knowledge base ${base.name}` : 'New knowledge base';
  return (
    <ModalForm opened title={title} submitLabel={base ? 'Save' : 'Create'} busy={save.isPending} error={save.error} onSubmit={() => save.mutate()} onClose={onClose}>
      <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
      <TextInput
        label="Language"
        description="BCP 47 (en, hi, en-IN): picks how words are stemmed when searching; fixed once created"
        placeholder="en"
        disabled={!!base}
        value={language}
        onChange={(e) => setLanguage(e.currentTarget.value)}
      />
      <Textarea label="Description" autosize minRows={2} value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
    </ModalForm>
  );
}
