/** Knowledge-base and knowledge-mode pickers, shared by the agent form and the flow node editor. */
import type { ReactNode } from 'react';
import { MultiSelect, SegmentedControl } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { KNOWLEDGE_MODES } from '../../api/enums';

type Mode = (typeof KNOWLEDGE_MODES)[number];
const MODE_LABELS: Record<Mode, string> = {
  auto: 'Auto: passages in every turn',
  tool: 'Tool: the LLM searches',
};

export function KnowledgeBasePicker(props: { label: string; description?: string; value: string[]; onChange(ids: string[]): void; error?: ReactNode }) {
  const bases = useQuery({ queryKey: ['knowledge-bases'], queryFn: () => unwrap(api.GET('/api/knowledge-bases')) });
  const options = (bases.data ?? []).map((b) => ({ value: b.id, label: b.name }));
  // A base deleted meanwhile is removed from agents by the API; until the page reloads keep it selectable to remove it.
  for (const id of props.value) if (!options.some((o) => o.value === id)) options.push({ value: id, label: `unknown knowledge base ${id.slice(0, 8)}` });
  return <MultiSelect label={props.label} description={props.description} data={options} searchable clearable value={props.value} onChange={props.onChange} error={props.error} />;
}

export function KnowledgeModePicker(props: { value: string; onChange(mode: string): void; label?: string }) {
  return <SegmentedControl aria-label={props.label ?? 'Knowledge mode'} data={KNOWLEDGE_MODES.map((m) => ({ value: m, label: MODE_LABELS[m] }))} value={props.value} onChange={props.onChange} />;
}
