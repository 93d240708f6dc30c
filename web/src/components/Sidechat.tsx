/**
 * The dashboard assistant (POST /api/sidechat): a stateless chat over the platform's data. Its
 * proposals change nothing until applied here, with the exact request the API returned.
 */
import { useState } from 'react';
import { Accordion, ActionIcon, Alert, Badge, Button, Code, Group, Paper, ScrollArea, Stack, Text, Textarea, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconSend, IconX } from '@tabler/icons-react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { SidechatMessage, SidechatReply } from '../api/types';
import { ApiErrorAlert } from './ApiErrorAlert';

type Proposal = SidechatReply['proposals'][number];
interface Turn {
  message: SidechatMessage;
  reply?: SidechatReply;
}

/** Sends a proposal's `apply` request: PATCH of an agent or of one of its flow nodes. */
function applyProposal(p: Proposal): Promise<unknown> {
  const node = /^\/api\/agents\/([^/]+)\/nodes\/([^/]+)$/.exec(p.apply.path);
  if (node) return unwrap(api.PATCH('/api/agents/{agent_id}/nodes/{node_key}', { params: { path: { agent_id: node[1]!, node_key: decodeURIComponent(node[2]!) } }, body: p.apply.body as never }));
  const agent = /^\/api\/agents\/([^/]+)$/.exec(p.apply.path);
  if (agent) return unwrap(api.PATCH('/api/agents/{agent_id}', { params: { path: { agent_id: agent[1]! } }, body: p.apply.body as never }));
  throw new Error(`Cannot apply a change to ${p.apply.path}`);
}

export function Sidechat({ agentId, onClose }: { agentId?: string; onClose(): void }) {
  const queryClient = useQueryClient();
  const [turns, setTurns] = useState<Turn[]>([]);
  const [text, setText] = useState('');
  const [applied, setApplied] = useState<Set<string>>(new Set());
  const ask = useMutation({
    mutationFn: (messages: SidechatMessage[]) => unwrap(api.POST('/api/sidechat', { body: { messages, ...(agentId ? { agent_id: agentId } : {}) } })),
    onSuccess: (reply) => setTurns((t) => [...t.slice(0, -1), { ...t[t.length - 1]!, reply }]),
  });
  const apply = useMutation({
    mutationFn: applyProposal,
    onSuccess: (_r, p) => {
      setApplied((s) => new Set(s).add(p.id));
      notifications.show({ message: `Applied to ${p.agent_name}`, color: 'green' });
      void queryClient.invalidateQueries({ queryKey: ['agents'] });
    },
  });

  const send = () => {
    if (!text.trim()) return;
    const history: SidechatMessage[] = turns.flatMap((t) => [t.message, ...(t.reply ? [{ role: 'assistant' as const, content: t.reply.reply }] : [])]);
    const message: SidechatMessage = { role: 'user', content: text.trim() };
    setTurns([...turns.filter((t) => t.reply), { message }]);
    setText('');
    ask.mutate([...history, message].slice(-50));
  };

  return (
    <Stack h="100%" gap="xs">
      <Group justify="space-between">
        <Title order={3} size="h5">
          Assistant
        </Title>
        <ActionIcon variant="subtle" onClick={onClose} aria-label="Close assistant">
          <IconX size={18} />
        </ActionIcon>
      </Group>
      <Text size="xs" c="dimmed">
        Ask about your agents and calls{agentId ? ' (it knows which agent you have open)' : ''}. Suggested changes are applied only when you apply them.
      </Text>
      <ScrollArea style={{ flex: 1 }} type="auto" aria-live="polite">
        <Stack gap="xs">
          {turns.map((turn, i) => (
            <Stack key={i} gap={4}>
              <Paper p="xs" bg="var(--mantine-color-indigo-0)" ml="lg">
                <Text size="sm">{turn.message.content}</Text>
              </Paper>
              {turn.reply && (
                <Paper p="xs" withBorder mr="lg">
                  <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
                    {turn.reply.reply}
                  </Text>
                  {turn.reply.tool_calls.length > 0 && (
                    <Accordion variant="filled" mt={4}>
                      <Accordion.Item value="lookups">
                        <Accordion.Control>
                          <Text size="xs">{turn.reply.tool_calls.length} lookups</Text>
                        </Accordion.Control>
                        <Accordion.Panel>
                          {turn.reply.tool_calls.map((c, j) => (
                            <Code key={j} block mb={2}>
                              {c.name} {JSON.stringify(c.arguments)}
                            </Code>
                          ))}
                        </Accordion.Panel>
                      </Accordion.Item>
                    </Accordion>
                  )}
                  {turn.reply.proposals.map((p) => (
                    <Alert key={p.id} mt="xs" color="grape" p="xs" title={`Proposed change: ${p.agent_name} ${p.target}${p.node_key ? ` (${p.node_key})` : ''}`}>
                      <Text size="xs" mb={4}>
                        {p.rationale}
                      </Text>
                      <Code block mb={4}>
                        {typeof p.proposed_value === 'string' ? p.proposed_value : JSON.stringify(p.proposed_value, null, 2)}
                      </Code>
                      {applied.has(p.id) ? (
                        <Badge color="green">applied</Badge>
                      ) : (
                        <Button size="xs" loading={apply.isPending && apply.variables?.id === p.id} onClick={() => apply.mutate(p)}>
                          Apply
                        </Button>
                      )}
                    </Alert>
                  ))}
                </Paper>
              )}
            </Stack>
          ))}
          {ask.isPending && (
            <Text size="sm" c="dimmed">
              Thinking…
            </Text>
          )}
          {ask.error && <ApiErrorAlert error={ask.error} title="The assistant could not answer" />}
          {apply.error && <ApiErrorAlert error={apply.error} title="Not applied" />}
        </Stack>
      </ScrollArea>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          send();
        }}
      >
        <Group gap="xs" align="flex-end" wrap="nowrap">
          <Textarea
            aria-label="Message to the assistant"
            placeholder="Why did the last call fail?"
            autosize
            minRows={1}
            maxRows={5}
            style={{ flex: 1 }}
            value={text}
            onChange={(e) => setText(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) {
                e.preventDefault();
                send();
              }
            }}
          />
          <ActionIcon type="submit" size="lg" aria-label="Send to assistant" loading={ask.isPending}>
            <IconSend size={18} />
          </ActionIcon>
        </Group>
      </form>
    </Stack>
  );
}
