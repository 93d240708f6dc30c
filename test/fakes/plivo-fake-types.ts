/** The records and options of the fake Plivo (./plivo-server.ts). */
import type { HeardHoldFrame } from './hold-audio-loop';
export type { HeardHoldFrame };
import type { PlivoContentType } from '../../src/providers/telephony/plivo/media-messages';
import type { PlivoCaller } from './plivo-caller';
import type { Deferred } from './plivo-wire';

export type CallOutcome = 'answer' | 'busy' | 'no-answer' | 'failed';

export interface OutcomeScript {
  outcome: CallOutcome;
  ringMs?: number;
  /** Who picks up, for machine detection (plivo-amd.ts); default a human. */
  amd?: PlivoAmdScript;
}

export interface PlivoAmdScript {
  machine: boolean;
  /** When Plivo has decided, ms after the answer (bounded by machine_detection_time). */
  decidedMs: number;
}

export interface CallbackDelivery {
  kind: 'ring' | 'answer' | 'hangup' | 'stream-status' | 'transfer' | 'dial-callback' | 'dial-action' | 'machine-detection' | 'conference-wait' | 'play';
  url: string;
  method: string;
  params: Record<string, string>;
  signature: string;
  nonce: string;
  atMs: number;
  status: number;
  body: string;
  error?: string;
}

/** A `<Conference>` of the fake (plivo-conference.ts): who is in it now, and who was. */
export interface FakePlivoConference {
  name: string;
  /** CallUUIDs in the conference now. */
  members: string[];
  /** Every entry, in order. */
  joins: Array<{ callUuid: string; atMs: number }>;
  /** When a member with startConferenceOnEnter entered (the wait sound stops), or null. */
  startedAtMs: number | null;
  endedAtMs: number | null;
}

export interface FakeStream {
  url: string;
  contentType: PlivoContentType;
  extraHeaders: string;
  bidirectional: boolean;
  keepCallAlive: boolean;
  statusCallbackUrl?: string;
}

export interface FakePlivoCall {
  callUuid: string;
  /** The API request's id (outbound); differs from callUuid, as with Plivo. */
  requestUuid?: string;
  direction: 'outbound' | 'inbound';
  to: string;
  from: string;
  /** queued, ringing, in-progress, completed, busy, no-answer, timeout, cancel, failed. */
  status: string;
  /** JSON body of the create request (outbound). */
  params: Record<string, unknown>;
  callbacks: CallbackDelivery[];
  xml?: string;
  stream?: FakeStream;
  said: string[];
  /** `<Dial>`s executed (transfers): the number or SIP user dialled, the action and callback URLs, the outcome played. */
  dials: Array<{ to: string; action?: string; callbackUrl?: string; outcome: CallOutcome }>;
  /** aleg_url of each Transfer Call API request. */
  transfers: string[];
  /** The conferences the call entered, in order. */
  conferences: string[];
  /** The wait sound heard while alone in a conference not started, frame by frame. */
  held: HeardHoldFrame[];
  caller?: PlivoCaller;
  hangupCause?: string;
  /** How the call was ended: by the API (DELETE), the caller, the platform closing the stream… */
  hangupSource?: 'API Request' | 'Caller' | 'Callee' | 'Carrier' | 'Plivo' | 'Error';
  errors: string[];
  createdAtMs: number;
  answeredAtMs?: number;
  endedAtMs?: number;
  durationSecs?: number;
  ended: Promise<FakePlivoCall>;
}

export interface RecordedApiRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: unknown;
  status: number;
}

export interface FakePlivoOptions {
  authId: string;
  authToken: string;
  ringMs?: number;
  callerSpeed?: number;
  keepMediaEvents?: boolean;
}

export interface SimulateInboundOptions {
  /** The number's answer URL, e.g. {public_base_url}/telephony/plivo/inbound/<agent_name>. */
  answerUrl: string;
  from: string;
  to: string;
  /** Signing token; defaults to the fake's auth token (pass another to forge). */
  authToken?: string;
  /** Send no signature at all. */
  unsigned?: boolean;
  /** The application's hangup URL (receives the final status). */
  hangupUrl?: string;
}

export interface FakePlivo {
  apiBaseUrl: string;
  authId: string;
  authToken: string;
  calls: FakePlivoCall[];
  requests: RecordedApiRequest[];
  setOutcome(outcome: CallOutcome | OutcomeScript, to?: string): void;
  /**
   * While on, a stream that drops without a WebSocket close handshake (code 1006: the peer
   * process died, or the network between) does not end its call: the call stays up, silent,
   * until it is hung up through the API or its time limit — what keepCallAlive does when Plivo
   * has not noticed the peer is gone.
   */
  holdDroppedStreams(on: boolean): void;
  /** How the party at `to` (number, + optional, or SIP URI) answers a `<Dial>` (default: answers). */
  setDialOutcome(to: string, outcome: CallOutcome): void;
  /** Resolves when the call has connected its stream (or ended without one). */
  simulateInbound(opts: SimulateInboundOptions): Promise<FakePlivoCall>;
  call(callUuid: string): FakePlivoCall | undefined;
  conference(name: string): FakePlivoConference | undefined;
  callByRequest(requestUuid: string): FakePlivoCall | undefined;
  lastCaller(): PlivoCaller | undefined;
  nextCaller(timeoutMs?: number): Promise<PlivoCaller>;
  stop(): Promise<void>;
}


/** The fake's own state of one call (not part of its interface). */
export interface CallState {
  record: FakePlivoCall;
  authToken: string;
  unsigned: boolean;
  answerUrl: string;
  ringUrl?: string;
  hangupUrl?: string;
  ringTimeoutSecs: number;
  timeLimitSecs?: number;
  hangupRequested: Deferred<void>;
  /** Set while the call is in a `<Conference>`: moves it out (a Transfer Call API request). */
  wake?: () => void;
  hungUp: boolean;
  settled: Deferred<void>;
  ended: Deferred<FakePlivoCall>;
}
