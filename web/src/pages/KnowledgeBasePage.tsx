/**
 * One knowledge base: its documents (drop or choose files, add a URL; status and progress while
 * they are ingested) and the search tester, which shows what a call would be given for a question.
 */
import { useState } from 'react';
import { Anchor, Badge, Button, Group, Stack, Text, Title } from '@mantine/core';
import { IconEdit, IconLink } from '@tabler/icons-react';
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { api, unwrap } from '../api/client';
import type { KnowledgeBase } from '../api/types';
import { QueryState } from '../components/ApiErrorAlert';
import { AddUrlModal } from '../components/knowledge/AddUrlModal';
import { DocumentDropZone } from '../components/knowledge/DocumentDropZone';
import { DocumentList } from '../components/knowledge/DocumentList';
import { KnowledgeBaseFormModal } from '../components/knowledge/KnowledgeBaseFormModal';
import { SearchTester } from '../components/knowledge/SearchTester';
import { PageHeader } from '../components/PageHeader';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function KnowledgeBasePage() {
  const { knowledgeBaseId } = useParams();
  const base = useQuery({
    queryKey: ['knowledge-bases', knowledgeBaseId],
    queryFn: () => unwrap(api.GET('/api/knowledge-bases/{knowledge_base_id}', { params: { path: { knowledge_base_id: knowledgeBaseId! } } })),
  });
  return <QueryState query={base}>{(b) => <Base key={b.id} base={b} />}</QueryState>;
}

function Base({ base }: { base: KnowledgeBase }) {
  const [editing, setEditing] = useState(false);
  const [addingUrl, setAddingUrl] = useState(false);
  return (
    <>
      <Anchor component={Link} to="/knowledge-bases" size="sm">
        ← Knowledge bases
      </Anchor>
      <PageHeader title={base.name}>
        <Button variant="default" leftSection={<IconEdit size={16} />} onClick={() => setEditing(true)}>
          Edit
        </Button>
        <Button leftSection={<IconLink size={16} />} onClick={() => setAddingUrl(true)}>
          Add a URL
        </Button>
      </PageHeader>
      <Stack gap="md">
        <Group gap="xs">
          <Badge variant="outline" style={{ textTransform: 'none' }}>
            language {base.language} ({base.text_search_config})
          </Badge>
          <Badge variant="light" style={{ textTransform: 'none' }} data-testid="base-counts">
            {plural(base.document_count, 'document')}, {plural(base.chunk_count, 'chunk')}
          </Badge>
          {base.description && (
            <Text size="sm" c="dimmed">
              {base.description}
            </Text>
          )}
        </Group>
        <DocumentDropZone baseId={base.id} />
        <section aria-labelledby="documents-heading">
          <Title order={3} size="h4" id="documents-heading" mb="xs">
            Documents
          </Title>
          <DocumentList baseId={base.id} />
        </section>
        <SearchTester baseId={base.id} />
      </Stack>
      {editing && <KnowledgeBaseFormModal base={base} onClose={() => setEditing(false)} />}
      {addingUrl && <AddUrlModal baseId={base.id} onClose={() => setAddingUrl(false)} />}
    </>
  );
}
