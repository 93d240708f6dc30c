/**
 * The agent form's Transfer section: where the agent may hand the caller to a human. Each row is
 * one destination of the builtin tool transfer_call; the API's errors show at the row's inputs.
 */
import { ActionIcon, Alert, Button, Fieldset, Group, NumberInput, Paper, SegmentedControl, SimpleGrid, Stack, Text, TextInput } from '@mantine/core';
import type { UseFormReturnType } from '@mantine/form';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import type { AgentFormValues } from '../lib/agent-form';
import { emptyDestination } from '../lib/transfer-form';

export function TransferFieldset({ form }: { form: UseFormReturnType<AgentFormValues> }) {
  const rows = form.values.transfer_destinations;
  const input = (i: number, key: string) => form.getInputProps(`transfer_destinations.${i}.${key}`);
  return (
    <Fieldset legend="Transfer to a human">
      <Stack gap="sm" role="group" aria-label="Transfer destinations">
        <Text size="sm" c="dimmed">
          The agent may hand the caller to one of these (builtin tool transfer_call; in a flow, on nodes that list it or as a pre-action): it says the
          message, then the call is dialled there. Twilio and Plivo calls only; never offered on Exotel, browser or text calls. Warm (Twilio and Plivo): the caller
          waits on hold while the agent briefs the person, who presses 1 or says connect.
        </Text>
        {rows.map((_, i) => (
          <Paper key={i} withBorder p="xs" role="group" aria-label={`Destination ${i + 1}`}>
            <Stack gap="xs">
              <Group align="flex-start" gap="xs" wrap="nowrap">
                <TextInput label="Name" aria-label={`Destination ${i + 1} name`} description="What the agent picks it by" w={180} {...input(i, 'name')} />
                <SimpleGrid cols={{ base: 1, sm: 2 }} style={{ flex: 1 }}>
                  <TextInput
                    label="Phone number"
                    aria-label={`Destination ${i + 1} phone number`}
                    description="E.164, e.g. +14155550123"
                    {...input(i, 'phone_number')}
                  />
                  <TextInput label="or SIP URI" aria-label={`Destination ${i + 1} SIP URI`} description="e.g. sip:billing@pbx.example.com" {...input(i, 'sip_uri')} />
                </SimpleGrid>
                <ActionIcon mt={42} variant="subtle" color="red" size="lg" aria-label={`Remove destination ${i + 1}`} onClick={() => form.removeListItem('transfer_destinations', i)}>
                  <IconTrash size={16} />
                </ActionIcon>
              </Group>
              <TextInput label="When to transfer there" aria-label={`Destination ${i + 1} description`} description="Given to the LLM" {...input(i, 'description')} />
              <TextInput label="Message" aria-label={`Destination ${i + 1} message`} description="Said to the caller just before the hand-over; empty: nothing" placeholder="e.g. Connecting you now." {...input(i, 'message')} />
              <Group gap="xs" align="center">
                <Text size="sm">Transfer</Text>
                <SegmentedControl
                  size="xs"
                  aria-label={`Destination ${i + 1} mode`}
                  data={[
                    { value: 'cold', label: 'Cold' },
                    { value: 'warm', label: 'Warm: brief them first' },
                  ]}
                  {...input(i, 'mode')}
                />
              </Group>
              {rows[i]!.mode === 'warm' && (
                <SimpleGrid cols={{ base: 1, sm: 3 }}>
                  <TextInput
                    label="Summary covers"
                    aria-label={`Destination ${i + 1} summary prompt`}
                    description="What the agent tells the person before the caller is put through"
                    placeholder="who is calling, what they want, what has been done"
                    {...input(i, 'summary_prompt')}
                  />
                  <TextInput label="Hold audio" aria-label={`Destination ${i + 1} hold audio`} description="tone (built in) or a WAV/MP3 URL" {...input(i, 'hold_audio')} />
                  <NumberInput label="Wait (s)" aria-label={`Destination ${i + 1} max wait`} description="Ringing, and deciding" min={5} max={300} {...input(i, 'max_wait_secs')} />
                </SimpleGrid>
              )}
            </Stack>
          </Paper>
        ))}
        {form.errors.transfer_destinations && (
          <Alert color="red" p="xs" role="alert">
            {form.errors.transfer_destinations}
          </Alert>
        )}
        <Group>
          <Button variant="light" size="xs" leftSection={<IconPlus size={14} />} onClick={() => form.insertListItem('transfer_destinations', emptyDestination())}>
            Add destination
          </Button>
        </Group>
      </Stack>
    </Fieldset>
  );
}
