/**
 * The agent form's Knowledge section (docs/knowledge-base.md, "In a call"): the bases the agent
 * answers from, how (`auto`: passages put into every turn; `tool`: the LLM searches when it
 * decides) and the time an `auto` retrieval may take before the turn goes on without it.
 */
import { Fieldset, NumberInput, SimpleGrid, Stack, Text } from '@mantine/core';
import type { UseFormReturnType } from '@mantine/form';
import type { AgentFormValues } from '../lib/agent-form';
import { KnowledgeBasePicker, KnowledgeModePicker } from './knowledge/KnowledgePickers';

export function KnowledgeFieldset({ form, isNew }: { form: UseFormReturnType<AgentFormValues>; isNew: boolean }) {
  const auto = form.values.knowledge_mode === 'auto';
  return (
    <Fieldset legend="Knowledge">
      <Stack gap="sm">
        <KnowledgeBasePicker
          label="Knowledge bases"
          description="The agent answers from these; flow nodes without bases of their own use them"
          value={form.values.knowledge_base_ids}
          onChange={(ids) => form.setFieldValue('knowledge_base_ids', ids)}
          error={form.errors.knowledge_base_ids}
        />
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <div>
            <Text size="sm" fw={500} mb={4}>
              Knowledge mode
            </Text>
            <KnowledgeModePicker value={form.values.knowledge_mode} onChange={(mode) => form.setFieldValue('knowledge_mode', mode)} />
            {form.errors.knowledge_mode && (
              <Text size="xs" c="red" mt={4}>
                {form.errors.knowledge_mode}
              </Text>
            )}
          </div>
          <NumberInput
            label="Retrieval budget (ms)"
            description="Auto mode: a slower retrieval is skipped for that turn (10–2000)"
            min={10}
            max={2000}
            step={50}
            allowDecimal={false}
            placeholder={isNew ? 'default' : undefined}
            disabled={!auto}
            {...form.getInputProps('knowledge_timeout_ms')}
          />
        </SimpleGrid>
      </Stack>
    </Fieldset>
  );
}
