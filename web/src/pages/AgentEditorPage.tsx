import { useEffect, useRef, useState } from 'react';
import { Alert, Badge, Button, Code, CopyButton, Group, Menu, Stack, Text } from '@mantine/core';
import { useForm } from '@mantine/form';
import { notifications } from '@mantine/notifications';
import { IconChecklist, IconChevronDown, IconCode, IconDeviceFloppy, IconDownload, IconMessage, IconMicrophone, IconPhoneOutgoing, IconRefresh, IconTrash, IconVectorTriangle } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useLocation, useNavigate, useParams } from 'react-router';
import { api, ApiError, unwrap } from '../api/client';
import type { Agent, AgentCreate } from '../api/types';
import { AgentForm } from '../components/AgentForm';
import { ApiErrorAlert, QueryState } from '../components/ApiErrorAlert';
import { ConfirmModal } from '../components/ConfirmModal';
import { PageHeader } from '../components/PageHeader';
import { TalkDrawer } from '../components/TalkDrawer';
import { WidgetKeysModal } from '../components/WidgetKeysModal';
import { FormInputError, formPathOf, toFormValues, toRequestBody, warningsByField, type AgentFormValues } from '../lib/agent-form';
import { splitFieldErrors } from '../lib/field-errors';
import { downloadJson } from '../lib/format';
import { usePanels } from '../panels';

type WithWarnings = { warnings?: string[] };

export function AgentEditorPage() {
  const { agentId } = useParams();
  const location = useLocation();
  const draft = (location.state as { draft?: Partial<AgentCreate> } | null)?.draft;
  const agent = useQuery({
    queryKey: ['agents', agentId],
    queryFn: () => unwrap(api.GET('/api/agents/{agent_id}', { params: { path: { agent_id: agentId! } } })),
    enabled: agentId !== undefined,
  });
  const tools = useQuery({ queryKey: ['tools'], queryFn: () => unwrap(api.GET('/api/tools')) });
  if (agentId === undefined) return <Editor key={draft ? 'draft' : 'new'} tools={tools.data ?? []} draft={draft} />;
  return <QueryState query={agent}>{(a) => <Editor key={a.id} agent={a} tools={tools.data ?? []} />}</QueryState>;
}

