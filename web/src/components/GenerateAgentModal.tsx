import { useState } from 'react';
import { Textarea, TextInput } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../api/client';
import { ModalForm } from './ModalForm';

/** Asks the LLM for a draft (POST /api/agents/generate) and opens it, unsaved, in the agent editor. */
export function GenerateAgentModal({ opened, onClose }: { opened: boolean; onClose(): void }) {
  const navigate = useNavigate();
  const [description, setDescription] = useState('');
  const [language, setLanguage] = useState('en');
  const generate = useMutation({
    mutationFn: () => unwrap(api.POST('/api/agents/generate', { body: { description, language } })),
    onSuccess: (draft) => {
      onClose();
      navigate('/agents/new', { state: { draft } });
    },
  });
  return (
    <ModalForm opened={opened} title="Generate an agent from a description" size="lg" submitLabel="Generate draft" busy={generate.isPending} error={generate.error} onSubmit={() => generate.mutate()} onClose={onClose}>
      <Textarea
        label="What should the agent do?"
        description="The draft opens in the editor for review; nothing is saved until you save it."
        required
        autosize
        minRows={4}
        value={description}
        onChange={(e) => setDescription(e.currentTarget.value)}
      />
      <TextInput label="Language" description="BCP-47 tag, e.g. en, hi, ta-IN" required value={language} onChange={(e) => setLanguage(e.currentTarget.value)} />
    </ModalForm>
  );
}
