/** `{{variable}}` placeholders: a highlighted preview of a message and the list of names used. */
import { Badge, Group, Highlight, Paper, Text } from '@mantine/core';

export function variablesIn(text: string): string[] {
  return [...new Set(text.match(/\{\{\s*[\w.-]+\s*\}\}/g) ?? [])];
}

export function VariableBadges({ text }: { text: string }) {
  const vars = variablesIn(text);
  if (!vars.length) return null;
  return (
    <Group gap={4} mt={4} role="group" aria-label="Variables used">
      <Text size="xs" c="dimmed">
        Variables:
      </Text>
      {vars.map((v) => (
        <Badge key={v} size="sm" variant="light" color="yellow" tt="none">
          {v}
        </Badge>
      ))}
    </Group>
  );
}

/** The message as it reads, with its placeholders marked. */
export function HighlightedMessage({ text }: { text: string }) {
  const vars = variablesIn(text);
  if (!vars.length) return null;
  return (
    <Paper withBorder p={6} mt={4} bg="var(--mantine-color-gray-0)" data-testid="variable-preview">
      <Highlight highlight={vars} size="xs" style={{ whiteSpace: 'pre-wrap' }} color="yellow">
        {text}
      </Highlight>
    </Paper>
  );
}
