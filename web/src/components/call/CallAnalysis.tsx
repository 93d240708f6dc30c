/** A call's post-call analysis on its page: summary, fields, verdict, and a re-run. */
import { Alert, Badge, Button, Group, Loader, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { IconRefresh } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { CallDetail } from '../../api/types';
import { formatTime, isLive } from '../../lib/format';
import { ApiErrorAlert } from '../ApiErrorAlert';

const STATUS_COLOR: Record<string, string> = { pending: 'blue', done: 'green', failed: 'red', skipped: 'gray' };

/**
 * The fields in the order the agent defines them (the stored result keeps no order); fields the
 * agent no longer has come last.
 */
function ordered(fields: Record<string, unknown>, agentOrder: string[]): Array<[string, unknown]> {
  const rank = (name: string) => {
    const i = agentOrder.indexOf(name);
    return i < 0 ? agentOrder.length : i;
  };
  return Object.entries(fields).sort(([a], [b]) => rank(a) - rank(b));
}

const shown = (v: unknown) => (v === null || v === undefined ? '—' : typeof v === 'boolean' ? (v ? 'yes' : 'no') : String(v));

export function CallAnalysisPanel({ call }: { call: CallDetail }) {
  const queryClient = useQueryClient();
  const agent = useQuery({
    queryKey: ['agents', call.agent_id],
    queryFn: () => unwrap(api.GET('/api/agents/{agent_id}', { params: { path: { agent_id: call.agent_id! } } })),
    enabled: call.agent_id !== null && call.analysis !== null,
  });
  const agentOrder = Object.keys(agent.data?.analysis?.fields ?? {});
  const rerun = useMutation({
    mutationFn: () => unwrap(api.POST('/api/calls/{call_id}/analyze', { params: { path: { call_id: call.id } } })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['calls', call.id] }),
  });
  const { analysis, analysis_status: status } = call;
  const pending = status === 'pending' || rerun.isPending;

  return (
    <Paper withBorder p="md" role="region" aria-label="Call analysis">
      <Group justify="space-between" mb="sm">
        <Group gap="sm">
          <Title order={3} size="h4">
            Analysis
          </Title>
          {status && (
            <Badge color={STATUS_COLOR[status]} variant="light" aria-label={`Analysis ${status}`}>
              {status}
            </Badge>
          )}
          {pending && <Loader size="xs" aria-label="Analysing" />}
        </Group>
        {!isLive(call.status) && (
          <Button size="xs" variant="light" leftSection={<IconRefresh size={14} />} disabled={pending} onClick={() => rerun.mutate()}>
            {status ? 'Re-run analysis' : 'Run analysis'}
          </Button>
        )}
      </Group>
      {rerun.error && <ApiErrorAlert error={rerun.error} />}
      {!status && <Text c="dimmed">Not analysed: the agent had no analysis setting when the call ran.</Text>}
      {status === 'pending' && !analysis && <Text c="dimmed">The call is being analysed…</Text>}
      {analysis && (
        <Stack gap="sm">
          {analysis.success !== null && (
            <Group gap="xs">
              <Badge color={analysis.success ? 'green' : 'red'} size="lg" aria-label={analysis.success ? 'Call successful' : 'Call not successful'}>
                {analysis.success ? 'Successful' : 'Not successful'}
              </Badge>
              <Text size="sm">{analysis.success_reason}</Text>
            </Group>
          )}
          {analysis.summary && <Text data-testid="analysis-summary">{analysis.summary}</Text>}
          {analysis.error && (
            <Alert color="red" p="xs" title="Analysis failed">
              {analysis.error}
            </Alert>
          )}
          {analysis.skipped_reason && <Text c="dimmed">Skipped: {analysis.skipped_reason}.</Text>}
          {Object.keys(analysis.fields).length > 0 && (
            <Table aria-label="Analysis fields" withRowBorders={false} verticalSpacing={4}>
              <Table.Tbody>
                {ordered(analysis.fields, agentOrder).map(([name, value]) => (
                  <Table.Tr key={name}>
                    <Table.Th w="40%">{name}</Table.Th>
                    <Table.Td>{shown(value)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
          <Text size="xs" c="dimmed">
            {analysis.model ?? 'no model'} · {formatTime(analysis.completed_at)} · {call.analysis_prompt_tokens} in / {call.analysis_completion_tokens} out tokens
          </Text>
        </Stack>
      )}
    </Paper>
  );
}
