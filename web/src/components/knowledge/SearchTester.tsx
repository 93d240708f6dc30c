/**
 * The search tester: a question against one knowledge base, answered with the ranked passages a
 * call would be given (document, heading, score, text) and how long the retrieval took.
 */
import { useState } from 'react';
import { Badge, Button, Fieldset, Group, NumberInput, Paper, Stack, Text, TextInput } from '@mantine/core';
import { IconSearch } from '@tabler/icons-react';
import { useMutation } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { KnowledgePassage } from '../../api/types';
import { ApiErrorAlert } from '../ApiErrorAlert';

function Passage({ passage, rank }: { passage: KnowledgePassage; rank: number }) {
  return (
    <Paper withBorder p="sm" component="li" aria-label={`Passage ${rank}`} data-testid="search-passage">
      <Group justify="space-between" wrap="nowrap" gap="xs" mb={4}>
        <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
          <Badge variant="filled" size="sm" circle>
            {rank}
          </Badge>
          <Text size="sm" fw={500} truncate>
            {passage.document}
          </Text>
          {passage.heading && (
            <Text size="sm" c="dimmed" truncate>
              {passage.heading}
            </Text>
          )}
        </Group>
        <Badge variant="light" style={{ textTransform: 'none', flexShrink: 0 }}>
          score {passage.score.toFixed(3)}
        </Badge>
      </Group>
      <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
        {passage.content}
      </Text>
    </Paper>
  );
}

export function SearchTester({ baseId }: { baseId: string }) {
  const [query, setQuery] = useState('');
  const [topK, setTopK] = useState<number | string>(5);
  const [threshold, setThreshold] = useState<number | string>('');
  const search = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/knowledge-bases/{knowledge_base_id}/search', {
          params: { path: { knowledge_base_id: baseId } },
          body: { query, ...(topK !== '' ? { top_k: Number(topK) } : {}), ...(threshold !== '' ? { threshold: Number(threshold) } : {}) },
        }),
      ),
  });
  const result = search.data;

  return (
    <Fieldset legend="Search tester">
      <form
        aria-label="Search tester"
        onSubmit={(e) => {
          e.preventDefault();
          search.mutate();
        }}
      >
        <Group align="flex-end" gap="xs">
          <TextInput label="Question" placeholder="How much is a blood test?" required style={{ flex: 1, minWidth: 220 }} value={query} onChange={(e) => setQuery(e.currentTarget.value)} />
          <NumberInput label="Passages" min={1} max={20} allowDecimal={false} w={100} value={topK} onChange={setTopK} />
          <NumberInput label="Minimum score" min={0} max={1} step={0.05} decimalScale={3} placeholder="0" w={130} value={threshold} onChange={setThreshold} />
          <Button type="submit" leftSection={<IconSearch size={16} />} loading={search.isPending}>
            Search
          </Button>
        </Group>
      </form>
      <Stack gap="xs" mt="sm">
        {search.error && <ApiErrorAlert error={search.error} title="Search failed" />}
        {result && (
          <>
            <Text size="xs" c="dimmed" role="status">
              {result.passages.length} passage{result.passages.length === 1 ? '' : 's'} in {result.ms.toFixed(1)} ms
            </Text>
            {result.passages.length === 0 ? (
              <Text c="dimmed">No passage matches: calls asking this would get no passages.</Text>
            ) : (
              <Stack component="ol" aria-label="Passages" gap="xs" p={0} m={0} style={{ listStyle: 'none' }}>
                {result.passages.map((p, i) => (
                  <Passage key={p.chunk_id} passage={p} rank={i + 1} />
                ))}
              </Stack>
            )}
          </>
        )}
      </Stack>
    </Fieldset>
  );
}
