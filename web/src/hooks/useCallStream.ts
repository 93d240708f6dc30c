/**
 * Follows a call while it runs: GET /api/calls/{id}/events/stream read with fetch (so the bearer
 * token goes in the Authorization header, which EventSource cannot send), parsed by
 * eventsource-parser. A dropped connection is resumed after the last event received.
 */
import { useEffect, useRef } from 'react';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { api } from '../api/client';
import type { CallEvent } from '../api/types';

const RECONNECT_MS = 2000;

export function useCallStream(callId: string, options: { enabled: boolean; after: number; onEvent(event: CallEvent): void; onEnd(): void }) {
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
