/** Edits one flow node: key, marks, messages (placeholders highlighted), functions, tools, pre-actions. */
import { useState } from 'react';
import { ActionIcon, Alert, Button, Checkbox, Divider, Fieldset, Group, JsonInput, MultiSelect, Select, Stack, Switch, Text, Textarea, TextInput, Title } from '@mantine/core';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { BUILTIN_TOOLS, FUNCTION_PARAM_TYPES, MESSAGE_ROLES } from '../../api/enums';
import type { FlowFunction, FlowNode, FlowNodeInput, Tool } from '../../api/types';
import { KnowledgeBasePicker, KnowledgeModePicker } from '../knowledge/KnowledgePickers';
import { HighlightedMessage } from '../Variables';
import { appendPreAction, TransferPreActionPicker } from './TransferPreActionPicker';

type Message = FlowNode['role_messages'][number];
type FunctionRow = Omit<FlowFunction, 'properties' | 'required'> & { params: Array<{ name: string; type: string; description: string; required: boolean }> };

export type NodePatch = Partial<FlowNodeInput>;

const toRows = (fns: FlowNode['functions']): FunctionRow[] =>
  fns.map((fn) => ({
    name: fn.name,
    description: fn.description,
    next_node_key: fn.next_node_key ?? null,
    params: Object.entries(fn.properties ?? {}).map(([name, p]) => ({ name, type: p.type, description: p.description ?? '', required: (fn.required ?? []).includes(name) })),
  }));

const toFunctions = (rows: FunctionRow[]): FlowFunction[] =>
  rows.map((r) => ({
    name: r.name,
    description: r.description,
    next_node_key: r.next_node_key || null,
    properties: Object.fromEntries(r.params.filter((p) => p.name).map((p) => [p.name, { type: p.type as never, ...(p.description ? { description: p.description } : {}) }])),
    required: r.params.filter((p) => p.name && p.required).map((p) => p.name),
  }));

function MessagesEditor({ label, messages, onChange, errorOf }: { label: string; messages: Message[]; onChange(m: Message[]): void; errorOf(path: string): string | undefined }) {
  const key = label.toLowerCase().replace(' ', '_');
  return (
    <Fieldset legend={label} p="xs">
      <Stack gap="xs">
        {messages.map((m, i) => (
          <div key={i}>
            <Group gap="xs" align="flex-start" wrap="nowrap">
              <Select aria-label={`${label} ${i + 1} role`} w={110} allowDeselect={false} data={[...MESSAGE_ROLES]} value={m.role ?? 'system'} onChange={(role) => onChange(messages.map((x, j) => (j === i ? { ...x, role: role as Message['role'] } : x)))} />
              <Textarea
                aria-label={`${label} ${i + 1}`}
                style={{ flex: 1 }}
                autosize
                minRows={2}
                value={m.content}
                error={errorOf(`${key}.${i}.content`)}
                onChange={(e) => {
                  const content = e.currentTarget.value;
                  onChange(messages.map((x, j) => (j === i ? { ...x, content } : x)));
                }}
              />
              <ActionIcon variant="subtle" color="red" aria-label={`Remove ${label.toLowerCase()} ${i + 1}`} onClick={() => onChange(messages.filter((_, j) => j !== i))}>
                <IconTrash size={16} />
              </ActionIcon>
            </Group>
            <HighlightedMessage text={m.content} />
          </div>
        ))}
        <Group>
          <Button size="xs" variant="light" leftSection={<IconPlus size={14} />} onClick={() => onChange([...messages, { role: 'system', content: '' }])}>
            Add {label.toLowerCase().replace(/s$/, '')}
          </Button>
        </Group>
      </Stack>
    </Fieldset>
  );
}

