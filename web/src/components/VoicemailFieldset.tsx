/** The agent form's Voicemail section: detect answering machines on outbound calls, then hang up or leave a message. */
import { Collapse, Fieldset, SegmentedControl, Stack, Switch, Text, Textarea } from '@mantine/core';
import type { UseFormReturnType } from '@mantine/form';
import type { AgentFormValues } from '../lib/agent-form';

export function VoicemailFieldset({ form }: { form: UseFormReturnType<AgentFormValues> }) {
  const vm = form.values.voicemail;
  return (
    <Fieldset legend="Voicemail (outbound calls)">
      <Stack gap="sm">
        <Switch
          label="Detect answering machines"
          description="The vendor's detection where it has one, and the media gateway's (a long greeting, a beep). A person never waits on it."
          {...form.getInputProps('voicemail.detect', { type: 'checkbox' })}
        />
        <Collapse expanded={vm.detect}>
          <Stack gap="sm">
            <div>
              <Text size="sm" fw={500} mb={4}>
                On a machine
              </Text>
              <SegmentedControl
                aria-label="On a machine"
                data={[
                  { value: 'hang_up', label: 'Hang up' },
                  { value: 'leave_message', label: 'Leave a message after the beep' },
                ]}
                {...form.getInputProps('voicemail.action')}
              />
            </div>
            <Collapse expanded={vm.action === 'leave_message'}>
              <Textarea
                label="Message"
                description="Spoken once after the beep; {{variable}} placeholders come from the call's parameters"
                placeholder="Hi {{first_name}}, this is the clinic: your appointment is tomorrow at nine."
                autosize
                minRows={2}
                {...form.getInputProps('voicemail.message')}
              />
            </Collapse>
          </Stack>
        </Collapse>
      </Stack>
    </Fieldset>
  );
}
