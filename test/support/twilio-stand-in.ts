/**
 * A small stand-in for the platform, reduced to its Twilio-facing parts, for the Twilio adapter's
 * tests (twilio-adapter.test.ts): an Express app for the webhooks (signature check, TwiML, status
 * callbacks) and a WebSocket server for the media stream, using the adapter modules the way the
 * API and the media gateway do.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { WebSocketServer, type WebSocket } from 'ws';
import { encodeMulaw } from '../../src/audio/g711';
import { markMessage, mediaMessage, parseTwilioStreamMessage, type TwilioStreamMessage } from '../../src/providers/telephony/twilio/media-messages';
import { validateTwilioHttpRequest, validateTwilioWebSocketUpgrade } from '../../src/providers/telephony/twilio/signature';
import { parseTwilioStatusCallback } from '../../src/providers/telephony/twilio/status';
import { connectStreamTwiml, rejectTwiml, sayAndHangupTwiml } from '../../src/providers/telephony/twilio/twiml';
import { CALL_STATUS_OF, type CallTransition, type StatusUpdate } from '../../src/providers/telephony/types';
import { tonePcm } from '../fakes/twilio-caller';

/** A decoded status callback with the call status it moves a call to. */
export type ProviderStatusUpdate = StatusUpdate & { transition: CallTransition | null };

export type InboundAnswer = 'stream' | 'busy' | 'say';

/** What the platform would do, reduced to the Twilio-facing parts. */
export interface StandIn {
  publicBaseUrl: string;
  gatewayUrl: string;
  statusUpdates: Map<string, ProviderStatusUpdate[]>;
  rejectedWebhooks: string[];
  streams: Array<{ messages: TwilioStreamMessage[]; parseErrors: string[]; closedAtMs?: number }>;
  /** How the gateway behaves once the stream starts: 'greet' plays a tone + mark then hangs up. */
  gatewayMode: 'greet' | 'hold';
  inboundAnswer: InboundAnswer;
  stop(): Promise<void>;
}

/** Listens on a free port of 127.0.0.1; the port. */
export async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Starts the stand-in; webhooks and stream upgrades are checked against `authToken`. */
export async function startStandIn(authToken: string): Promise<StandIn> {
  const app = express();
  const apiServer = http.createServer(app);
  const apiPort = await listen(apiServer);
  const gatewayServer = http.createServer();
  const gatewayPort = await listen(gatewayServer);

  const standIn: StandIn = {
    publicBaseUrl: `http://127.0.0.1:${apiPort}`,
    gatewayUrl: `ws://127.0.0.1:${gatewayPort}`,
    statusUpdates: new Map(),
    rejectedWebhooks: [],
    streams: [],
    gatewayMode: 'greet',
    inboundAnswer: 'stream',
    stop: async () => {
      wss.close();
      for (const s of [apiServer, gatewayServer]) {
        s.closeAllConnections();
        await new Promise((r) => s.close(r));
      }
    },
  };

  app.use('/telephony/twilio', express.urlencoded({ extended: false }));
  app.use('/telephony/twilio', (req, res, next) => {
    if (validateTwilioHttpRequest(req, { authToken, publicBaseUrl: standIn.publicBaseUrl })) return next();
    standIn.rejectedWebhooks.push(req.originalUrl);
    res.status(403).json({ detail: 'Invalid Twilio signature' });
  });
  const streamTwiml = (callId: string) =>
    connectStreamTwiml({
      streamUrl: `${standIn.gatewayUrl}/media/twilio/${callId}`,
      parameters: { call_id: callId, stream_token: `tok-${callId}` },
    });
  app.post('/telephony/twilio/twiml/:callId', (req, res) => {
    res.type('text/xml').send(streamTwiml(req.params.callId));
  });
  app.post('/telephony/twilio/status/:callId', (req, res) => {
    const update = parseTwilioStatusCallback(req.body);
    if (!update) return void res.status(400).json({ detail: 'not a status callback' });
    const list = standIn.statusUpdates.get(req.params.callId) ?? [];
    list.push({ ...update, transition: update.status && CALL_STATUS_OF[update.status] });
    standIn.statusUpdates.set(req.params.callId, list);
    res.status(204).end();
  });
  app.post('/telephony/twilio/inbound/:agent', (req, res) => {
    if (standIn.inboundAnswer === 'busy') return void res.type('text/xml').send(rejectTwiml('busy'));
    if (standIn.inboundAnswer === 'say') return void res.type('text/xml').send(sayAndHangupTwiml('All our agents are busy. Goodbye.'));
    res.type('text/xml').send(streamTwiml(`inbound-${req.params.agent}-${String(req.body.CallSid)}`));
  });

  const wss = new WebSocketServer({ noServer: true });
  gatewayServer.on('upgrade', (req, socket, head) => {
    if (!validateTwilioWebSocketUpgrade(authToken, req.headers, `${standIn.gatewayUrl}${req.url}`)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => handleStream(ws));
  });

  function handleStream(ws: WebSocket) {
    const record = { messages: [] as TwilioStreamMessage[], parseErrors: [] as string[], closedAtMs: undefined as number | undefined };
    standIn.streams.push(record);
    ws.on('close', () => (record.closedAtMs = Date.now()));
    ws.on('message', (data) => {
      const parsed = parseTwilioStreamMessage(data);
      if (!parsed.ok) return void record.parseErrors.push(parsed.error);
      const m = parsed.message;
      record.messages.push(m);
      if (m.event === 'start' && standIn.gatewayMode === 'greet') {
        const greeting = encodeMulaw(tonePcm(200));
        for (let i = 0; i < greeting.length; i += 160) ws.send(mediaMessage(m.streamSid, greeting.subarray(i, i + 160)));
        ws.send(markMessage(m.streamSid, 'greeting-end'));
      }
      if (m.event === 'mark' && m.mark.name === 'greeting-end') ws.close(1000);
    });
  }

  return standIn;
}
