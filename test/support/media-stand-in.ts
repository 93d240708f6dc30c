/**
 * A stand-in for the media gateway's Twilio endpoint, for API tests that need a stream to connect
 * without running the audio pipeline: it accepts the Media Streams WebSocket Twilio (the fake)
 * opens, records the `start` message (with the TwiML's parameters), and holds the socket until
 * the test hangs up — closing it is what ends a Twilio `<Connect><Stream>` call.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * The stand-in publishes no gateway presence (it has no database), so the API must admit calls to
 * it without asking presence: spread this into the harness env of tests that use it.
 */
export const STAND_IN_ENV = { GATEWAY_ADMISSION: 'off' } as const;

export interface StandInStream {
  path: string;
  callSid: string;
  customParameters: Record<string, string>;
  socket: WebSocket;
}

export interface MediaStandIn {
  /** ws://127.0.0.1:<port>, to use as GATEWAY_PUBLIC_URL. */
  url: string;
  streams: StandInStream[];
  /** The stream whose parameters carry this call id, once it has started. */
  streamFor(callId: string): StandInStream | undefined;
  /** Closes the call's stream (the fake then completes the call). */
  hangup(callId: string): void;
  stop(): Promise<void>;
}

export async function startMediaStandIn(): Promise<MediaStandIn> {
  const server = http.createServer();
  const wss = new WebSocketServer({ server });
  const streams: StandInStream[] = [];
  wss.on('connection', (socket, req) => {
    socket.on('message', (data) => {
      let message: any;
      try {
        message = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (message.event === 'start') {
        streams.push({ path: req.url ?? '', callSid: message.start.callSid, customParameters: message.start.customParameters ?? {}, socket });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const streamFor = (callId: string) => streams.find((s) => s.customParameters.call_id === callId);
  return {
    url: `ws://127.0.0.1:${port}`,
    streams,
    streamFor,
    hangup(callId) {
      streamFor(callId)?.socket.close(1000);
    },
    async stop() {
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * Callees who answer, talk for `afterMs` and hang up: every stream the stand-in holds is hung up
 * that long after it was first seen. Returns the timer; clear it when the test ends.
 */
export function hangUpAnsweredAfter(standIn: MediaStandIn, afterMs: number): NodeJS.Timeout {
  const answeredAt = new Map<string, number>();
  return setInterval(() => {
    for (const s of standIn.streams) {
      const id = s.customParameters.call_id;
      if (!answeredAt.has(id)) answeredAt.set(id, Date.now());
      else if (Date.now() - answeredAt.get(id)! > afterMs) standIn.hangup(id);
    }
  }, 50);
}
