/** Fires a tool's webhook with arguments (POST /api/tools/{id}/test) and shows what came back. */
import { useState } from 'react';
import { Alert, Badge, Button, Code, Group, JsonInput, Modal, Stack, Text } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { Tool } from '../api/types';
import { ApiErrorAlert } from './ApiErrorAlert';

const EXAMPLE: Record<string, unknown> = { string: '', number: 0, integer: 0, boolean: false, object: {}, array: [] };

function exampleArgs(tool: Tool): string {
  const props = tool.parameters.properties ?? {};
  return JSON.stringify(Object.fromEntries(Object.entries(props).map(([name, p]) => [name, EXAMPLE[(p as { type: string }).type] ?? ''])), null, 2);
}

export function ToolTestModal({ tool, onClose }: { tool: Tool; onClose(): void }) {
  const [args, setArgs] = useState(() => exampleArgs(tool));
  const [argsError, setArgsError] = useState<string | null>(null);
  const test = useMutation({
    mutationFn: (parsed: Record<string, unknown>) => unwrap(api.POST('/api/tools/{tool_id}/test', { params: { path: { tool_id: tool.id } }, body: { args: parsed } })),
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
    <Modal opened onClose={onClose} title={`Test ${tool.name}`} size="lg">
      <Stack gap="sm">
        <Text size="sm" c="dimmed">
          {tool.webhook_method} {tool.webhook_url}
        </Text>
        <JsonInput label="Arguments" autosize minRows={3} value={args} error={argsError} onChange={setArgs} />
        <Group justify="flex-end">
          <Button onClick={run} loading={test.isPending}>
            Send test request
          </Button>
        </Group>
        {test.error && <ApiErrorAlert error={test.error} />}
        {result && (
          <Stack gap="xs" aria-label="Test result" role="region">
            <Group gap="xs">
              <Badge color={result.error ? 'red' : 'green'} size="lg">
                {result.status_code ?? 'no response'}
              </Badge>
              <Text size="sm">{result.duration_ms} ms</Text>
            </Group>
            {result.error && (
              <Alert color="red" title="Error" role="alert">
                {result.error}
              </Alert>
            )}
            <Text size="sm" fw={500}>
              Response
            </Text>
            <Code block data-testid="tool-test-response">
              {typeof result.response === 'string' ? result.response : JSON.stringify(result.response, null, 2)}
            </Code>
          </Stack>
        )}
      </Stack>
    </Modal>
  );
}
