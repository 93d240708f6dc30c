/** Add or edit an MCP server: its URL, headers (values come back masked), allowed tools and timeout. */
import { useState } from 'react';
import { NumberInput, TagsInput, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { McpServer, McpServerCreate } from '../api/types';
import { KeyValueEditor, recordOf, rowsOf, type KeyValueRow } from './KeyValueEditor';
import { ModalForm } from './ModalForm';

export function McpServerFormModal({ server, onClose }: { server?: McpServer; onClose(): void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(server?.name ?? '');
  const [url, setUrl] = useState(server?.url ?? '');
  const [headers, setHeaders] = useState<KeyValueRow[]>(rowsOf(server?.headers));
  const [headersChanged, setHeadersChanged] = useState(false);
  const [allowed, setAllowed] = useState<string[]>(server?.allowed_tools ?? []);
  const [timeout, setTimeoutSecs] = useState<number | string>(server?.timeout_secs ?? '');
  const save = useMutation({
    mutationFn: () => {
      // An empty list means every tool (null), not none.
      const body: Partial<McpServerCreate> = { url, allowed_tools: allowed.length ? allowed : null };
      if (timeout !== '') body.timeout_secs = Number(timeout);
      if (!server || headersChanged) body.headers = recordOf(headers);
      return server
        ? unwrap(api.PATCH('/api/mcp-servers/{server_id}', { params: { path: { server_id: server.id } }, body }))
        : unwrap(api.POST('/api/mcp-servers', { body: { ...body, name } as McpServerCreate }));
    },
    onSuccess: (saved) => {
      notifications.show({ message: `MCP server ${saved.name} saved${server ? '' : ': refresh it to list its tools'}`, color: 'green' });
      void queryClient.invalidateQueries({ queryKey: ['mcp-servers'] });
      onClose();
    },
  });
  const title = server ? `Edit MCP server ${server.name}` : 'New MCP server';
  return (
    <ModalForm opened title={title} submitLabel="Save" busy={save.isPending} error={save.error} size="lg" onSubmit={() => save.mutate()} onClose={onClose}>
      <TextInput label="Name" description="snake_case; agents refer to its tools as name/tool; cannot be changed later" required disabled={!!server} value={name} onChange={(e) => setName(e.currentTarget.value)} />
      <TextInput label="URL" description="Streamable HTTP endpoint (or an older HTTP+SSE one)" required placeholder="https://…/mcp" value={url} onChange={(e) => setUrl(e.currentTarget.value)} />
      <KeyValueEditor
        label="Headers"
        keyLabel="Header"
        valueLabel="Value"
        addLabel="Add header"
        rows={headers}
        onChange={(rows) => {
          setHeaders(rows);
          setHeadersChanged(true);
        }}
      />
      <TagsInput label="Allowed tools" description="empty: every tool the server lists" data={server?.tools.map((t) => t.name) ?? []} value={allowed} onChange={setAllowed} />
      <NumberInput label="Timeout (seconds)" placeholder="default" min={1} max={60} allowDecimal={false} w={170} value={timeout} onChange={setTimeoutSecs} />
    </ModalForm>
  );
}
