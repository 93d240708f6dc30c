/**
 * A knowledge base's documents with their ingestion status: polled every second while any is
 * processing (the API answers progress, not events), with refresh (ingest again) and delete.
 */
import { useEffect, useRef, useState } from 'react';
import { Anchor, Badge, Group, Progress, Stack, Table, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconRefresh, IconTrash } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { KnowledgeDocument } from '../../api/types';
import { formatTime } from '../../lib/format';
import { DOCUMENT_STATUS_COLOR, documentStatusText, formatBytes, isProcessing } from '../../lib/knowledge';
import { ApiErrorAlert, QueryState } from '../ApiErrorAlert';
import { ConfirmModal } from '../ConfirmModal';
import { ListTable } from '../ListTable';
import { RowAction } from '../RowAction';

const POLL_MS = 1000;

export const documentsKey = (baseId: string) => ['knowledge-bases', baseId, 'documents'];

function DocumentStatus({ doc }: { doc: KnowledgeDocument }) {
  const text = documentStatusText(doc);
  if (doc.status === 'failed') {
    return (
      <Text size="sm" c="red" data-testid="document-status" style={{ wordBreak: 'break-word' }}>
        {text}
      </Text>
    );
  }
  return (
    <Stack gap={4} w={170}>
      <Badge color={DOCUMENT_STATUS_COLOR[doc.status]} variant="light" data-testid="document-status" style={{ textTransform: 'none' }}>
        {text}
      </Badge>
      {doc.status === 'processing' && <Progress value={doc.progress} size="sm" animated aria-label={`${doc.name} ingestion progress`} />}
    </Stack>
  );
}

function Source({ doc }: { doc: KnowledgeDocument }) {
  if (doc.source === 'upload') return <Text size="sm">upload{doc.kind ? `, ${doc.kind}` : ''}</Text>;
  return (
    <Stack gap={0}>
      <Anchor href={doc.url ?? undefined} target="_blank" rel="noreferrer" size="sm" style={{ wordBreak: 'break-all' }}>
        {doc.url}
      </Anchor>
      <Text size="xs" c="dimmed">
        {doc.kind ?? 'not fetched yet'}
        {doc.refresh_hours ? `, refreshed every ${doc.refresh_hours} h` : ''}
      </Text>
    </Stack>
  );
}

export function DocumentList({ baseId }: { baseId: string }) {
  const queryClient = useQueryClient();
  const documents = useQuery({
    queryKey: documentsKey(baseId),
    queryFn: () => unwrap(api.GET('/api/knowledge-bases/{knowledge_base_id}/documents', { params: { path: { knowledge_base_id: baseId } } })),
    refetchInterval: (query) => (isProcessing(query.state.data) ? POLL_MS : false),
  });
  const [deleting, setDeleting] = useState<KnowledgeDocument | null>(null);
  const processingCount = (documents.data ?? []).filter((d) => d.status === 'processing').length;
  const previous = useRef(processingCount);
  // A document that finished changed its base's chunk count: refresh the header and the list page.
  useEffect(() => {
    if (processingCount < previous.current) {
      void queryClient.invalidateQueries({ queryKey: ['knowledge-bases'], exact: true });
      void queryClient.invalidateQueries({ queryKey: ['knowledge-bases', baseId], exact: true });
    }
    previous.current = processingCount;
  }, [processingCount, baseId, queryClient]);

  const path = (doc: KnowledgeDocument) => ({ params: { path: { knowledge_base_id: baseId, document_id: doc.id } } });
  const refresh = useMutation({
    mutationFn: (doc: KnowledgeDocument) => unwrap(api.POST('/api/knowledge-bases/{knowledge_base_id}/documents/{document_id}/refresh', path(doc))),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: documentsKey(baseId) }),
  });
  const remove = useMutation({
    mutationFn: (doc: KnowledgeDocument) => unwrap(api.DELETE('/api/knowledge-bases/{knowledge_base_id}/documents/{document_id}', path(doc))),
    onSuccess: (_, doc) => {
      notifications.show({ message: `Document ${doc.name} deleted`, color: 'green' });
      setDeleting(null);
      void queryClient.invalidateQueries({ queryKey: ['knowledge-bases'] });
    },
    onError: () => setDeleting(null),
  });

  return (
    <>
      {refresh.error && <ApiErrorAlert error={refresh.error} title="Refresh failed" />}
      {remove.error && <ApiErrorAlert error={remove.error} />}
      <QueryState query={documents}>
        {(list) => (
          <ListTable
            label="Documents"
            minWidth={760}
            columns={['Name', 'Source', 'Size', 'Status', 'Chunks', 'Indexed', '']}
            items={list}
            rowKey={(doc) => doc.id}
            empty="No documents yet: drop files above or add a URL."
            row={(doc) => (
              <>
                <Table.Td>
                  <Text fw={500} size="sm" style={{ wordBreak: 'break-all' }}>
                    {doc.name}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Source doc={doc} />
                </Table.Td>
                <Table.Td>{doc.size_bytes ? formatBytes(doc.size_bytes) : '—'}</Table.Td>
                <Table.Td>
                  <DocumentStatus doc={doc} />
                </Table.Td>
                <Table.Td>{doc.chunk_count}</Table.Td>
                <Table.Td>{formatTime(doc.ingested_at)}</Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    <RowAction
                      label={doc.source === 'url' ? 'Fetch and ingest again' : 'Ingest again'}
                      ariaLabel={`Refresh ${doc.name}`}
                      icon={IconRefresh}
                      disabled={doc.status === 'processing'}
                      loading={refresh.isPending && refresh.variables?.id === doc.id}
                      onClick={() => refresh.mutate(doc)}
                    />
                    <RowAction label="Delete" ariaLabel={`Delete ${doc.name}`} icon={IconTrash} danger onClick={() => setDeleting(doc)} />
                  </Group>
                </Table.Td>
              </>
            )}
          />
        )}
      </QueryState>
      <ConfirmModal opened={deleting !== null} title="Delete document" confirmLabel="Delete" danger busy={remove.isPending} onClose={() => setDeleting(null)} onConfirm={() => deleting && remove.mutate(deleting)}>
        Delete <b>{deleting?.name}</b>? Its passages stop being found at once, in calls too.
      </ConfirmModal>
    </>
  );
}
