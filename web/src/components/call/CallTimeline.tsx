/** The event trace of a call: tool calls with arguments and results, node moves, latency, errors. */
import { useState } from 'react';
import { Badge, Code, Group, SegmentedControl, Table, Text, Timeline } from '@mantine/core';
import type { CallEvent } from '../../api/types';
import { parseApiTime } from '../../lib/format';
import { KnowledgeEventDetail } from './KnowledgeSources';

/** Speech-timing events that crowd the conversation view; "All" shows them. */
const NOISE = new Set(['tts_started', 'tts_stopped', 'llm_usage', 'tts_usage', 'ttfb_metric']);

const COLOR: Record<string, string> = {
  tool_called: 'violet',
  tool_result: 'violet',
  node_entered: 'grape',
  node_transition: 'grape',
  error: 'red',
  call_status: 'blue',
  call_started: 'green',
  call_ended: 'green',
  interruption: 'orange',
  user_spoke: 'teal',
  agent_spoke: 'indigo',
  transfer_started: 'cyan',
  transfer_completed: 'cyan',
  transfer_failed: 'red',
  transfer_ringing: 'cyan',
  transfer_briefing_started: 'cyan',
  transfer_briefing_spoke: 'cyan',
  transfer_briefing_reply: 'cyan',
  transfer_briefing_completed: 'cyan',
  voicemail_detected: 'yellow',
  voicemail_message_left: 'yellow',
  knowledge_retrieved: 'lime',
  knowledge_skipped: 'orange',
};

const json = (v: unknown) => JSON.stringify(v, null, 2);

function Detail({ event }: { event: CallEvent }) {
  const d = event.data as Record<string, any>;
  switch (event.event_type) {
    case 'user_spoke':
    case 'agent_spoke':
      return <Text size="sm">{String(d.text ?? '')}</Text>;
    case 'tool_called':
      return (
        <>
          <Text size="sm">
            <b>{d.function}</b>
            {d.source ? ` (${d.source})` : ''}
          </Text>
          <Code block>{json(d.args ?? {})}</Code>
        </>
      );
    case 'tool_result':
      return (
        <>
          <Text size="sm">
            <b>{d.function}</b> → {d.status_code ?? 'no response'} in {d.duration_ms} ms{d.error ? `: ${d.error}` : ''}
          </Text>
          <Code block>{typeof d.result === 'string' ? d.result : json(d.result)}</Code>
        </>
      );
    case 'node_transition':
      return (
        <Text size="sm">
          {d.from} → <b>{d.to}</b> via {d.function}
        </Text>
      );
    case 'node_entered':
      return <Text size="sm">{d.node_key}</Text>;
    case 'ttfb_metric':
      return (
        <Text size="sm">
          {d.processor}: {d.ms} ms
        </Text>
      );
    case 'error':
      return (
        <Text size="sm" c="red">
          {d.context}: {d.message}
        </Text>
      );
    case 'call_status':
      return (
        <Text size="sm">
          {d.from ? `${d.from} → ` : ''}
          {d.status}
          {d.ignored ? ' (ignored)' : ''}
          {d.source ? ` · ${d.source}` : ''}
        </Text>
      );
    case 'transfer_started':
      return (
        <Text size="sm">
          {d.mode} transfer to <b>{d.destination}</b>
          {d.to ? ` (${d.to})` : ''}
        </Text>
      );
    case 'transfer_ringing':
      return (
        <Text size="sm">
          caller on hold; ringing <b>{d.destination}</b>
        </Text>
      );
    case 'transfer_briefing_started':
      return (
        <Text size="sm">
          <b>{d.destination}</b> answered: the agent briefs them (the caller still on hold)
        </Text>
      );
    case 'transfer_briefing_completed':
      return (
        <Text size="sm">
          summary given to <b>{d.destination}</b>: {String(d.summary ?? '')}
        </Text>
      );
    case 'transfer_briefing_spoke':
      return <Text size="sm">agent to the destination: {String(d.text ?? '')}</Text>;
    case 'transfer_briefing_reply':
      return (
        <Text size="sm">
          {d.destination}: “{String(d.text ?? '')}” → {d.decision}
        </Text>
      );
    case 'transfer_completed':
      return (
        <Text size="sm">
          <b>{d.destination}</b> {d.mode === 'warm' ? 'took the call: caller and destination joined, the agent left' : 'answered: the caller was handed over'}
        </Text>
      );
    case 'transfer_failed':
      return (
        <Text size="sm" c="red">
          {d.destination ? `${d.destination}: ` : ''}
          {d.reason}; the agent carried on
        </Text>
      );
    case 'voicemail_detected':
      return (
        <Text size="sm">
          answering machine ({d.source}: {d.reason}) → {d.action === 'leave_message' ? 'leave the message' : 'hang up'}
        </Text>
      );
    case 'voicemail_message_left':
      return (
        <Text size="sm">
          after the {d.after === 'beep' ? `beep (${d.beep_hz} Hz)` : d.after}: {String(d.text ?? '')}
        </Text>
      );
    case 'knowledge_retrieved':
    case 'knowledge_skipped':
      return <KnowledgeEventDetail data={d} skipped={event.event_type === 'knowledge_skipped'} />;
    case 'call_ended':
      return (
        <Text size="sm">
          {d.status}, {d.end_reason}
        </Text>
      );
    default:
      return Object.keys(d).length ? <Code block>{json(d)}</Code> : null;
  }
}

