/**
 * Upload by dropping files on the zone or choosing them (a plain drop zone and file input: no
 * dropzone package). Each file is sent as its own upload; a refused one (an unsupported kind, too
 * large) stays listed under the zone with the API's reason until dismissed.
 */
import { useRef, useState, type DragEvent } from 'react';
import { Alert, Button, CloseButton, Group, Loader, Paper, Stack, Text } from '@mantine/core';
import { IconUpload } from '@tabler/icons-react';
import { useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { fileToBase64, UPLOAD_ACCEPT } from '../../lib/knowledge';
import { documentsKey } from './DocumentList';

interface Upload {
  key: number;
  name: string;
  error?: string;
}

export function DocumentDropZone({ baseId }: { baseId: string }) {
  const queryClient = useQueryClient();
  const input = useRef<HTMLInputElement>(null);
  const nextKey = useRef(0);
  const [over, setOver] = useState(false);
  const [uploads, setUploads] = useState<Upload[]>([]);

  const upload = async (file: File) => {
    const key = nextKey.current++;
    setUploads((list) => [...list, { key, name: file.name }]);
    try {
      const content_base64 = await fileToBase64(file);
      await unwrap(api.POST('/api/knowledge-bases/{knowledge_base_id}/documents', { params: { path: { knowledge_base_id: baseId } }, body: { name: file.name, content_base64 } }));
      setUploads((list) => list.filter((u) => u.key !== key));
      void queryClient.invalidateQueries({ queryKey: documentsKey(baseId) });
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      setUploads((list) => list.map((u) => (u.key === key ? { ...u, error } : u)));
    }
  };
  const uploadAll = (files: FileList | null) => {
    for (const file of Array.from(files ?? [])) void upload(file);
  };
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    uploadAll(e.dataTransfer.files);
  };

  return (
    <Stack gap="xs">
      <Paper
        withBorder
        p="lg"
        data-testid="document-drop-zone"
        aria-label="Drop files to upload"
        role="region"
        onDragOver={(e) => {
          // Without preventDefault the browser would open the dropped file instead.
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
        style={{ borderStyle: 'dashed', borderWidth: 2, borderColor: over ? 'var(--mantine-color-blue-6)' : undefined, background: over ? 'var(--mantine-color-blue-light)' : undefined }}
      >
        <Group justify="center" gap="md">
          <IconUpload size={28} stroke={1.5} />
          <div>
            <Text fw={500}>Drop files here</Text>
            <Text size="xs" c="dimmed">
              PDF, DOCX, Markdown, text, HTML or CSV
            </Text>
          </div>
          <Button variant="light" onClick={() => input.current?.click()}>
            Choose files
          </Button>
          <input
            ref={input}
            type="file"
            multiple
            hidden
            accept={UPLOAD_ACCEPT}
            aria-label="Upload documents"
            onChange={(e) => {
              uploadAll(e.currentTarget.files);
              // The same file chosen again must fire change again.
              e.currentTarget.value = '';
            }}
          />
        </Group>
      </Paper>
      {uploads.map((u) =>
        u.error ? (
          <Alert key={u.key} color="red" p="xs" role="alert" title={`${u.name} was not uploaded`} withCloseButton={false}>
            <Group justify="space-between" wrap="nowrap">
              <Text size="sm">{u.error}</Text>
              <CloseButton aria-label={`Dismiss ${u.name}`} onClick={() => setUploads((list) => list.filter((x) => x.key !== u.key))} />
            </Group>
          </Alert>
        ) : (
          <Group key={u.key} gap="xs">
            <Loader size="xs" />
            <Text size="sm">Uploading {u.name}…</Text>
          </Group>
        ),
      )}
    </Stack>
  );
}
