/**
 * Creates or edits an agent test (docs/agent-tests.md). Expectations and tool mocks are edited
 * as JSON (their shapes are in the docs); script lines and judge criteria one per line.
 */
import { useState } from 'react';
import { NumberInput, SegmentedControl, Textarea, TextInput } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { AgentTest, AgentTestCreate } from '../../api/types';
import { ModalForm } from '../ModalForm';

const lines = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);
const pretty = (value: unknown) => JSON.stringify(value, null, 2);

function parseJson(label: string, text: string): unknown {
  try {
    return text.trim() ? JSON.parse(text) : undefined;
  } catch {
    throw new Error(`${label}: not valid JSON`);
  }
}

export function TestFormModal({ agentId, test, opened, onClose }: { agentId: string; test?: AgentTest; opened: boolean; onClose(): void }) {
  const queryClient = useQueryClient();
  const [kind, setKind] = useState<string>(test?.kind ?? 'simulated');
  const [name, setName] = useState(test?.name ?? '');
  const [persona, setPersona] = useState(test?.persona ?? '');
  const [script, setScript] = useState((test?.script ?? []).join('\n'));
  const [maxTurns, setMaxTurns] = useState<number | string>(test?.max_turns ?? 10);
  const [expectations, setExpectations] = useState(pretty(test?.expectations ?? []));
  const [judge, setJudge] = useState((test?.judge ?? []).join('\n'));
  const [mocks, setMocks] = useState(pretty(test?.tool_mocks ?? {}));
  const [threshold, setThreshold] = useState<number | string>(test?.pass_threshold ?? 1);

  const save = useMutation({
    mutationFn: async () => {
      const common = {
        name,
        expectations: parseJson('Expectations', expectations) as AgentTestCreate['expectations'],
        judge: lines(judge),
        tool_mocks: parseJson('Tool mocks', mocks) as AgentTestCreate['tool_mocks'],
        pass_threshold: Number(threshold),
      };
      const own = kind === 'replay' ? {} : kind === 'simulated' ? { persona, max_turns: Number(maxTurns) } : { script: lines(script) };
      if (test) {
        return unwrap(api.PATCH('/api/agents/{agent_id}/tests/{test_id}', { params: { path: { agent_id: agentId, test_id: test.id } }, body: { ...common, ...own } }));
      }
      return unwrap(api.POST('/api/agents/{agent_id}/tests', { params: { path: { agent_id: agentId } }, body: { kind: kind as 'simulated' | 'scripted', ...common, ...own } }));
    },
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['agents', agentId, 'tests'] });
      onClose();
    },
  });

  return (
    <ModalForm opened={opened} title={test ? `Edit test ${test.name}` : 'New test'} submitLabel={test ? 'Save test' : 'Create test'} busy={save.isPending} error={save.error} size="lg" onSubmit={() => save.mutate()} onClose={onClose}>
      <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
      {test?.kind === 'replay' ? (
        <TextInputReadOnly value={`Replay of call ${test.source_call_id ?? ''}`} />
      ) : (
        <SegmentedControl aria-label="Kind" value={kind} onChange={setKind} disabled={test !== undefined} data={[{ value: 'simulated', label: 'Simulated caller' }, { value: 'scripted', label: 'Scripted caller' }]} />
      )}
      {kind === 'simulated' && (
        <>
          <Textarea label="Persona" description="Who the caller is, what they want, how they talk" autosize minRows={3} value={persona} onChange={(e) => setPersona(e.currentTarget.value)} />
          <NumberInput label="Max turns" min={1} max={50} value={maxTurns} onChange={setMaxTurns} />
        </>
      )}
      {kind === 'scripted' && <Textarea label="Script" description="One caller utterance per line" autosize minRows={3} value={script} onChange={(e) => setScript(e.currentTarget.value)} />}
      <Textarea label="Expectations (JSON)" description='e.g. [{"type": "tool_called", "tool": "book_table"}, {"type": "ended_by_agent"}]' autosize minRows={3} styles={{ input: { fontFamily: 'monospace' } }} value={expectations} onChange={(e) => setExpectations(e.currentTarget.value)} />
      <Textarea label="Judge criteria" description="One criterion per line, decided pass/fail by an LLM judge" autosize minRows={2} value={judge} onChange={(e) => setJudge(e.currentTarget.value)} />
      <Textarea label="Tool mocks (JSON)" description='Results by tool name, in call order: {"book_table": [{"confirmation": "B-1"}]}' autosize minRows={2} styles={{ input: { fontFamily: 'monospace' } }} value={mocks} onChange={(e) => setMocks(e.currentTarget.value)} />
      <NumberInput label="Pass threshold" description="Share of repeats that must pass" min={0} max={1} step={0.05} decimalScale={2} value={threshold} onChange={setThreshold} />
    </ModalForm>
  );
}

function TextInputReadOnly({ value }: { value: string }) {
  return <TextInput label="Kind" readOnly value={value} />;
}
