/** Places a phone call (POST /api/calls/outbound) and opens its page. */
import { useEffect, useState } from 'react';
import { Select, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, ApiError, unwrap } from '../api/client';
import { splitFieldErrors } from '../lib/field-errors';
import { ModalForm } from './ModalForm';
import { KeyValueEditor, recordOf, type KeyValueRow } from './KeyValueEditor';

const FIELDS = ['phone_number', 'agent_name', 'caller_id', 'custom_parameters'];

export function OutboundCallModal({ opened, agentName, onClose }: { opened: boolean; agentName?: string; onClose(): void }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const agents = useQuery({ queryKey: ['agents'], queryFn: () => unwrap(api.GET('/api/agents')), enabled: opened });
  const [agent, setAgent] = useState<string | null>(agentName ?? null);
  const [phone, setPhone] = useState('');
  const [callerId, setCallerId] = useState('');
  const [params, setParams] = useState<KeyValueRow[]>([]);
  const [errors, setErrors] = useState<Record<string, string>>({});
  useEffect(() => {
    if (opened) setAgent(agentName ?? null);
  }, [opened, agentName]);

  const place = useMutation({
    mutationFn: () =>
      unwrap(api.POST('/api/calls/outbound', { body: { agent_name: agent!, phone_number: phone, ...(callerId ? { caller_id: callerId } : {}), custom_parameters: recordOf(params) } })),
    onMutate: () => setErrors({}),
    onSuccess: (r) => {
      void queryClient.invalidateQueries({ queryKey: ['calls'] });
      onClose();
      navigate(`/calls/${r.call_id}`);
    },
    onError: (err) => {
      if (err instanceof ApiError && err.status === 422) setErrors(splitFieldErrors(err.detail, (f) => FIELDS.includes(f.split('.')[0]!)).fields);
    },
  });
  const fieldError = (f: string) => Object.entries(errors).find(([k]) => k.split('.')[0] === f)?.[1];
  const shownAtFields = Object.keys(errors).length > 0;
  return (
    <ModalForm opened={opened} title="Place a call" submitLabel="Call" busy={place.isPending} error={shownAtFields ? undefined : place.error} errorTitle="The call was not placed" onSubmit={() => place.mutate()} onClose={onClose}>
      <Select label="Agent" required searchable data={(agents.data ?? []).map((a) => a.name)} value={agent} error={fieldError('agent_name')} onChange={setAgent} />
      <TextInput label="Number to call" description="E.164, e.g. +14155550123" required value={phone} error={fieldError('phone_number')} onChange={(e) => setPhone(e.currentTarget.value)} />
      <TextInput label="Caller ID" description="Optional; default: the agent's number" value={callerId} error={fieldError('caller_id')} onChange={(e) => setCallerId(e.currentTarget.value)} />
      <KeyValueEditor label="Call parameters" keyLabel="Parameter" addLabel="Add parameter" rows={params} error={fieldError('custom_parameters')} onChange={setParams} />
    </ModalForm>
  );
}
