/** The agent form's Analysis section: summary, outcome fields, success criteria, and its LLM. */
import { ActionIcon, Alert, Button, Checkbox, Collapse, Fieldset, Group, Select, SimpleGrid, Stack, Switch, Textarea, TextInput } from '@mantine/core';
import type { UseFormReturnType } from '@mantine/form';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import { LLM_PROVIDERS } from '../api/enums';
import type { AgentFormValues } from '../lib/agent-form';
import { ANALYSIS_FIELD_TYPES, emptyField } from '../lib/analysis-form';

const DEFAULT_SUMMARY = 'Two or three neutral sentences: who called, what they wanted, what was agreed or done';

export function AnalysisFieldset({ form }: { form: UseFormReturnType<AgentFormValues> }) {
  const analysis = form.values.analysis;
  const fieldsError = form.errors['analysis.fields'];
  return (
    <Fieldset legend="Analysis after the call">
      <Stack gap="sm">
        <Switch
          label="Analyse every call"
          description="After each call: a summary, the fields below and whether the call achieved its goal (webhook event analysis_completed)"
          {...form.getInputProps('analysis.enabled', { type: 'checkbox' })}
        />
        {form.errors.analysis && (
          <Alert color="red" p="xs" role="alert">
            {form.errors.analysis}
          </Alert>
        )}
        <Collapse expanded={analysis.enabled}>
          <Stack gap="sm">
            <Textarea label="Summary prompt" placeholder={DEFAULT_SUMMARY} autosize minRows={2} {...form.getInputProps('analysis.summary_prompt')} />
            <Textarea
              label="Success criteria"
              description="What a successful call is; leave empty for no success verdict"
              placeholder="The caller ends the call with an appointment booked"
              autosize
              minRows={2}
              {...form.getInputProps('analysis.success_criteria')}
            />
            <Stack gap="xs" role="group" aria-label="Outcome fields">
              {analysis.fields.map((f, i) => (
                <Group key={i} align="flex-end" gap="xs" wrap="nowrap">
                  <TextInput label="Field" aria-label={`Field ${i + 1} name`} w={150} {...form.getInputProps(`analysis.fields.${i}.name`)} />
                  <Select label="Type" aria-label={`Field ${i + 1} type`} w={110} data={ANALYSIS_FIELD_TYPES} allowDeselect={false} {...form.getInputProps(`analysis.fields.${i}.type`)} />
                  <TextInput label="Description" aria-label={`Field ${i + 1} description`} style={{ flex: 2 }} {...form.getInputProps(`analysis.fields.${i}.description`)} />
                  {f.type === 'enum' && (
                    <TextInput label="Values" aria-label={`Field ${i + 1} values`} placeholder="a, b, c" style={{ flex: 1 }} {...form.getInputProps(`analysis.fields.${i}.values`)} />
                  )}
                  <Checkbox label="Required" aria-label={`Field ${i + 1} required`} mb={8} {...form.getInputProps(`analysis.fields.${i}.required`, { type: 'checkbox' })} />
                  <ActionIcon variant="subtle" color="red" size="lg" aria-label={`Remove field ${i + 1}`} onClick={() => form.removeListItem('analysis.fields', i)}>
                    <IconTrash size={16} />
                  </ActionIcon>
                </Group>
              ))}
              {fieldsError && (
                <Alert color="red" p="xs" role="alert">
                  {fieldsError}
                </Alert>
              )}
              <Group>
                <Button variant="light" size="xs" leftSection={<IconPlus size={14} />} onClick={() => form.insertListItem('analysis.fields', emptyField())}>
                  Add field
                </Button>
              </Group>
            </Stack>
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              <Select
                label="Analysis LLM provider"
                placeholder="the agent's"
                data={LLM_PROVIDERS.map((v) => ({ value: v, label: v }))}
                clearable
                {...form.getInputProps('analysis.llm_provider')}
              />
              <TextInput label="Analysis LLM model" placeholder="the agent's (or the provider's default)" {...form.getInputProps('analysis.llm_model')} />
            </SimpleGrid>
          </Stack>
        </Collapse>
      </Stack>
    </Fieldset>
  );
}
