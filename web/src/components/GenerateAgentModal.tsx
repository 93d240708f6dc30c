import { useState } from 'react';
import { Button, Group, Modal, Stack, Textarea, TextInput } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../api/client';
import { ApiErrorAlert } from './ApiErrorAlert';

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
    <Modal opened={opened} onClose={onClose} title="Generate an agent from a description" size="lg">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          generate.mutate();
        }}
      >
        <Stack>
          {generate.error && <ApiErrorAlert error={generate.error} />}
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
          <Group justify="flex-end">
            <Button type="submit" loading={generate.isPending}>
              Generate draft
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
