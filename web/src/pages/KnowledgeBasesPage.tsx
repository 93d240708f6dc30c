/**
 * Knowledge bases (docs/knowledge-base.md): the list with their document and chunk counts, create,
 * edit and delete; a base's own page holds its documents and the search tester.
 */
import { useState } from 'react';
import { Anchor, Badge, Button, Group, Table, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconEdit, IconPlus, IconTrash } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import { api, unwrap } from '../api/client';
import type { KnowledgeBase } from '../api/types';
import { ApiErrorAlert, QueryState } from '../components/ApiErrorAlert';
import { ConfirmModal } from '../components/ConfirmModal';
import { KnowledgeBaseFormModal } from '../components/knowledge/KnowledgeBaseFormModal';
import { ListTable } from '../components/ListTable';
import { PageHeader } from '../components/PageHeader';
import { formatTime } from '../lib/format';
import { RowAction } from '../components/RowAction';

export function KnowledgeBasesPage() {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const bases = useQuery({ queryKey: ['knowledge-bases'], queryFn: () => unwrap(api.GET('/api/knowledge-bases')) });
  const [editing, setEditing] = useState<KnowledgeBase | 'new' | null>(null);
  const [deleting, setDeleting] = useState<KnowledgeBase | null>(null);
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/knowledge-bases/{knowledge_base_id}', { params: { path: { knowledge_base_id: id } } })),
    onSuccess: () => {
      notifications.show({ message: `Knowledge base ${deleting?.name} deleted`, color: 'green' });
      setDeleting(null);
      void queryClient.invalidateQueries({ queryKey: ['knowledge-bases'] });
      // Deleting a base removes it from every agent and flow node (a new version of each).
      void queryClient.invalidateQueries({ queryKey: ['agents'] });
    },
    onError: () => setDeleting(null),
  });

  return (
    <>
      <PageHeader title="Knowledge bases">
        <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing('new')}>
          New knowledge base
        </Button>
      </PageHeader>
      {remove.error && <ApiErrorAlert error={remove.error} />}
      <QueryState query={bases}>
        {(list) => (
          <ListTable
            label="Knowledge bases"
            minWidth={640}
            columns={['Name', 'Language', 'Documents', 'Chunks', 'Updated', '']}
            items={list}
            rowKey={(base) => base.id}
            empty="No knowledge bases yet: a knowledge base holds your documents (FAQ, prices, policies) so agents can answer from them."
            row={(base) => (
              <>
                <Table.Td>
                  <Anchor component={Link} to={`/knowledge-bases/${base.id}`} fw={500}>
                    {base.name}
                  </Anchor>
                  <Text size="xs" c="dimmed" lineClamp={2}>
                    {base.description}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Group gap={6} wrap="nowrap">
                    <Text size="sm">{base.language}</Text>
                    <Badge variant="outline" size="xs">
                      {base.text_search_config}
                    </Badge>
                  </Group>
                </Table.Td>
                <Table.Td>{base.document_count}</Table.Td>
                <Table.Td>{base.chunk_count}</Table.Td>
                <Table.Td>{formatTime(base.updated_at)}</Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    <RowAction label="Edit" ariaLabel={`Edit ${base.name}`} icon={IconEdit} onClick={() => setEditing(base)} />
                    <RowAction label="Delete" ariaLabel={`Delete ${base.name}`} icon={IconTrash} danger onClick={() => setDeleting(base)} />
                  </Group>
                </Table.Td>
              </>
            )}
          />
        )}
      </QueryState>
      {editing !== null && (
        <KnowledgeBaseFormModal base={editing === 'new' ? undefined : editing} onClose={() => setEditing(null)} onCreated={(base) => navigate(`/knowledge-bases/${base.id}`)} />
      )}
      <ConfirmModal opened={deleting !== null} title="Delete knowledge base" confirmLabel="Delete" danger busy={remove.isPending} onClose={() => setDeleting(null)} onConfirm={() => deleting && remove.mutate(deleting.id)}>
        Delete <b>{deleting?.name}</b> and its {deleting?.document_count} documents? It is removed from every agent and flow node that uses it.
      </ConfirmModal>
    </>
  );
}
