import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Anchor, Badge, Button, Grid, Group, Loader, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconChecklist, IconPhoneOff } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from 'react-router';
import { api, fetchBlob, unwrap } from '../api/client';
import type { CallDetail, CallEvent } from '../api/types';
import { ApiErrorAlert, QueryState } from '../components/ApiErrorAlert';
import { CallAnalysisPanel } from '../components/call/CallAnalysis';
import { CallTimeline, LatencyTable } from '../components/call/CallTimeline';
import { CallTranscript, lineAt, recordingStartMs, transcriptLines } from '../components/call/CallTranscript';
import { withSources } from '../components/call/KnowledgeSources';
import { pendingEvents, useCallStream, type PendingTurn } from '../hooks/useCallStream';
import { endReasonText, formatDuration, formatTime, isLive, STATUS_COLOR } from '../lib/format';

export function CallPage() {
  const { callId } = useParams();
  const call = useQuery({
    queryKey: ['calls', callId],
    queryFn: () => unwrap(api.GET('/api/calls/{call_id}', { params: { path: { call_id: callId! } } })),
    // The analysis comes after the call's end (and after a re-run): look again until it is there.
    refetchInterval: (q) => (q.state.data?.analysis_status === 'pending' ? 2000 : false),
  });
  return <QueryState query={call}>{(c) => <CallView call={c} />}</QueryState>;
}

function CallView({ call }: { call: CallDetail }) {
  const queryClient = useQueryClient();
  const events = useQuery({
    queryKey: ['calls', call.id, 'events'],
    queryFn: () => unwrap(api.GET('/api/calls/{call_id}/events', { params: { path: { call_id: call.id } } })),
  });
  const live = isLive(call.status);
  const [streamed, setStreamed] = useState<CallEvent[]>([]);
  const [pending, setPending] = useState<PendingTurn[]>([]);
  const known = events.data ?? [];
  const all = useMemo(() => {
    const last = known.length ? known[known.length - 1]!.id : 0;
    return [...known, ...streamed.filter((e) => e.id > last)];
  }, [known, streamed]);

  useCallStream(call.id, {
    enabled: live && events.isSuccess,
    after: known.length ? known[known.length - 1]!.id : 0,
    onEvent: (e) => {
      setStreamed((prev) => [...prev, e]);
      // A retrieval: the call's transcript (with the reply's sources, written in the same batch) again.
      if (e.event_type === 'call_status' || e.event_type === 'node_entered' || e.event_type === 'knowledge_retrieved') void queryClient.invalidateQueries({ queryKey: ['calls', call.id], exact: true });
    },
    onPending: setPending,
    onEnd: () => void queryClient.invalidateQueries({ queryKey: ['calls', call.id] }),
  });

  const end = useMutation({
    mutationFn: () => unwrap(api.POST('/api/calls/end', { body: { call_id: call.id } })),
    onSuccess: () => {
      notifications.show({ message: 'Call ended', color: 'green' });
      void queryClient.invalidateQueries({ queryKey: ['calls', call.id] });
    },
  });

  // A replay test (docs/agent-tests.md): this call's caller turns, replayed against the agent.
  const navigate = useNavigate();
  const toTest = useMutation({
    mutationFn: () =>
      unwrap(api.POST('/api/agents/{agent_id}/tests/from-call/{call_id}', { params: { path: { agent_id: call.agent_id!, call_id: call.id } }, body: {} })),
    onSuccess: (test) => {
      notifications.show({ message: `Test ${test.name} created`, color: 'green' });
      navigate(`/agents/${call.agent_id}/tests`);
    },
  });

  const startMs = recordingStartMs(all, call.start_time);
  // A turn run's turns, answered but not recorded yet, show at once (live calls under load).
  const lines = withSources(transcriptLines(pending.length ? [...all, ...pendingEvents(call.id, pending)] : all, startMs), call.transcript);

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Group gap="sm">
          <Title order={2}>{call.channel === 'web' ? 'Web call' : `Call with ${call.phone_number}`}</Title>
          <Badge color={STATUS_COLOR[call.status]} size="lg" variant="light" aria-label={`Status ${call.status}`}>
            {call.status}
          </Badge>
          {live && (
            <Badge color="red" variant="dot" aria-live="polite">
              live
            </Badge>
          )}
        </Group>
        {live && (
          <Button color="red" variant="light" leftSection={<IconPhoneOff size={16} />} loading={end.isPending} onClick={() => end.mutate()}>
            End call
          </Button>
        )}
        {!live && call.agent_id && (
          <Button variant="default" leftSection={<IconChecklist size={16} />} loading={toTest.isPending} onClick={() => toTest.mutate()}>
            Create test from this call
          </Button>
        )}
      </Group>
      {end.error && <ApiErrorAlert error={end.error} />}
      {toTest.error && <ApiErrorAlert error={toTest.error} />}

      <Paper withBorder p="md">
        <SimpleGrid cols={{ base: 2, sm: 3, lg: 6 }} spacing="sm">
          <Fact label="Agent">
            {call.agent_id ? (
              <Anchor component={Link} to={`/agents/${call.agent_id}`}>
                {call.agent_name}
              </Anchor>
            ) : (
              call.agent_name
            )}
            {call.agent_version !== null && ` (v${call.agent_version})`}
          </Fact>
          <Fact label="Direction">{call.direction}</Fact>
          <Fact label="Provider">{call.provider ?? 'none (API)'}</Fact>
          <Fact label="Started">{formatTime(call.start_time ?? call.created_at)}</Fact>
          <Fact label="Duration">{formatDuration(call.duration)}</Fact>
          <Fact label="End reason">{endReasonText(call.end_reason, all)}</Fact>
          {call.answered_by && <Fact label="Answered by">{call.answered_by}</Fact>}
          <Fact label="Flow node">{call.current_node_key ?? '—'}</Fact>
          <Fact label="LLM tokens">
            {call.llm_prompt_tokens} in / {call.llm_completion_tokens} out
          </Fact>
          <Fact label="TTS characters">{call.tts_characters}</Fact>
          {call.trace_id && (
            <Fact label="Trace">
              <Text span ff="monospace" size="sm" data-testid="call-trace-id">
                {call.trace_id}
              </Text>
            </Fact>
          )}
          {Object.keys(call.context).length > 0 && (
            <Fact label="Parameters">
              {Object.entries(call.context)
                .map(([k, v]) => `${k}=${v}`)
                .join(', ')}
            </Fact>
          )}
        </SimpleGrid>
      </Paper>

      <Grid>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <Paper withBorder p="md">
            <Title order={3} size="h4" mb="sm">
              Transcript
            </Title>
            {call.recording_url ? <RecordingWithTranscript url={call.recording_url} lines={lines} /> : <CallTranscript lines={lines} />}
          </Paper>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <Stack gap="md">
            <CallAnalysisPanel call={call} />
            <Paper withBorder p="md">
              <Title order={3} size="h4" mb="sm">
                Latency
              </Title>
              <LatencyTable events={all} />
            </Paper>
            <Paper withBorder p="md">
              <Title order={3} size="h4" mb="sm">
                Events
              </Title>
              {events.error ? <ApiErrorAlert error={events.error} /> : events.isPending ? <Loader size="sm" /> : <CallTimeline events={all} startMs={startMs} />}
            </Paper>
          </Stack>
        </Grid.Col>
      </Grid>
    </Stack>
  );
}

