/**
 * What was said, from the call's user_spoke / agent_spoke events: interrupted replies and
 * backchannels are marked, an agent reply given knowledge-base passages lists them. With a recording, each line seeks the player to its moment and the
 * line being heard is highlighted as the recording plays.
 */
import { Badge, Group, Paper, Stack, Text, UnstyledButton } from '@mantine/core';
import type { CallEvent, KnowledgeSource } from '../../api/types';
import { parseApiTime } from '../../lib/format';
import { ReplySources } from './KnowledgeSources';

export interface TranscriptLine {
  seq: number;
  role: 'user' | 'assistant';
  text: string;
  /**
   * Where the line is in the recording, in seconds from its start. A speech event is recorded when
   * the utterance ends, so a line spans from the end of the one before to its own event.
   */
  startSecs: number;
  endSecs: number;
  interrupted: boolean;
  backchannel: boolean;
  /** An agent reply's knowledge-base passages (from the API's transcript: withSources). */
  sources?: KnowledgeSource[];
}

/** When the recording starts: the call connecting (its in_progress status), else its first event. */
export function recordingStartMs(events: CallEvent[], startTime: string | null): number {
  const connected = events.find((e) => e.event_type === 'call_status' && e.data.status === 'in_progress' && !e.data.ignored);
  const at = parseApiTime(connected?.timestamp ?? startTime ?? events[0]?.timestamp);
  return at ? at.getTime() : 0;
}

export function transcriptLines(events: CallEvent[], startMs: number): TranscriptLine[] {
  let previousEndSecs = 0;
  return events
    .filter((e) => (e.event_type === 'user_spoke' || e.event_type === 'agent_spoke') && typeof e.data.text === 'string')
    .map((e) => {
      const endSecs = Math.max(previousEndSecs, ((parseApiTime(e.timestamp)?.getTime() ?? startMs) - startMs) / 1000);
      const line: TranscriptLine = {
        seq: e.id,
        role: e.event_type === 'user_spoke' ? 'user' : 'assistant',
        text: e.data.text as string,
        startSecs: previousEndSecs,
        endSecs,
        interrupted: e.data.interrupted === true,
        backchannel: e.data.backchannel === true,
      };
      previousEndSecs = endSecs;
      return line;
    });
}

/** The line being heard at `positionSecs` of the recording. */
export function lineAt(lines: TranscriptLine[], positionSecs: number): TranscriptLine | undefined {
  return lines.find((l, i) => positionSecs >= l.startSecs && (positionSecs < l.endSecs || i === lines.length - 1));
}

const clock = (secs: number) => `${Math.floor(secs / 60)}:${String(Math.floor(secs % 60)).padStart(2, '0')}`;

export function CallTranscript({ lines, currentSeq, onSeek }: { lines: TranscriptLine[]; currentSeq?: number; onSeek?(secs: number): void }) {
  if (!lines.length) return <Text c="dimmed">Nothing said yet.</Text>;
  return (
    <Stack gap={6} role="list" aria-label="Transcript">
      {lines.map((line) => {
        const current = line.seq === currentSeq;
        const body = (
          <Paper
            p="xs"
            withBorder
            bg={current ? 'var(--mantine-color-indigo-0)' : line.role === 'assistant' ? 'var(--mantine-color-gray-0)' : undefined}
            style={{ borderColor: current ? 'var(--mantine-color-indigo-5)' : undefined }}
            aria-current={current ? 'true' : undefined}
          >
            <Group gap={6} mb={2}>
              <Text size="xs" fw={700} c={line.role === 'assistant' ? 'indigo' : 'teal'}>
                {line.role === 'assistant' ? 'Agent' : 'Caller'}
              </Text>
              {onSeek && (
                <Text size="xs" c="dimmed">
                  {clock(line.startSecs)}
                </Text>
              )}
              {line.interrupted && (
                <Badge size="xs" color="orange" variant="light">
                  interrupted
                </Badge>
              )}
              {line.backchannel && (
                <Badge size="xs" color="gray" variant="light">
                  backchannel
                </Badge>
              )}
            </Group>
            <Text size="sm">{line.text}</Text>
            {line.sources?.length ? <ReplySources sources={line.sources} /> : null}
          </Paper>
        );
        return (
          <div role="listitem" key={line.seq} data-testid="transcript-line">
            {onSeek ? (
              <UnstyledButton w="100%" onClick={() => onSeek(line.startSecs)} aria-label={`Play from ${clock(line.startSecs)}: ${line.text}`}>
                {body}
              </UnstyledButton>
            ) : (
              body
            )}
          </div>
        );
      })}
    </Stack>
  );
}
