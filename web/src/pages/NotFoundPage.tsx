import { Alert, Anchor } from '@mantine/core';
import { Link } from 'react-router';

export function NotFoundPage() {
  return (
    <Alert color="gray" title="Page not found">
      There is nothing at this address. <Anchor component={Link} to="/">Go home</Anchor>
    </Alert>
  );
}