export function CallTimeline({ events, startMs }: { events: CallEvent[]; startMs: number }) {
  const [view, setView] = useState('conversation');
  const shown = view === 'all' ? events : events.filter((e) => !NOISE.has(e.event_type));
  return (
    <>
      <SegmentedControl
        size="xs"
        mb="sm"
        aria-label="Events shown"
        data={[
          { value: 'conversation', label: 'Conversation' },
          { value: 'all', label: `All (${events.length})` },
        ]}
        value={view}
        onChange={setView}
      />
      <Timeline bulletSize={14} lineWidth={2} aria-label="Events">
        {shown.map((e) => {
          const offset = ((parseApiTime(e.timestamp)?.getTime() ?? startMs) - startMs) / 1000;
          return (
            <Timeline.Item
              key={e.id}
              color={COLOR[e.event_type] ?? 'gray'}
              data-testid="call-event"
              title={
                <Group gap={6}>
                  <Text size="sm" fw={600}>
                    {e.event_type}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {offset >= 0 ? '+' : ''}
                    {offset.toFixed(1)}s
                  </Text>
                </Group>
              }
            >
              <Detail event={e} />
            </Timeline.Item>
          );
        })}
      </Timeline>
    </>
  );
}

/** Time to first byte per processor (LLM, STT, TTS, end to end): average and worst. */
export function LatencyTable({ events }: { events: CallEvent[] }) {
  const by: Record<string, number[]> = {};
  for (const e of events) {
    if (e.event_type === 'ttfb_metric' && typeof e.data.ms === 'number') (by[String(e.data.processor)] ??= []).push(e.data.ms);
  }
  const rows = Object.entries(by);
  if (!rows.length) return <Text c="dimmed" size="sm">No latency measured yet.</Text>;
  return (
    <Table aria-label="Latency" withRowBorders={false}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Time to first byte</Table.Th>
          <Table.Th>Average</Table.Th>
          <Table.Th>Worst</Table.Th>
          <Table.Th>Turns</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map(([processor, values]) => (
          <Table.Tr key={processor}>
            <Table.Td>
              <Badge variant="light">{processor}</Badge>
            </Table.Td>
            <Table.Td>{Math.round(values.reduce((a, b) => a + b, 0) / values.length)} ms</Table.Td>
            <Table.Td>{Math.round(Math.max(...values))} ms</Table.Td>
            <Table.Td>{values.length}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