function Fact({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="sm">{children}</Text>
    </div>
  );
}

/** The recording (fetched with the session's token) above the transcript it follows. */
function RecordingWithTranscript({ url, lines }: { url: string; lines: ReturnType<typeof transcriptLines> }) {
  const audio = useRef<HTMLAudioElement>(null);
  const [src, setSrc] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [positionSecs, setPositionSecs] = useState(0);

  useEffect(() => {
    let objectUrl: string | undefined;
    fetchBlob(url)
      .then((blob) => setSrc((objectUrl = URL.createObjectURL(blob))))
      .catch(setError);
    return () => {
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [url]);

  const seek = useCallback((secs: number) => {
    if (!audio.current) return;
    audio.current.currentTime = secs;
    void audio.current.play();
  }, []);

  return (
    <Stack gap="sm">
      {error !== null && <ApiErrorAlert error={error} title="Recording unavailable" />}
      {src ? (
        <audio ref={audio} src={src} controls preload="auto" style={{ width: '100%' }} aria-label="Call recording" onTimeUpdate={(e) => setPositionSecs(e.currentTarget.currentTime)} />
      ) : (
        error === null && <Loader size="sm" aria-label="Loading recording" />
      )}
      <CallTranscript lines={lines} currentSeq={positionSecs > 0 ? lineAt(lines, positionSecs)?.seq : undefined} onSeek={src ? seek : undefined} />
    </Stack>
  );
}
