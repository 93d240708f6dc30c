/**
 * Traceability of knowledge-base answers (docs/knowledge-base.md#traceability): the passages an
 * agent reply was given, under the reply in the transcript, and the `knowledge_retrieved` /
 * `knowledge_skipped` events of the timeline, readably.
 */
import { Group, List, Text } from '@mantine/core';
import type { KnowledgeSource, TranscriptEntry } from '../../api/types';
import type { TranscriptLine } from './CallTranscript';

interface Chunk {
  document: string;
  heading: string;
  score: number;
}

function ChunkList({ chunks, label }: { chunks: Chunk[]; label: string }) {
  return (
    <List size="xs" spacing={2} aria-label={label}>
      {chunks.map((c, i) => (
        <List.Item key={i}>
          <Text span size="xs">
            {c.document}
            {c.heading ? ` › ${c.heading}` : ''}
          </Text>{' '}
          <Text span size="xs" c="dimmed">
            {c.score.toFixed(3)}
          </Text>
        </List.Item>
      ))}
    </List>
  );
}

/** The "Sources" under an agent reply. */
export function ReplySources({ sources }: { sources: KnowledgeSource[] }) {
  return (
    <div data-testid="reply-sources">
      <Text size="xs" fw={600} c="dimmed" mt={4}>
        Sources
      </Text>
      <ChunkList chunks={sources} label="Sources" />
    </div>
  );
}

/**
 * The API's transcript sources on the page's lines (built from the events, so a live call's lines
 * show at once): the two list the same speech events in the same order; a line the API's
 * transcript does not have yet, or holds differently, gets none.
 */
export function withSources(lines: TranscriptLine[], transcript: TranscriptEntry[] | undefined): TranscriptLine[] {
  if (!transcript?.some((t) => t.sources?.length)) return lines;
  return lines.map((line, i) => {
    const entry = transcript[i];
    return entry?.sources?.length && entry.role === line.role && entry.text === line.text ? { ...line, sources: entry.sources } : line;
  });
}

/** A retrieval event of the timeline: the query, mode and time, then each chunk. */
export function KnowledgeEventDetail({ data, skipped }: { data: Record<string, any>; skipped: boolean }) {
  const chunks: Chunk[] = Array.isArray(data.chunks) ? data.chunks : [];
  return (
    <>
      <Group gap={4}>
        <Text size="sm">“{String(data.query ?? '')}”</Text>
        <Text size="xs" c="dimmed">
          {data.mode} · {Math.round(Number(data.ms ?? 0))} ms
        </Text>
      </Group>
      {skipped ? (
        <Text size="sm" c="orange">
          {String(data.reason ?? 'skipped')}
        </Text>
      ) : chunks.length ? (
        <ChunkList chunks={chunks} label="Passages retrieved" />
      ) : (
        <Text size="xs" c="dimmed">
          no passage matched
        </Text>
      )}
    </>
  );
}
