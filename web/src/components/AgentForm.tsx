/** Every field of an agent, grouped; errors and provider warnings from the API shown at the field. */
import { ActionIcon, Alert, Button, Fieldset, Grid, Group, JsonInput, MultiSelect, NumberInput, Select, SimpleGrid, Stack, Textarea, TextInput } from '@mantine/core';
import type { UseFormReturnType } from '@mantine/form';
import { IconAlertTriangle, IconPlus, IconTrash } from '@tabler/icons-react';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { EVENT_TYPES, LLM_PROVIDERS, STT_MODES, STT_PROVIDERS, TTS_PROVIDERS } from '../api/enums';
import type { Tool } from '../api/types';
import { PIPELINE_FIELDS, type AgentFormValues } from '../lib/agent-form';
import { PHRASE_FIELDS } from '../lib/phrase-form';
import { AnalysisFieldset } from './AnalysisFieldset';
import { KnowledgeFieldset } from './KnowledgeFieldset';
import { TransferFieldset } from './TransferFieldset';
import { VoicemailFieldset } from './VoicemailFieldset';
import { VariableBadges } from './Variables';

interface Props {
  form: UseFormReturnType<AgentFormValues>;
  tools: Tool[];
  warnings: Record<string, string[]>;
  /** Placeholder of fields left empty: the server's default applies. */
  isNew: boolean;
}

const options = (values: readonly string[]) => values.map((v) => ({ value: v, label: v }));

function ProviderWarnings({ messages }: { messages?: string[] }) {
  if (!messages?.length) return null;
  return (
    <Alert color="yellow" variant="light" p="xs" icon={<IconAlertTriangle size={16} />} role="status">
      {messages.join('; ')}
    </Alert>
  );
}