export function NodeEditor(props: { node: FlowNode; nodeKeys: string[]; tools: Tool[]; destinations: string[]; errors: Record<string, string>; generalErrors: string[]; saving: boolean; onSave(patch: NodePatch): void; onDelete(): void }) {
  const { node, errors } = props;
  const [nodeKey, setNodeKey] = useState(node.node_key);
  const [isInitial, setIsInitial] = useState(node.is_initial);
  const [isTerminal, setIsTerminal] = useState(node.is_terminal);
  const [roleMessages, setRoleMessages] = useState<Message[]>(node.role_messages);
  const [taskMessages, setTaskMessages] = useState<Message[]>(node.task_messages);
  const [functions, setFunctions] = useState<FunctionRow[]>(toRows(node.functions));
  const [toolIds, setToolIds] = useState<string[]>(node.tool_ids);
  const [mcpTools, setMcpTools] = useState<string[]>(node.mcp_tools ?? []);
  const mcpServers = useQuery({ queryKey: ['mcp-servers'], queryFn: () => unwrap(api.GET('/api/mcp-servers')) });
  const mcpOptions = [...new Set([...(mcpServers.data ?? []).flatMap((s) => s.tools.filter((t) => t.allowed).map((t) => t.ref)), ...mcpTools])];
  const [knowledgeBaseIds, setKnowledgeBaseIds] = useState<string[]>((node.knowledge_base_ids as string[] | undefined) ?? []);
  const [knowledgeMode, setKnowledgeMode] = useState<string>(node.knowledge_mode ?? 'auto');
  const [builtins, setBuiltins] = useState<string[]>(node.builtin_tools);
  const [preActions, setPreActions] = useState(JSON.stringify(node.pre_actions, null, 2));
  const [preActionsError, setPreActionsError] = useState<string | null>(null);
  const errorOf = (path: string) => errors[path];
  const setFn = (i: number, patch: Partial<FunctionRow>) => setFunctions(functions.map((f, j) => (j === i ? { ...f, ...patch } : f)));

  const save = () => {
    let pre: FlowNodeInput['pre_actions'];
    try {
      pre = JSON.parse(preActions || '[]');
      if (!Array.isArray(pre)) throw new Error();
      setPreActionsError(null);
    } catch {
      setPreActionsError('must be a JSON list');
      return;
    }
    props.onSave({
      ...(nodeKey !== node.node_key ? { node_key: nodeKey } : {}),
      is_initial: isInitial,
      is_terminal: isTerminal,
      role_messages: roleMessages,
      task_messages: taskMessages,
      functions: toFunctions(functions),
      tool_ids: toolIds,
      mcp_tools: mcpTools,
      knowledge_base_ids: knowledgeBaseIds,
      knowledge_mode: knowledgeMode as FlowNodeInput['knowledge_mode'],
      builtin_tools: builtins as FlowNodeInput['builtin_tools'],
      pre_actions: pre,
    });
  };

  return (
    <form
      aria-label={`Node ${node.node_key}`}
      onSubmit={(e) => {
        e.preventDefault();
        save();
      }}
    >
      <Stack gap="sm">
        <Group justify="space-between">
          <Title order={3} size="h4">
            Node {node.node_key}
          </Title>
          <Group gap="xs">
            <Button size="xs" variant="subtle" color="red" onClick={props.onDelete} leftSection={<IconTrash size={14} />}>
              Delete node
            </Button>
            <Button size="xs" type="submit" loading={props.saving}>
              Save node
            </Button>
          </Group>
        </Group>
        {props.generalErrors.length > 0 && (
          <Alert color="red" role="alert" p="xs">
            {props.generalErrors.map((e) => (
              <Text key={e} size="sm">
                {e}
              </Text>
            ))}
          </Alert>
        )}
        <TextInput label="Node key" value={nodeKey} error={errorOf('node_key')} onChange={(e) => setNodeKey(e.currentTarget.value)} />
        <Group>
          <Switch label="Initial (the call starts here)" checked={isInitial} onChange={(e) => setIsInitial(e.currentTarget.checked)} />
          <Switch label="Terminal" checked={isTerminal} onChange={(e) => setIsTerminal(e.currentTarget.checked)} />
        </Group>
        <MessagesEditor label="Role messages" messages={roleMessages} onChange={setRoleMessages} errorOf={errorOf} />
        <MessagesEditor label="Task messages" messages={taskMessages} onChange={setTaskMessages} errorOf={errorOf} />

        <Fieldset legend="Functions" p="xs">
          <Stack gap="sm">
            {functions.map((fn, i) => (
              <Stack key={i} gap={6} role="group" aria-label={`Function ${i + 1}`}>
                {i > 0 && <Divider />}
                <Group gap="xs" align="flex-start" wrap="nowrap">
                  <TextInput label="Name" style={{ flex: 1 }} value={fn.name} error={errorOf(`functions.${i}.name`)} onChange={(e) => setFn(i, { name: e.currentTarget.value })} />
                  <Select
                    label="Then go to"
                    placeholder="stay in this node"
                    clearable
                    style={{ flex: 1 }}
                    data={props.nodeKeys}
                    value={fn.next_node_key ?? null}
                    error={errorOf(`functions.${i}.next_node_key`)}
                    onChange={(v) => setFn(i, { next_node_key: v })}
                  />
                  <ActionIcon mt={24} variant="subtle" color="red" aria-label={`Remove function ${fn.name || i + 1}`} onClick={() => setFunctions(functions.filter((_, j) => j !== i))}>
                    <IconTrash size={16} />
                  </ActionIcon>
                </Group>
                <Textarea label="When the LLM should call it" autosize minRows={1} value={fn.description} error={errorOf(`functions.${i}.description`)} onChange={(e) => setFn(i, { description: e.currentTarget.value })} />
                <HighlightedMessage text={fn.description} />
                {fn.params.map((p, k) => (
                  <Group key={k} gap={4} wrap="nowrap">
                    <TextInput aria-label={`Function ${i + 1} parameter ${k + 1} name`} placeholder="parameter" style={{ flex: 1 }} value={p.name} onChange={(e) => setFn(i, { params: fn.params.map((x, m) => (m === k ? { ...x, name: e.currentTarget.value } : x)) })} />
                    <Select aria-label={`Function ${i + 1} parameter ${k + 1} type`} w={100} allowDeselect={false} data={[...FUNCTION_PARAM_TYPES]} value={p.type} onChange={(v) => setFn(i, { params: fn.params.map((x, m) => (m === k ? { ...x, type: v ?? 'string' } : x)) })} />
                    <Checkbox label="req." checked={p.required} onChange={(e) => setFn(i, { params: fn.params.map((x, m) => (m === k ? { ...x, required: e.currentTarget.checked } : x)) })} />
                    <ActionIcon variant="subtle" color="red" aria-label={`Remove parameter ${p.name || k + 1}`} onClick={() => setFn(i, { params: fn.params.filter((_, m) => m !== k) })}>
                      <IconTrash size={14} />
                    </ActionIcon>
                  </Group>
                ))}
                <Group>
                  <Button size="compact-xs" variant="subtle" leftSection={<IconPlus size={12} />} onClick={() => setFn(i, { params: [...fn.params, { name: '', type: 'string', description: '', required: false }] })}>
                    Add parameter
                  </Button>
                </Group>
              </Stack>
            ))}
            <Group>
              <Button size="xs" variant="light" leftSection={<IconPlus size={14} />} onClick={() => setFunctions([...functions, { name: '', description: '', next_node_key: null, params: [] }])}>
                Add function
              </Button>
            </Group>
          </Stack>
        </Fieldset>

        <MultiSelect label="Webhook tools" data={props.tools.map((t) => ({ value: t.id, label: t.name }))} value={toolIds} onChange={setToolIds} searchable clearable error={errorOf('tool_ids')} />
        <MultiSelect label="MCP tools" description="server/tool, from the MCP servers page" data={mcpOptions} value={mcpTools} onChange={setMcpTools} searchable clearable error={errorOf('mcp_tools')} />
        <KnowledgeBasePicker
          label="Knowledge bases"
          description="This node's own; empty: the agent's"
          value={knowledgeBaseIds}
          onChange={setKnowledgeBaseIds}
          error={errorOf('knowledge_base_ids')}
        />
        {knowledgeBaseIds.length > 0 && <KnowledgeModePicker label="Knowledge mode of this node" value={knowledgeMode} onChange={setKnowledgeMode} />}
        <MultiSelect
          label="Builtin tools"
          description={props.destinations.length ? undefined : 'transfer_call needs transfer destinations in the agent form'}
          data={[...BUILTIN_TOOLS]}
          value={builtins}
          onChange={setBuiltins}
          clearable
          error={errorOf('builtin_tools')}
        />
        <JsonInput
          label="Pre-actions"
          description='Run on entry, in order: {"type":"say","text":"…"}, {"type":"call_tool","tool_id":"…","args":{}}, {"type":"end_call"}, {"type":"transfer_call","destination":"…"}'
          autosize
          minRows={2}
          value={preActions}
          onChange={setPreActions}
          error={preActionsError ?? errorOf('pre_actions')}
        />
        <TransferPreActionPicker destinations={props.destinations} onPick={(destination) => setPreActions(appendPreAction(preActions, { type: 'transfer_call', destination }))} />
      </Stack>
    </form>
  );
}
