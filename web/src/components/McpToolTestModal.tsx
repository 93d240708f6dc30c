/** Calls one tool of an MCP server with arguments (POST /api/mcp-servers/{id}/test) and shows the answer. */
import { useState } from 'react';
import { Alert, Badge, Button, Code, Group, JsonInput, Modal, Stack, Text } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { McpServer, McpTool } from '../api/types';
import { ApiErrorAlert } from './ApiErrorAlert';

const EXAMPLE: Record<string, unknown> = { string: '', number: 0, integer: 0, boolean: false, object: {}, array: [] };

function exampleArgs(tool: McpTool): string {
  const props = (tool.input_schema.properties ?? {}) as Record<string, { type?: string }>;
  return JSON.stringify(Object.fromEntries(Object.entries(props).map(([name, p]) => [name, EXAMPLE[p.type ?? ''] ?? ''])), null, 2);
}

export function McpToolTestModal({ server, tool, onClose }: { server: McpServer; tool: McpTool; onClose(): void }) {
  const [args, setArgs] = useState(() => exampleArgs(tool));
  const [argsError, setArgsError] = useState<string | null>(null);
  const test = useMutation({
    mutationFn: (parsed: Record<string, unknown>) =>
      unwrap(api.POST('/api/mcp-servers/{server_id}/test', { params: { path: { server_id: server.id } }, body: { tool: tool.name, args: parsed } })),
  });
  const run = () => {
    try {
      const parsed = JSON.parse(args || '{}');
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error();
      setArgsError(null);
      test.mutate(parsed);
    } catch {
      setArgsError('Arguments must be a JSON object');
    }
  };
  const result = test.data;
  return (
    <Modal opened onClose={onClose} title={`Test ${tool.ref}`} size="lg">
      <Stack gap="sm">
        <Text size="sm" c="dimmed">
          {tool.description}
        </Text>
        <JsonInput label="Arguments" autosize minRows={3} value={args} error={argsError} onChange={setArgs} />
        <Group justify="flex-end">
          <Button onClick={run} loading={test.isPending}>
            Call the tool
          </Button>
        </Group>
        {test.error && <ApiErrorAlert error={test.error} />}
        {result && (
          <Stack gap="xs" aria-label="Test result" role="region">
            <Group gap="xs">
              <Badge color={result.error ? 'red' : 'green'} size="lg">
                {result.error ? 'error' : 'ok'}
              </Badge>
              <Text size="sm">{result.duration_ms} ms</Text>
            </Group>
            {result.error && (
              <Alert color="red" title="Error" role="alert">
                {result.error}
              </Alert>
            )}
            {!result.error && (
              <Code block data-testid="mcp-test-response">
                {typeof result.response === 'string' ? result.response : JSON.stringify(result.response, null, 2)}
              </Code>
            )}
          </Stack>
        )}
      </Stack>
    </Modal>
  );
}
