/** An icon button in a table row with its tooltip (edit, delete, test…): the pages' one shape of it. */
import { ActionIcon, Tooltip } from '@mantine/core';
import type { ComponentType } from 'react';

export interface RowActionProps {
  /** The tooltip. */
  label: string;
  /** What a screen reader (and a test) calls it: "Delete faq.md". */
  ariaLabel: string;
  icon: ComponentType<{ size?: number }>;
  onClick: () => void;
  danger?: boolean;
  loading?: boolean;
  disabled?: boolean;
}

export function RowAction({ label, ariaLabel, icon: Icon, onClick, danger, loading, disabled }: RowActionProps) {
  return (
    <Tooltip label={label}>
      <ActionIcon variant="subtle" {...(danger ? { color: 'red' } : {})} aria-label={ariaLabel} loading={loading} disabled={disabled} onClick={onClick}>
        <Icon size={18} />
      </ActionIcon>
    </Tooltip>
  );
}