export function AgentForm({ form, tools, warnings, isNew }: Props) {
  const byDefault = isNew ? 'default' : undefined;
  const toolOptions = tools.map((t) => ({ value: t.id, label: t.name }));
  // A tool the agent still refers to may have been deleted meanwhile: keep it selectable to remove it.
  for (const id of [...form.values.tool_ids, ...form.values.pre_call_tool_ids]) {
    if (!toolOptions.some((o) => o.value === id)) toolOptions.push({ value: id, label: `unknown tool ${id.slice(0, 8)}` });
  }
  // MCP tools as server/tool: those their server's allowed_tools let agents use, as of its last refresh.
  const mcpServers = useQuery({ queryKey: ['mcp-servers'], queryFn: () => unwrap(api.GET('/api/mcp-servers')) });
  const mcpOptions = (mcpServers.data ?? []).flatMap((s) => s.tools.filter((t) => t.allowed).map((t) => t.ref));
  for (const ref of form.values.mcp_tools) if (!mcpOptions.includes(ref)) mcpOptions.push(ref);

  return (
    <Stack gap="md">
      <Fieldset legend="Agent">
        <Stack gap="sm">
          <TextInput label="Name" description="A slug: letters, digits, _ and -; used in webhook URLs" required {...form.getInputProps('name')} />
          <div>
            <Textarea label="Prompt" description="The LLM's system prompt" required autosize minRows={5} maxRows={20} {...form.getInputProps('prompt')} />
            <VariableBadges text={form.values.prompt} />
          </div>
          <div>
            <Textarea label="Greeting" description="Spoken first; {{variable}} placeholders are filled from the call's parameters" autosize minRows={2} {...form.getInputProps('greeting')} />
            <VariableBadges text={form.values.greeting} />
          </div>
        </Stack>
      </Fieldset>

      <Grid>
        <Grid.Col span={{ base: 12, md: 4 }}>
          <Fieldset legend="Speech to text" h="100%">
            <Stack gap="sm">
              <Select label="STT provider" data={options(STT_PROVIDERS)} placeholder={byDefault} clearable={isNew} {...form.getInputProps('stt_provider')} />
              <ProviderWarnings messages={warnings.stt_provider} />
              <TextInput label="STT model" placeholder={byDefault ?? 'provider default'} {...form.getInputProps('stt_model')} />
              <TextInput label="STT language" description="BCP-47, e.g. en, hi-IN" placeholder={byDefault} {...form.getInputProps('stt_language')} />
              <Select label="STT mode" description="Only for providers that offer it" data={options(STT_MODES)} clearable {...form.getInputProps('stt_mode')} />
              <JsonInput label="STT settings" description="Provider-specific, JSON" autosize minRows={2} placeholder="{}" {...form.getInputProps('stt_settings')} />
            </Stack>
          </Fieldset>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 4 }}>
          <Fieldset legend="Language model" h="100%">
            <Stack gap="sm">
              <Select label="LLM provider" data={options(LLM_PROVIDERS)} placeholder={byDefault} clearable={isNew} {...form.getInputProps('llm_provider')} />
              <ProviderWarnings messages={warnings.llm_provider} />
              <TextInput label="LLM model" placeholder={byDefault ?? "the provider's default"} {...form.getInputProps('llm_model')} />
              <NumberInput label="Temperature" min={0} max={2} step={0.1} decimalScale={2} placeholder="provider default" {...form.getInputProps('temperature')} />
              <NumberInput label="Max tokens" min={1} step={50} allowDecimal={false} placeholder="provider default" {...form.getInputProps('max_tokens')} />
            </Stack>
          </Fieldset>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 4 }}>
          <Fieldset legend="Text to speech" h="100%">
            <Stack gap="sm">
              <Select label="TTS provider" data={options(TTS_PROVIDERS)} placeholder={byDefault} clearable={isNew} {...form.getInputProps('tts_provider')} />
              <ProviderWarnings messages={warnings.tts_provider} />
              <TextInput label="TTS model" placeholder={byDefault ?? 'provider default'} {...form.getInputProps('tts_model')} />
              <TextInput label="Voice" description="Voice id or speaker name" placeholder={byDefault ?? 'provider default'} {...form.getInputProps('voice')} />
              <TextInput label="TTS language" placeholder={byDefault ?? 'none'} {...form.getInputProps('tts_language')} />
              <JsonInput label="TTS settings" description="Provider-specific, JSON" autosize minRows={2} placeholder="{}" {...form.getInputProps('tts_settings')} />
            </Stack>
          </Fieldset>
        </Grid.Col>
      </Grid>

      <Fieldset legend="Conversation (pipeline)">
        <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }}>
          {PIPELINE_FIELDS.map((f) => (
            <NumberInput key={f.key} label={f.label} min={0} step={f.step} placeholder={byDefault} {...form.getInputProps(`pipeline.${f.key}`)} />
          ))}
        </SimpleGrid>
        <SimpleGrid cols={{ base: 1, sm: 2 }} mt="sm">
          {PHRASE_FIELDS.map((f) => (
            <Stack key={f.key} gap={4}>
              <Textarea label={f.label} description={f.description} autosize minRows={2} placeholder="one phrase a line" {...form.getInputProps(`phrases.${f.key}.text`)} />
              <Select
                aria-label={`${f.label}: mode`}
                data={[
                  { value: 'add', label: 'Add to the built-in ones' },
                  { value: 'replace', label: 'Replace the built-in ones' },
                ]}
                allowDeselect={false}
                {...form.getInputProps(`phrases.${f.key}.mode`)}
              />
            </Stack>
          ))}
        </SimpleGrid>
      </Fieldset>

      <Fieldset legend="Tools">
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <MultiSelect label="Tools the LLM may call" data={toolOptions} searchable clearable {...form.getInputProps('tool_ids')} />
          <MultiSelect label="Pre-call tools" description="Fired with the greeting; results join the context" data={toolOptions} searchable clearable {...form.getInputProps('pre_call_tool_ids')} />
          <MultiSelect label="MCP tools the LLM may call" description="server/tool, from the MCP servers page" data={mcpOptions} searchable clearable {...form.getInputProps('mcp_tools')} />
        </SimpleGrid>
      </Fieldset>

      <KnowledgeFieldset form={form} isNew={isNew} />

      <TransferFieldset form={form} />

      <Fieldset legend="Context variables">
        <Stack gap="xs">
          {form.values.context_variables.map((_, i) => (
            <Group key={i} align="flex-end" gap="xs" wrap="nowrap">
              <TextInput label="Variable" style={{ flex: 1 }} {...form.getInputProps(`context_variables.${i}.name`)} />
              <TextInput label="Type" w={110} {...form.getInputProps(`context_variables.${i}.type`)} />
              <TextInput label="Description" style={{ flex: 2 }} {...form.getInputProps(`context_variables.${i}.description`)} />
              <ActionIcon variant="subtle" color="red" size="lg" aria-label={`Remove variable ${i + 1}`} onClick={() => form.removeListItem('context_variables', i)}>
                <IconTrash size={16} />
              </ActionIcon>
            </Group>
          ))}
          {form.errors.context_variables && (
            <Alert color="red" p="xs" role="alert">
              {form.errors.context_variables}
            </Alert>
          )}
          <Group>
            <Button variant="light" size="xs" leftSection={<IconPlus size={14} />} onClick={() => form.insertListItem('context_variables', { name: '', type: 'string', description: '' })}>
              Add variable
            </Button>
          </Group>
        </Stack>
      </Fieldset>

      <Fieldset legend="Webhook notifications">
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <TextInput label="Webhook URL" placeholder="https://…" {...form.getInputProps('webhook_url')} />
          <MultiSelect label="Events" data={options(EVENT_TYPES)} searchable clearable {...form.getInputProps('webhook_events')} />
        </SimpleGrid>
      </Fieldset>

      <AnalysisFieldset form={form} />

      <VoicemailFieldset form={form} />
    </Stack>
  );
}