function Editor({ agent, draft, tools }: { agent?: Agent; draft?: Partial<AgentCreate>; tools: NonNullable<Parameters<typeof AgentForm>[0]['tools']> }) {
  const isNew = agent === undefined;
  const navigate = useNavigate();
  const location = useLocation();
  const queryClient = useQueryClient();
  const panels = usePanels();
  const initial = useRef<AgentFormValues>(toFormValues(agent));
  const form = useForm<AgentFormValues>({ initialValues: draft ? toFormValues(draft) : initial.current });
  const [generalErrors, setGeneralErrors] = useState<string[]>([]);
  const [warnings, setWarnings] = useState<string[]>((agent as WithWarnings | undefined)?.warnings ?? []);
  const [secret, setSecret] = useState<string | null>((location.state as { webhookSecret?: string } | null)?.webhookSecret ?? null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [talking, setTalking] = useState(false);
  const [widgetKeys, setWidgetKeys] = useState(false);
  const [actionError, setActionError] = useState<unknown>(null);

  useEffect(() => {
    panels.setAssistantAgent(agent?.id);
    return () => panels.setAssistantAgent(undefined);
  }, [agent?.id, panels]);

  const showApiError = (err: unknown) => {
    if (err instanceof FormInputError) return form.setFieldError(err.field, err.message);
    if (!(err instanceof ApiError) || (err.status !== 422 && err.status !== 409)) return setGeneralErrors([err instanceof Error ? err.message : String(err)]);
    if (err.status === 409) return form.setFieldError('name', err.detail);
    const split = splitFieldErrors(err.detail, (f) => formPathOf(f) !== undefined);
    const errors: Record<string, string> = {};
    for (const [field, message] of Object.entries(split.fields)) errors[formPathOf(field)!] = `${field}: ${message}`;
    form.setErrors(errors);
    setGeneralErrors(split.general);
  };

  const save = useMutation({
    mutationFn: async () => {
      const body = toRequestBody(form.values, initial.current, isNew);
      if (isNew) return unwrap(api.POST('/api/agents', { body: body as AgentCreate }));
      if (!Object.keys(body).length) return null;
      return unwrap(api.PATCH('/api/agents/{agent_id}', { params: { path: { agent_id: agent.id } }, body }));
    },
    onMutate: () => {
      form.clearErrors();
      setGeneralErrors([]);
    },
    onSuccess: (saved) => {
      if (!saved) return notifications.show({ message: 'Nothing to save' });
      setWarnings((saved as WithWarnings).warnings ?? []);
      void queryClient.invalidateQueries({ queryKey: ['agents'] });
      notifications.show({ message: `Agent ${saved.name} saved`, color: 'green' });
      if (isNew) {
        navigate(`/agents/${saved.id}`, { replace: true, state: { webhookSecret: (saved as { webhook_secret?: string }).webhook_secret } });
      } else {
        queryClient.setQueryData(['agents', saved.id], saved);
        initial.current = toFormValues(saved);
        form.setValues(initial.current);
        form.resetDirty(initial.current);
      }
    },
    onError: showApiError,
  });

  const rotate = useMutation({
    mutationFn: () => unwrap(api.POST('/api/agents/{agent_id}/webhook-secret', { params: { path: { agent_id: agent!.id } } })),
    onSuccess: (r) => setSecret(r.webhook_secret),
    onError: setActionError,
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/agents/{agent_id}', { params: { path: { agent_id: agent!.id } } })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['agents'] });
      notifications.show({ message: `Agent ${agent!.name} deleted`, color: 'green' });
      navigate('/agents');
    },
    onError: (err) => {
      setConfirmDelete(false);
      setActionError(err);
    },
  });
  const exportBundle = async () => {
    try {
      downloadJson(`${agent!.name}.agent.json`, await unwrap(api.GET('/api/agents/{agent_id}/export', { params: { path: { agent_id: agent!.id } } })));
    } catch (err) {
      setActionError(err);
    }
  };

  const { byField, general } = warningsByField(warnings);
  return (
    <form
      onSubmit={form.onSubmit(() => save.mutate())}
      aria-label={isNew ? 'New agent' : `Agent ${agent.name}`}
    >
      <PageHeader
        title={
          <Group gap="xs">
            {isNew ? (draft ? 'Review generated agent' : 'New agent') : agent.name}
            {!isNew && <Badge variant="light">v{agent.version}</Badge>}
            {!isNew && (agent.flow_nodes_count > 0 ? <Badge color="grape" variant="light">flow</Badge> : <Badge variant="light">freeform</Badge>)}
          </Group>
        }
      >
        {!isNew && (
          <>
            <Button variant="default" component={Link} to={`/agents/${agent.id}/flow`} leftSection={<IconVectorTriangle size={16} />}>
              Flow
            </Button>
            <Button variant="default" component={Link} to={`/agents/${agent.id}/tests`} leftSection={<IconChecklist size={16} />}>
              Tests
            </Button>
            <Button variant="default" leftSection={<IconMessage size={16} />} onClick={() => panels.openTestChat(agent.name)}>
              Test chat
            </Button>
            <Button leftSection={<IconMicrophone size={16} />} onClick={() => setTalking(true)}>
              Talk
            </Button>
            <Menu position="bottom-end">
              <Menu.Target>
                <Button variant="default" rightSection={<IconChevronDown size={14} />}>
                  More
                </Button>
              </Menu.Target>
              <Menu.Dropdown>
                <Menu.Item leftSection={<IconPhoneOutgoing size={16} />} onClick={() => panels.openOutboundCall(agent.name)}>
                  Place a call
                </Menu.Item>
                <Menu.Item leftSection={<IconCode size={16} />} onClick={() => setWidgetKeys(true)}>
                  Web widget
                </Menu.Item>
                <Menu.Item leftSection={<IconDownload size={16} />} onClick={() => void exportBundle()}>
                  Export bundle
                </Menu.Item>
                <Menu.Item leftSection={<IconRefresh size={16} />} onClick={() => rotate.mutate()}>
                  New webhook secret
                </Menu.Item>
                <Menu.Item leftSection={<IconTrash size={16} />} color="red" onClick={() => setConfirmDelete(true)}>
                  Delete
                </Menu.Item>
              </Menu.Dropdown>
            </Menu>
          </>
        )}
        <Button type="submit" loading={save.isPending} leftSection={<IconDeviceFloppy size={16} />}>
          {isNew ? 'Create agent' : 'Save'}
        </Button>
      </PageHeader>

      <Stack gap="sm" mb="md">
        {secret && (
          <Alert color="blue" title="Webhook signing secret (shown once)" withCloseButton closeButtonLabel="Dismiss the secret" onClose={() => setSecret(null)}>
            <Group gap="xs">
              <Code>{secret}</Code>
              <CopyButton value={secret}>{({ copied, copy }) => <Button size="xs" variant="light" onClick={copy}>{copied ? 'Copied' : 'Copy'}</Button>}</CopyButton>
            </Group>
          </Alert>
        )}
        {general.length > 0 && (
          <Alert color="yellow" title="Warnings" role="status">
            {general.map((w) => (
              <Text key={w} size="sm">
                {w}
              </Text>
            ))}
          </Alert>
        )}
        {generalErrors.length > 0 && (
          <Alert color="red" title="Not saved" role="alert">
            {generalErrors.map((e) => (
              <Text key={e} size="sm">
                {e}
              </Text>
            ))}
          </Alert>
        )}
        {actionError !== null && <ApiErrorAlert error={actionError} />}
      </Stack>

      <AgentForm form={form} tools={tools} warnings={byField} isNew={isNew} />

      {!isNew && <TalkDrawer opened={talking} agentName={agent.name} onClose={() => setTalking(false)} />}
      {!isNew && <WidgetKeysModal opened={widgetKeys} agentId={agent.id} agentName={agent.name} onClose={() => setWidgetKeys(false)} />}
      {!isNew && (
        <ConfirmModal opened={confirmDelete} title="Delete agent" confirmLabel="Delete" danger busy={remove.isPending} onClose={() => setConfirmDelete(false)} onConfirm={() => remove.mutate()}>
          Delete <b>{agent.name}</b> and its flow? Its calls are kept.
        </ConfirmModal>
      )}
    </form>
  );
}
