/**
 * A test run's results (docs/agent-tests.md): live progress, pass rates per test and version, and
 * for each attempt its transcript with the failed expectations and verdicts highlighted and, for
 * replays, the turn-by-turn diff with the recorded call.
 */
import { useState } from 'react';
import { Accordion, Anchor, Badge, Group, List, Paper, Progress, Stack, Table, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import type { TestAttempt, TestRun, TestRunTest } from '../../api/types';

const percent = (rate: number | null | undefined) => (rate === null || rate === undefined ? '—' : `${Math.round(rate * 100)}%`);

function Verdict({ passed }: { passed: boolean | null }) {
  if (passed === null) return <Badge variant="light" color="gray">running</Badge>;
  return passed ? <Badge color="green">pass</Badge> : <Badge color="red">fail</Badge>;
}

export function RunResults({ run }: { run: TestRun }) {
  const [open, setOpen] = useState<string | null>(null);
  const { total, done } = run.progress;
  return (
    <Stack gap="md" aria-label="Test run results">
      <Group justify="space-between">
        <Title order={3} size="h4">
          Run of v{run.agent_version}
          {run.compare_version !== null && ` compared with v${run.compare_version}`}
        </Title>
        <Group gap="xs">
          <Badge variant="light" color={run.status === 'running' ? 'blue' : run.passed ? 'green' : 'red'} aria-label={`Run ${run.status}`}>
            {run.status === 'running' ? 'running' : run.passed ? 'passed' : run.status === 'completed' ? 'failed' : run.status}
          </Badge>
        </Group>
      </Group>
      <div>
        <Progress value={total ? (done / total) * 100 : 0} animated={run.status === 'running'} aria-label="Run progress" />
        <Text size="sm" c="dimmed" mt={4}>
          {done} of {total} conversations done · {run.progress.passed} passed · {run.progress.failed} failed
        </Text>
      </div>
      {run.unmocked_tools.length > 0 && (
        <Text size="sm" c="orange" role="status">
          Tools called without a mocked result: {run.unmocked_tools.join(', ')}
        </Text>
      )}
      <Table aria-label="Test results" highlightOnHover>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Test</Table.Th>
            <Table.Th>Kind</Table.Th>
            {run.tests[0]?.results.map((r) => <Table.Th key={r.version}>v{r.version}</Table.Th>)}
            <Table.Th>Threshold</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {run.tests.map((t) => (
            <Table.Tr key={t.test_id} onClick={() => setOpen(open === t.test_id ? null : t.test_id)} style={{ cursor: 'pointer' }}>
              <Table.Td>{t.name}</Table.Td>
              <Table.Td>{t.kind}</Table.Td>
              {t.results.map((r) => (
                <Table.Td key={r.version} aria-label={`${t.name} v${r.version}`}>
                  <Group gap={6}>
                    <Verdict passed={r.passed} />
                    <Text size="sm">
                      {percent(r.pass_rate)} ({r.passed_attempts}/{r.attempts})
                    </Text>
                  </Group>
                </Table.Td>
              ))}
              <Table.Td>{percent(t.pass_threshold)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {run.tests
        .filter((t) => t.test_id === open)
        .map((t) => (
          <Attempts key={t.test_id} test={t} />
        ))}
    </Stack>
  );
}

function Attempts({ test }: { test: TestRunTest }) {
  return (
    <Paper withBorder p="md">
      <Title order={4} size="h5" mb="sm">
        Attempts of {test.name}
      </Title>
      <Accordion multiple aria-label={`Attempts of ${test.name}`}>
        {(test.attempts ?? []).map((a) => (
          <Accordion.Item key={`${a.version}-${a.attempt}`} value={`${a.version}-${a.attempt}`}>
            <Accordion.Control>
              <Group gap="xs">
                <Verdict passed={a.status === 'running' ? null : a.passed} />
                <Text size="sm">
                  Attempt {a.attempt} · v{a.version}
                </Text>
              </Group>
            </Accordion.Control>
            <Accordion.Panel>
              <Attempt attempt={a} />
            </Accordion.Panel>
          </Accordion.Item>
        ))}
      </Accordion>
    </Paper>
  );
}

function Attempt({ attempt }: { attempt: TestAttempt }) {
  const r = attempt.result;
  const failed = (r.expectations ?? []).filter((e) => !e.passed);
  const verdicts = r.judge ?? [];
  return (
    <Stack gap="sm">
      {r.error && (
        <Text c="red" size="sm" role="alert">
          {r.error}
        </Text>
      )}
      {attempt.call_id && (
        <Anchor component={Link} to={`/calls/${attempt.call_id}`} size="sm">
          Open the call
        </Anchor>
      )}
      {(r.expectations ?? []).length > 0 && (
        <List size="sm" aria-label="Expectations" spacing={2}>
          {(r.expectations ?? []).map((e, i) => (
            <List.Item key={i} c={e.passed ? undefined : 'red'} data-failed={e.passed ? undefined : 'true'}>
              {e.passed ? '✓' : '✗'} {e.description}
              {e.detail && ` — ${e.detail}`}
            </List.Item>
          ))}
        </List>
      )}
      {verdicts.length > 0 && (
        <List size="sm" aria-label="Judge verdicts" spacing={2}>
          {verdicts.map((v, i) => (
            <List.Item key={i} c={v.passed ? undefined : 'red'} data-failed={v.passed ? undefined : 'true'}>
              {v.passed ? '✓' : '✗'} {v.criterion} — {v.reason}
            </List.Item>
          ))}
        </List>
      )}
      {failed.length === 0 && verdicts.every((v) => v.passed) && !r.error && attempt.status !== 'running' && (
        <Text size="sm" c="green">
          Every expectation held.
        </Text>
      )}
      <Stack gap={4} aria-label="Attempt transcript" role="list">
        {(r.transcript ?? []).map((line, i) => (
          <Text key={i} size="sm" role="listitem">
            <b>{line.role === 'user' ? 'Caller' : 'Agent'}:</b> {line.text}
          </Text>
        ))}
      </Stack>
      {r.diff && <ReplayDiff diff={r.diff} />}
    </Stack>
  );
}

const calls = (list: Array<{ name: string; args: Record<string, unknown> }>) => list.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join(', ');

function ReplayDiff({ diff }: { diff: NonNullable<TestAttempt['result']['diff']> }) {
  return (
    <Table aria-label="Replay diff" withTableBorder>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Turn</Table.Th>
          <Table.Th>Caller</Table.Th>
          <Table.Th>Recorded agent</Table.Th>
          <Table.Th>Agent now</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {diff.turns.map((t) => {
          const changed = t.replies_changed || t.tools_changed;
          return (
            <Table.Tr key={t.turn} bg={changed ? 'var(--mantine-color-red-light)' : undefined} data-changed={changed ? 'true' : undefined}>
              <Table.Td>{t.turn}</Table.Td>
              <Table.Td>{t.caller ?? '(start)'}</Table.Td>
              <Table.Td>
                {t.recorded.replies.join(' ')}
                {t.recorded.tool_calls.length > 0 && <Text size="xs" c="dimmed">{calls(t.recorded.tool_calls)}</Text>}
              </Table.Td>
              <Table.Td>
                {t.replayed ? t.replayed.replies.join(' ') : '(not reached)'}
                {t.replayed && t.replayed.tool_calls.length > 0 && <Text size="xs" c="dimmed">{calls(t.replayed.tool_calls)}</Text>}
              </Table.Td>
            </Table.Tr>
          );
        })}
      </Table.Tbody>
    </Table>
  );
}
