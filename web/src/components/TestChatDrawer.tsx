/**
 * A text test call (POST /api/calls/test): the same call workflow as a phone call, typed instead
 * of spoken. The call's page shows its transcript and events live while you chat.
 */
import { useEffect, useState } from 'react';
import { Alert, Anchor, Badge, Button, Drawer, Group, Paper, ScrollArea, Select, Stack, Text, TextInput } from '@mantine/core';
import { IconPhoneOff, IconSend } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { ApiErrorAlert } from './ApiErrorAlert';
import { KeyValueEditor, recordOf, type KeyValueRow } from './KeyValueEditor';

interface Line {
  role: 'agent' | 'you';
  text: string;
}

export function TestChatDrawer({ opened, agentName, onClose }: { opened: boolean; agentName?: string; onClose(): void }) {
  const queryClient = useQueryClient();
  const agents = useQuery({ queryKey: ['agents'], queryFn: () => unwrap(api.GET('/api/agents')), enabled: opened });
  const [agent, setAgent] = useState<string | null>(agentName ?? null);
  const [params, setParams] = useState<KeyValueRow[]>([]);
  const [callId, setCallId] = useState<string | null>(null);
  const [lines, setLines] = useState<Line[]>([]);
  const [status, setStatus] = useState<string>('in_progress');
  const [nodeKey, setNodeKey] = useState<string | null>(null);
  const [text, setText] = useState('');

  useEffect(() => {
    if (opened && !callId) setAgent(agentName ?? null);
  }, [opened, agentName, callId]);

  const reset = () => {
    setCallId(null);
    setLines([]);
    setStatus('in_progress');
    setNodeKey(null);
  };
  const start = useMutation({
    mutationFn: () => unwrap(api.POST('/api/calls/test', { body: { agent_name: agent!, custom_parameters: recordOf(params) } })),
    onSuccess: (r) => {
      setCallId(r.call_id);
      setLines(r.greeting ? [{ role: 'agent', text: r.greeting }] : []);
      void queryClient.invalidateQueries({ queryKey: ['calls'] });
    },
  });
  const say = useMutation({
    mutationFn: (message: string) => unwrap(api.POST('/api/calls/{call_id}/test/messages', { params: { path: { call_id: callId! } }, body: { text: message } })),
    onMutate: (message) => setLines((l) => [...l, { role: 'you', text: message }]),
    onSuccess: (r) => {
      setLines((l) => [...l, ...r.replies.map((t) => ({ role: 'agent' as const, text: t }))]);
      setStatus(r.status);
      setNodeKey(r.node_key);
    },
  });
  const end = useMutation({
    mutationFn: () => unwrap(api.POST('/api/calls/end', { body: { call_id: callId! } })),
    onSuccess: (r) => {
      setStatus(r.status);
      void queryClient.invalidateQueries({ queryKey: ['calls'] });
    },
  });
  const live = status === 'in_progress';

  return (
    <Drawer opened={opened} onClose={onClose} position="right" size="md" title="Text test call">
      {!callId ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            start.mutate();
          }}
        >
          <Stack>
            {start.error && <ApiErrorAlert error={start.error} title="Could not start" />}
            <Select label="Agent" required searchable data={(agents.data ?? []).map((a) => a.name)} value={agent} onChange={setAgent} />
            <KeyValueEditor label="Call parameters" keyLabel="Parameter" addLabel="Add parameter" rows={params} onChange={setParams} />
            <Button type="submit" loading={start.isPending} disabled={!agent}>
              Start test call
            </Button>
          </Stack>
        </form>
      ) : (
        <Stack gap="sm" h="calc(100vh - 90px)">
          <Group justify="space-between">
            <Group gap="xs">
              <Badge color={live ? 'blue' : 'green'} variant="light">
                {status}
              </Badge>
              {nodeKey && <Badge variant="outline">node {nodeKey}</Badge>}
            </Group>
            <Anchor component={Link} to={`/calls/${callId}`} size="sm" onClick={onClose}>
              Open call page
            </Anchor>
          </Group>
          <ScrollArea style={{ flex: 1 }} type="auto">
            <Stack gap={6} role="log" aria-label="Test call conversation" aria-live="polite">
              {lines.map((l, i) => (
                <Paper key={i} p="xs" withBorder={l.role === 'agent'} bg={l.role === 'you' ? 'var(--mantine-color-indigo-0)' : undefined} ml={l.role === 'you' ? 'xl' : 0} mr={l.role === 'agent' ? 'xl' : 0}>
                  <Text size="xs" fw={700} c={l.role === 'agent' ? 'indigo' : 'teal'}>
                    {l.role === 'agent' ? 'Agent' : 'You'}
                  </Text>
                  <Text size="sm">{l.text}</Text>
                </Paper>
              ))}
              {say.isPending && (
                <Text size="sm" c="dimmed">
                  The agent is answering…
                </Text>
              )}
            </Stack>
          </ScrollArea>
          {say.error && <ApiErrorAlert error={say.error} />}
          {!live && <Alert color="green">The call has ended ({status}).</Alert>}
          <form
            onSubmit={(e) => {
              e.preventDefault();
              if (!text.trim()) return;
              say.mutate(text.trim());
              setText('');
            }}
          >
            <Group gap="xs" wrap="nowrap">
              <TextInput aria-label="Your message" placeholder="Say something…" style={{ flex: 1 }} disabled={!live} value={text} onChange={(e) => setText(e.currentTarget.value)} />
              <Button type="submit" disabled={!live || say.isPending} leftSection={<IconSend size={16} />}>
                Send
              </Button>
            </Group>
          </form>
          <Group justify="space-between">
            <Button variant="subtle" size="xs" onClick={reset}>
              New test call
            </Button>
            {live && (
              <Button color="red" variant="light" size="xs" leftSection={<IconPhoneOff size={14} />} loading={end.isPending} onClick={() => end.mutate()}>
                End call
              </Button>
            )}
          </Group>
        </Stack>
      )}
    </Drawer>
  );
}
