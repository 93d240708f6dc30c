import { Alert, Center, Loader } from '@mantine/core';
import { IconAlertTriangle, IconLock } from '@tabler/icons-react';
import type { ReactNode } from 'react';
import { ApiError } from '../api/client';

/** An API failure for the user: 403 says what is missing rather than failing the page. */
export function ApiErrorAlert({ error, title }: { error: unknown; title?: string }) {
  if (error instanceof ApiError && error.status === 403) {
    return (
      <Alert color="orange" icon={<IconLock size={18} />} title="Not allowed" role="alert">
        Your account is not allowed to do this{error.detail ? `: ${error.detail}` : ''}. Ask an administrator.
      </Alert>
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return (
    <Alert color="red" icon={<IconAlertTriangle size={18} />} title={title ?? 'Something went wrong'} role="alert">
      {message}
    </Alert>
  );
}

/** Loading spinner, error, or the content of a query. */
export function QueryState<T>({ query, children }: { query: { data?: T; error: unknown; isPending: boolean }; children: (data: T) => ReactNode }) {
  if (query.error) return <ApiErrorAlert error={query.error} />;
  if (query.isPending || query.data === undefined) {
    return (
      <Center p="xl">
        <Loader aria-label="Loading" />
      </Center>
    );
  }
  return <>{children(query.data)}</>;
}
