/**
 * Talk to an agent through the microphone (POST /api/calls/web, docs/web-calls.md): a level meter,
 * who is speaking, the live transcript (the call's event stream), the turn latency as heard here,
 * a hang-up button, and the call's page afterwards.
 */
import { useEffect, useRef, useState } from 'react';
import { Alert, Badge, Button, Drawer, Group, Paper, Progress, ScrollArea, Stack, Text } from '@mantine/core';
import { IconMicrophone, IconPhoneOff } from '@tabler/icons-react';
import { useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import type { CallEvent } from '../api/types';
import { useCallStream, type PendingTurn } from '../hooks/useCallStream';
import { openMicrophone, WebVoiceCall, type Speaker } from '../../widget/voice-call';
import { ApiErrorAlert } from './ApiErrorAlert';

type Phase = 'idle' | 'connecting' | 'live' | 'ended';
interface Line {
  role: 'agent' | 'you';
  text: string;
}

const SPEAKER_LABEL: Record<'agent' | 'you' | 'none', string> = { agent: 'Agent speaking', you: 'You are speaking', none: 'Listening' };

export function TalkDrawer({ opened, agentName, onClose }: { opened: boolean; agentName: string; onClose(): void }) {
  const queryClient = useQueryClient();
  const [phase, setPhase] = useState<Phase>('idle');
  const [error, setError] = useState<unknown>(null);
  const [ended, setEnded] = useState<string | null>(null);
  const [callId, setCallId] = useState<string | null>(null);
  const [level, setLevel] = useState(0);
  const [speaker, setSpeaker] = useState<Speaker>(null);
  const [latencyMs, setLatencyMs] = useState<number | null>(null);
  const [lines, setLines] = useState<Line[]>([]);
  const [pending, setPending] = useState<PendingTurn[]>([]);
  const [stats, setStats] = useState({ heardMs: 0, clears: 0 });
  const call = useRef<WebVoiceCall | null>(null);

  useCallStream(callId ?? '', {
    enabled: callId !== null,
    after: 0,
    onEvent(event: CallEvent) {
      const text = typeof event.data.text === 'string' ? event.data.text : null;
      if (text && event.event_type === 'user_spoke') setLines((l) => [...l, { role: 'you', text }]);
      if (text && event.event_type === 'agent_spoke') setLines((l) => [...l, { role: 'agent', text }]);
    },
    onPending: setPending,
    onEnd() {
      void queryClient.invalidateQueries({ queryKey: ['calls'] });
    },
  });

  useEffect(() => {
    if (phase !== 'live') return;
    const tick = setInterval(() => call.current && setStats({ heardMs: call.current.stats.heardMs, clears: call.current.stats.clears }), 100);
    return () => clearInterval(tick);
  }, [phase]);
  // Closing the drawer hangs up: a call nobody hears should not go on.
  useEffect(() => () => call.current?.hangup(), []);

  // A turn run's turns show as soon as they are answered, before the call records them.
  const shown: Line[] = [...lines, ...pending.flatMap((t): Line[] => [{ role: 'you', text: t.user_text }, { role: 'agent', text: t.agent_text }])];

  const start = async () => {
    setError(null);
    setEnded(null);
    setLines([]);
    setLatencyMs(null);
    setPhase('connecting');
    let mic: MediaStream;
    try {
      mic = await openMicrophone();
    } catch (err) {
      setPhase('idle');
      return setError(new Error(`The microphone is not available: ${(err as Error).message}`));
    }
    try {
      const grant = await unwrap(api.POST('/api/calls/web', { body: { agent_name: agentName } }));
      setCallId(grant.call_id);
      call.current = await WebVoiceCall.start(grant, mic, {
        onState: (state, detail) => {
          if (state === 'live') return setPhase('live');
          setPhase('ended');
          setEnded(detail ?? null);
          call.current = null;
        },
        onLevel: setLevel,
        onSpeaker: setSpeaker,
        onTurnLatency: setLatencyMs,
      });
    } catch (err) {
      for (const track of mic.getTracks()) track.stop();
      setPhase('idle');
      setError(err);
    }
  };

  const close = () => {
    call.current?.hangup();
    onClose();
  };

  return (
    <Drawer opened={opened} onClose={close} position="right" size="md" title={`Talk to ${agentName}`}>
      <Stack data-testid="talk-panel" data-phase={phase} data-heard-ms={stats.heardMs} data-clears={stats.clears} data-turn-latency-ms={latencyMs ?? ''}>
        {error !== null && <ApiErrorAlert error={error} title="Could not start" />}
        {(phase === 'idle' || phase === 'connecting') && (
          <>
            <Text size="sm" c="dimmed">
              A voice call through your microphone, with the agent's own voice, turn-taking and barge-in. Use headphones or let the browser's echo cancellation work.
            </Text>
            <Button leftSection={<IconMicrophone size={16} />} loading={phase === 'connecting'} onClick={() => void start()}>
              Start talking
            </Button>
          </>
        )}
        {phase === 'live' && (
          <>
            <Group justify="space-between">
              <Badge size="lg" variant="light" color={speaker === 'agent' ? 'blue' : speaker === 'you' ? 'green' : 'gray'} data-testid="speaker">
                {SPEAKER_LABEL[speaker ?? 'none']}
              </Badge>
              <Button color="red" leftSection={<IconPhoneOff size={16} />} onClick={() => call.current?.hangup()}>
                Hang up
              </Button>
            </Group>
            <Progress aria-label="Microphone level" value={Math.min(100, level * 600)} transitionDuration={60} />
          </>
        )}
        {latencyMs !== null && (
          <Text size="sm" c="dimmed" data-testid="turn-latency">
            Last turn: {latencyMs} ms from the end of your speech to the agent's voice
          </Text>
        )}
        {phase === 'ended' && (
          <>
            {ended && <Alert color="orange">The call ended: {ended}</Alert>}
            <Group>
              {callId && (
                <Button component={Link} to={`/calls/${callId}`} variant="light" onClick={onClose}>
                  Open call page
                </Button>
              )}
              <Button variant="default" leftSection={<IconMicrophone size={16} />} onClick={() => void start()}>
                Talk again
              </Button>
            </Group>
          </>
        )}
        {shown.length > 0 && (
          <ScrollArea.Autosize mah={420}>
            <Stack gap="xs" role="list" aria-label="Live transcript">
              {shown.map((line, i) => (
                <Paper key={i} role="listitem" p="xs" withBorder bg={line.role === 'agent' ? 'var(--mantine-color-blue-light)' : undefined}>
                  <Text size="xs" c="dimmed">
                    {line.role === 'agent' ? 'Agent' : 'You'}
                  </Text>
                  <Text size="sm">{line.text}</Text>
                </Paper>
              ))}
            </Stack>
          </ScrollArea.Autosize>
        )}
      </Stack>
    </Drawer>
  );
}
