/**
 * Telephony credentials (administrators). The providers, their fields (label, kind, whether
 * secret, help text) and what each can do come from GET /api/settings/telephony/providers — the
 * vendors' own descriptors — so a vendor added to the server appears here as it is. Secrets come
 * back masked and are write-only: an empty secret input keeps the stored one.
 */
import { useEffect, useState } from 'react';
import { Alert, Badge, Button, Group, NumberInput, Paper, PasswordInput, Select, SimpleGrid, Stack, Text, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiError, unwrap } from '../../api/client';
import type { TelephonyProvider, TelephonySettings } from '../../api/types';
import { ApiErrorAlert, QueryState } from '../../components/ApiErrorAlert';
import { PageHeader } from '../../components/PageHeader';
import { splitFieldErrors } from '../../lib/field-errors';

const CAPABILITIES = [
  ['transfer', 'Transfer'],
  ['machine_detection', 'Machine detection'],
  ['send_dtmf', 'Send keypresses'],
] as const;

export function TelephonyPage() {
  const settings = useQuery({ queryKey: ['settings', 'telephony'], queryFn: () => unwrap(api.GET('/api/settings/telephony')) });
  const providers = useQuery({ queryKey: ['settings', 'telephony', 'providers'], queryFn: () => unwrap(api.GET('/api/settings/telephony/providers')) });
  return (
    <>
      <PageHeader title="Telephony" />
      <QueryState query={providers}>{(p) => <QueryState query={settings}>{(s) => <TelephonyForm settings={s} providers={p} />}</QueryState>}</QueryState>
    </>
  );
}

function Capabilities({ vendor }: { vendor: TelephonyProvider }) {
  return (
    <Group gap="xs">
      {CAPABILITIES.map(([key, label]) => {
        const c = vendor.capabilities[key];
        return (
          <Badge key={key} variant="light" color={c.supported ? 'green' : 'gray'} title={c.how}>
            {label}: {c.supported ? 'yes' : 'no'}
          </Badge>
        );
      })}
      <Badge variant="light" color="blue">
        Audio: {vendor.capabilities.audio_formats.join(', ')}
      </Badge>
    </Group>
  );
}

function TelephonyForm({ settings, providers }: { settings: TelephonySettings; providers: TelephonyProvider[] }) {
  const queryClient = useQueryClient();
  const all = settings as Record<string, unknown>;
  const [provider, setProvider] = useState<string>((settings.provider as string | null) ?? providers[0]?.name ?? '');
  const [baseUrl, setBaseUrl] = useState<string>((settings.public_base_url as string | null) ?? '');
  const [values, setValues] = useState<Record<string, string | number>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [general, setGeneral] = useState<string[]>([]);
  useEffect(() => setValues({}), [settings]);

  const vendor = providers.find((p) => p.name === provider);
  const fields = vendor?.fields ?? [];
  const save = useMutation({
    mutationFn: () => {
      const body: Record<string, unknown> = { provider, public_base_url: baseUrl };
      for (const field of fields) {
        const value = values[field.name];
        if (value === undefined) continue; // the API takes the active provider's fields only
        if (field.secret && value === '') continue; // empty = keep the stored secret
        body[field.name] = value === '' ? null : value;
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
            <Select
              label="Active provider"
              description="Calls are placed through this provider; saving stores its fields"
              data={providers.map((p) => ({ value: p.name, label: p.label }))}
              allowDeselect={false}
              value={provider}
              onChange={(v) => v && setProvider(v)}
              error={errors.provider}
            />
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
        {vendor && (
          <Paper withBorder p="md">
            <Stack gap="xs" mb="sm">
              <Text fw={600}>{vendor.label}</Text>
              <Text size="sm" c="dimmed">
                {vendor.docs}
              </Text>
              <Capabilities vendor={vendor} />
            </Stack>
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              {fields.map((field) => {
                const stored = all[field.name];
                const value = values[field.name];
                const set = (v: string | number) => setValues({ ...values, [field.name]: v });
                if (field.secret) {
                  return (
                    <PasswordInput
                      key={field.name}
                      label={field.label}
                      description={stored ? `Stored: ${stored}. Leave empty to keep it.` : `Not set. ${field.help}`}
                      autoComplete="new-password"
                      value={(value as string | undefined) ?? ''}
                      error={errors[field.name]}
                      onChange={(e) => set(e.currentTarget.value)}
                    />
                  );
                }
                if (field.kind === 'int') {
                  return (
                    <NumberInput
                      key={field.name}
                      label={field.label}
                      description={field.help}
                      allowDecimal={false}
                      min={1}
                      placeholder={field.default === null ? undefined : String(field.default)}
                      value={value ?? (stored as number | null) ?? ''}
                      error={errors[field.name]}
                      onChange={set}
                    />
                  );
                }
                return (
                  <TextInput
                    key={field.name}
                    label={field.label}
                    description={field.help}
                    value={(value as string | undefined) ?? ((stored as string | null) ?? '')}
                    error={errors[field.name]}
                    onChange={(e) => set(e.currentTarget.value)}
                  />
                );
              })}
            </SimpleGrid>
          </Paper>
        )}
        <Group>
          <Button type="submit" loading={save.isPending}>
            Save telephony settings
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
