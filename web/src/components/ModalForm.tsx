/** A dialog holding one form: the API error on top, the fields, the submit button at the end. */
import { Button, Group, Modal, Stack } from '@mantine/core';
import type { ReactNode } from 'react';
import { ApiErrorAlert } from './ApiErrorAlert';

export function ModalForm(props: {
  opened: boolean;
  title: string;
  submitLabel: string;
  busy: boolean;
  error?: unknown;
  errorTitle?: string;
  size?: string;
  onSubmit(): void;
  onClose(): void;
  children: ReactNode;
}) {
  return (
    <Modal opened={props.opened} onClose={props.onClose} title={props.title} size={props.size}>
      <form
        aria-label={props.title}
        onSubmit={(e) => {
          e.preventDefault();
          props.onSubmit();
        }}
      >
        <Stack>
          {props.error ? <ApiErrorAlert error={props.error} title={props.errorTitle} /> : null}
          {props.children}
          <Group justify="flex-end">
            <Button type="submit" loading={props.busy}>
              {props.submitLabel}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
