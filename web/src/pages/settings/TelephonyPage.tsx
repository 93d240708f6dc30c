/**
 * Telephony credentials (administrators). The fields are those the API returns, grouped by their
 * provider prefix (`twilio_…`, `exotel_…`), so a provider or field the API adds appears here.
 * Secrets come back masked and are write-only: an empty secret input keeps the stored one.
 */
import { useEffect, useState } from 'react';
import { Alert, Button, Group, NumberInput, Paper, PasswordInput, Select, SimpleGrid, Stack, Text, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiError, unwrap } from '../../api/client';
import type { TelephonySettings } from '../../api/types';
import { ApiErrorAlert, QueryState } from '../../components/ApiErrorAlert';
import { PageHeader } from '../../components/PageHeader';
import { splitFieldErrors } from '../../lib/field-errors';

const COMMON = new Set(['provider', 'public_base_url']);
const isSecret = (field: string, value: unknown) => /(token|secret|password)$/.test(field) || (typeof value === 'string' && value.startsWith('****'));

export function providersOf(settings: Record<string, unknown>): string[] {
  return [...new Set(Object.keys(settings).filter((k) => !COMMON.has(k) && k.includes('_')).map((k) => k.split('_')[0]!))];
}

export function TelephonyPage() {
  const settings = useQuery({ queryKey: ['settings', 'telephony'], queryFn: () => unwrap(api.GET('/api/settings/telephony')) });
  return (
    <>
      <PageHeader title="Telephony" />
      <QueryState query={settings}>{(s) => <TelephonyForm settings={s} />}</QueryState>
    </>
  );
}

function TelephonyForm({ settings }: { settings: TelephonySettings }) {
  const queryClient = useQueryClient();
  const all = settings as Record<string, unknown>;
  const providers = providersOf(all);
  const [provider, setProvider] = useState<string>((settings.provider as string | null) ?? providers[0] ?? '');
  const [baseUrl, setBaseUrl] = useState<string>((settings.public_base_url as string | null) ?? '');
  const [values, setValues] = useState<Record<string, string | number>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [general, setGeneral] = useState<string[]>([]);
  useEffect(() => setValues({}), [settings]);

  const fields = Object.keys(all).filter((k) => k.startsWith(`${provider}_`));
  const save = useMutation({
    mutationFn: () => {
      const body: Record<string, unknown> = { provider, public_base_url: baseUrl };
      for (const [field, value] of Object.entries(values)) {
        if (!field.startsWith(`${provider}_`)) continue; // the API takes the active provider's fields only
        if (isSecret(field, all[field]) && value === '') continue; // empty = keep the stored secret
        body[field] = value === '' ? null : value;
      }
      return unwrap(api.PUT('/api/settings/telephony', { body: body as never }));
    },
    onMutate: () => {
      setErrors({});
      setGeneral([]);
    },
    onSuccess: (saved) => {
      queryClient.setQueryData(['settings', 'telephony'], saved);
      notifications.show({ message: 'Telephony settings saved', color: 'green' });
    },
    onError: (err) => {
      if (!(err instanceof ApiError) || err.status !== 422) return setGeneral([err.message]);
      const split = splitFieldErrors(err.detail, (f) => f in all);
      setErrors(split.fields);
      setGeneral(split.general);
    },
  });

  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
      aria-label="Telephony settings"
    >
      <Stack maw={760}>
        {save.error && !(save.error instanceof ApiError && save.error.status === 422) && <ApiErrorAlert error={save.error} />}
        {general.length > 0 && save.error instanceof ApiError && save.error.status === 422 && (
          <Alert color="red" role="alert">
            {general.join('; ')}
          </Alert>
        )}
        <Paper withBorder p="md">
          <Stack>
            <Select label="Active provider" description="Calls are placed through this provider; saving stores its fields" data={providers} allowDeselect={false} value={provider} onChange={(v) => v && setProvider(v)} error={errors.provider} />
            <TextInput
              label="Public base URL"
              description="The HTTPS address providers reach this service at; webhook URLs are built from it"
              required
              value={baseUrl}
              error={errors.public_base_url}
              onChange={(e) => setBaseUrl(e.currentTarget.value)}
            />
          </Stack>
        </Paper>
        <Paper withBorder p="md">
          <Text fw={600} mb="sm" tt="capitalize">
            {provider}
          </Text>
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            {fields.map((field) => {
              const stored = all[field];
              const words = field.slice(provider.length + 1).replace(/_/g, ' ');
              const label = words.charAt(0).toUpperCase() + words.slice(1);
              const value = values[field];
              const set = (v: string | number) => setValues({ ...values, [field]: v });
              if (isSecret(field, stored)) {
                return (
                  <PasswordInput
                    key={field}
                    label={label}
                    description={stored ? `Stored: ${stored}. Leave empty to keep it.` : 'Not set'}
                    autoComplete="new-password"
                    value={(value as string | undefined) ?? ''}
                    error={errors[field]}
                    onChange={(e) => set(e.currentTarget.value)}
                  />
                );
              }
              if (typeof stored === 'number') {
                return <NumberInput key={field} label={label} allowDecimal={false} min={1} value={value ?? stored} error={errors[field]} onChange={set} />;
              }
              return <TextInput key={field} label={label} value={(value as string | undefined) ?? ((stored as string | null) ?? '')} error={errors[field]} onChange={(e) => set(e.currentTarget.value)} />;
            })}
          </SimpleGrid>
        </Paper>
        <Group>
          <Button type="submit" loading={save.isPending}>
            Save telephony settings
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
