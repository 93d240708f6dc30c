/**
 * Follows a call while it runs: GET /api/calls/{id}/events/stream read with fetch (so the bearer
 * token goes in the Authorization header, which EventSource cannot send), parsed by
 * eventsource-parser. A dropped connection is resumed after the last event received.
 *
 * `pending` messages carry the turns a gateway's turn run has answered but the call has not yet
 * recorded (the whole set each time): shown at once, they keep a live transcript live under load.
 */
import { useEffect, useRef } from 'react';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { api } from '../api/client';
import type { CallEvent } from '../api/types';

const RECONNECT_MS = 2000;

/** A turn answered by the gateway, not recorded yet (replaced by its events). */
export interface PendingTurn {
  utterance_seq: number;
  user_text: string;
  agent_text: string;
  timestamp: string;
}

/** Pending turns as the events they will become, for views built from events (ids below 0: never a real event's). */
export function pendingEvents(callId: string, turns: PendingTurn[]): CallEvent[] {
  return turns.flatMap((t): CallEvent[] => [
    { id: -2 * t.utterance_seq, call_id: callId, event_type: 'user_spoke', timestamp: t.timestamp, data: { text: t.user_text } },
    { id: -2 * t.utterance_seq + 1, call_id: callId, event_type: 'agent_spoke', timestamp: t.timestamp, data: { text: t.agent_text } },
  ]);
}

interface StreamHandlers {
  enabled: boolean;
  after: number;
  onEvent(event: CallEvent): void;
  onPending?(turns: PendingTurn[]): void;
  onEnd(): void;
}

export function useCallStream(callId: string, options: StreamHandlers) {
  const handlers = useRef(options);
  handlers.current = options;

  useEffect(() => {
    if (!options.enabled) return;
    const abort = new AbortController();
    let lastSeq = handlers.current.after;
    let ended = false;

    const follow = async () => {
      while (!ended && !abort.signal.aborted) {
        try {
          const { data, response } = await api.GET('/api/calls/{call_id}/events/stream', {
            params: { path: { call_id: callId }, query: { after: lastSeq } },
            parseAs: 'stream',
            signal: abort.signal,
          });
          if (!response.ok || !data) {
            // 4xx will not get better by retrying (the session handler deals with 401).
            if (response.status < 500) return;
          } else {
            // A reader rather than `for await`: Safari cannot iterate streams.
            const reader = data.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
            for (let next = await reader.read(); !next.done; next = await reader.read()) {
              const message = next.value;
              if (message.event === 'end') {
                ended = true;
                handlers.current.onEnd();
                break;
              }
              if (message.event === 'pending') {
                handlers.current.onPending?.((JSON.parse(message.data) as { turns: PendingTurn[] }).turns);
                continue;
              }
              const event = JSON.parse(message.data) as CallEvent;
              lastSeq = event.id;
              handlers.current.onEvent(event);
            }
          }
        } catch {
          if (abort.signal.aborted) return;
        }
        if (!ended) await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      }
    };
    void follow();
    return () => abort.abort();
    // Reconnecting after each event would re-send history: `after` is read once per subscription.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [callId, options.enabled]);
}
