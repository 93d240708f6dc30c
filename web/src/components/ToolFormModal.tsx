/** Create or edit a webhook tool: its parameters as a small schema editor, headers as rows. */
import { useState } from 'react';
import { ActionIcon, Alert, Button, Checkbox, Group, Modal, NumberInput, SegmentedControl, Select, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ApiError, unwrap } from '../api/client';
import { TOOL_PARAM_TYPES, WEBHOOK_METHODS } from '../api/enums';
import type { Tool, ToolCreate } from '../api/types';
import { splitFieldErrors } from '../lib/field-errors';
import { KeyValueEditor, recordOf, rowsOf, type KeyValueRow } from './KeyValueEditor';

interface ParamRow {
  name: string;
  type: string;
  description: string;
  required: boolean;
  /** Other JSON Schema keywords of the property (enum, items, …), kept as they are. */
  rest: Record<string, unknown>;
}

type Parameters = ToolCreate['parameters'];

function paramRows(parameters: Parameters | undefined): ParamRow[] {
  const required = new Set(parameters?.required ?? []);
  return Object.entries(parameters?.properties ?? {}).map(([name, prop]) => {
    const { type, description, ...rest } = prop as { type: string; description?: string };
    return { name, type, description: description ?? '', required: required.has(name), rest };
  });
}

function parametersOf(rows: ParamRow[]): Parameters {
  const named = rows.filter((r) => r.name.trim());
  return {
    type: 'object',
    properties: Object.fromEntries(named.map((r) => [r.name.trim(), { ...r.rest, type: r.type as never, ...(r.description ? { description: r.description } : {}) }])),
    required: named.filter((r) => r.required).map((r) => r.name.trim()),
  };
}

const FIELDS = ['name', 'description', 'webhook_url', 'webhook_method', 'timeout_secs', 'headers', 'parameters'];

export function ToolFormModal({ tool, onClose }: { tool?: Tool; onClose(): void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(tool?.name ?? '');
  const [description, setDescription] = useState(tool?.description ?? '');
  const [url, setUrl] = useState(tool?.webhook_url ?? '');
  const [method, setMethod] = useState<string>(tool?.webhook_method ?? WEBHOOK_METHODS[0]!);
  const [timeout, setTimeoutSecs] = useState<number | string>(tool?.timeout_secs ?? '');
  const [params, setParams] = useState<ParamRow[]>(paramRows(tool?.parameters as Parameters | undefined));
  const [headers, setHeaders] = useState<KeyValueRow[]>(rowsOf(tool?.headers));
  const [headersChanged, setHeadersChanged] = useState(false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [general, setGeneral] = useState<string[]>([]);

  const save = useMutation({
    mutationFn: () => {
      const body: Partial<ToolCreate> = { name, description, webhook_url: url, webhook_method: method as ToolCreate['webhook_method'], parameters: parametersOf(params) };
      if (timeout !== '') body.timeout_secs = Number(timeout);
      // Header values may come back masked: send them only when the user changed them.
      if (!tool || headersChanged) body.headers = recordOf(headers);
      return tool
        ? unwrap(api.PATCH('/api/tools/{tool_id}', { params: { path: { tool_id: tool.id } }, body }))
        : unwrap(api.POST('/api/tools', { body: body as ToolCreate }));
    },
    onMutate: () => {
      setErrors({});
      setGeneral([]);
    },
    onSuccess: (saved) => {
      notifications.show({ message: `Tool ${saved.name} saved`, color: 'green' });
      void queryClient.invalidateQueries({ queryKey: ['tools'] });
      onClose();
    },
    onError: (err) => {
      if (err instanceof ApiError && err.status === 409) return setErrors({ name: err.detail });
      if (!(err instanceof ApiError) || err.status !== 422) return setGeneral([err.message]);
      const split = splitFieldErrors(err.detail, (f) => FIELDS.includes(f.split('.')[0]!));
      setErrors(Object.fromEntries(Object.entries(split.fields).map(([f, m]) => [f.split('.')[0]!, `${f}: ${m}`])));
      setGeneral(split.general);
    },
  });

  const setParam = (i: number, patch: Partial<ParamRow>) => setParams(params.map((p, j) => (j === i ? { ...p, ...patch } : p)));

  return (
    <Modal opened onClose={onClose} title={tool ? `Edit tool ${tool.name}` : 'New tool'} size="xl">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
        aria-label={tool ? `Edit tool ${tool.name}` : 'New tool'}
      >
        <Stack gap="sm">
          {general.length > 0 && (
            <Alert color="red" role="alert">
              {general.join('; ')}
            </Alert>
          )}
          <TextInput label="Name" description="snake_case function name the LLM sees; cannot be changed later" required disabled={!!tool} value={name} error={errors.name} onChange={(e) => setName(e.currentTarget.value)} />
          <Textarea label="Description" description="Tells the LLM when to call it" required autosize minRows={2} value={description} error={errors.description} onChange={(e) => setDescription(e.currentTarget.value)} />
          <Group align="flex-start" grow>
            <TextInput label="Webhook URL" required placeholder="https://…" value={url} error={errors.webhook_url} onChange={(e) => setUrl(e.currentTarget.value)} />
          </Group>
          <Group align="flex-end">
            <Stack gap={4}>
              <Text size="sm" fw={500} id="tool-method-label">
                Method
              </Text>
              <SegmentedControl aria-labelledby="tool-method-label" data={[...WEBHOOK_METHODS]} value={method} onChange={setMethod} />
            </Stack>
            <NumberInput label="Timeout (seconds)" placeholder="default" min={1} allowDecimal={false} w={170} value={timeout} error={errors.timeout_secs} onChange={setTimeoutSecs} />
          </Group>

          <Stack gap={6} role="group" aria-label="Parameters">
            <Text size="sm" fw={500}>
              Parameters
            </Text>
            {params.map((p, i) => (
              <Group key={i} gap="xs" wrap="nowrap" align="center">
                <TextInput aria-label={`Parameter ${i + 1} name`} placeholder="name" style={{ flex: 1 }} value={p.name} onChange={(e) => setParam(i, { name: e.currentTarget.value })} />
                <Select aria-label={`Parameter ${i + 1} type`} data={[...TOOL_PARAM_TYPES]} w={120} allowDeselect={false} value={p.type} onChange={(v) => setParam(i, { type: v ?? 'string' })} />
                <TextInput aria-label={`Parameter ${i + 1} description`} placeholder="description" style={{ flex: 2 }} value={p.description} onChange={(e) => setParam(i, { description: e.currentTarget.value })} />
                <Checkbox label="required" checked={p.required} onChange={(e) => setParam(i, { required: e.currentTarget.checked })} />
                <ActionIcon variant="subtle" color="red" aria-label={`Remove parameter ${i + 1}`} onClick={() => setParams(params.filter((_, j) => j !== i))}>
                  <IconTrash size={16} />
                </ActionIcon>
              </Group>
            ))}
            {errors.parameters && (
              <Text size="xs" c="red" role="alert">
                {errors.parameters}
              </Text>
            )}
            <Group>
              <Button variant="light" size="xs" leftSection={<IconPlus size={14} />} onClick={() => setParams([...params, { name: '', type: 'string', description: '', required: false, rest: {} }])}>
                Add parameter
              </Button>
            </Group>
          </Stack>

          <KeyValueEditor
            label="Headers"
            keyLabel="Header"
            valueLabel="Value"
            addLabel="Add header"
            rows={headers}
            error={errors.headers}
            onChange={(rows) => {
              setHeaders(rows);
              setHeadersChanged(true);
            }}
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={save.isPending}>
              Save tool
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
