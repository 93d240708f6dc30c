/** Types of the fake Twilio (twilio-server.ts): what tests script and inspect, and the per-call state the simulation keeps. */
import type { HeardHoldFrame } from './hold-audio-loop';
export type { HeardHoldFrame };
import type { TwilioCaller } from './twilio-caller';
import type { TwimlDial, TwimlStream, TwimlVerb } from './twilio-twiml';
import type { AmdScript } from './twilio-amd';

export type CallOutcome = 'answer' | 'busy' | 'no-answer' | 'failed';

export interface OutcomeScript {
  outcome: CallOutcome;
  /** How long the phone rings before the outcome (default: the server's ringMs). */
  ringMs?: number;
  /** Who picks up, for answering-machine detection (twilio-amd.ts); default a human. */
  amd?: AmdScript;
}

/** How a transfer's dialled party behaves; `talkMs`: how long an answered transfer talks before hanging up. */
export interface DialScript {
  outcome: CallOutcome;
  ringMs?: number;
  talkMs?: number;
}

/** A `<Dial>` the call executed, and what the dialled party did. */
export interface FakeDialRecord extends TwimlDial {
  outcome: CallOutcome;
  dialCallSid: string;
  atMs: number;
}

/** A `<Conference>` of the fake: who is in it now, and who was. */
export interface FakeConference {
  name: string;
  /** CallSids in the conference now. */
  participants: string[];
  /** Every join, in order. */
  joins: Array<{ callSid: string; atMs: number }>;
  /** When a participant with startConferenceOnEnter joined (the hold audio stops), or null. */
  startedAtMs: number | null;
  endedAtMs: number | null;
}

export interface CallbackDelivery {
  kind: 'status' | 'twiml' | 'stream-status' | 'inbound' | 'dial-status' | 'dial-action' | 'amd' | 'conference-wait' | 'play';
  url: string;
  method: string;
  params: Record<string, string>;
  signature: string;
  atMs: number;
  /** HTTP status of our platform's answer; 0 when the request failed. */
  status: number;
  body: string;
  error?: string;
}

export interface FakeCallRecord {
  sid: string;
  accountSid: string;
  direction: 'outbound-api' | 'inbound';
  to: string;
  from: string;
  /** Current Twilio status (queued, ringing, in-progress, completed, busy, no-answer, canceled, failed). */
  status: string;
  /** Form fields of the create request (outbound) — repeated fields as arrays. */
  params: Record<string, string | string[]>;
  statusCallbackEvents: string[];
  callbacks: CallbackDelivery[];
  twiml?: string;
  verbs?: TwimlVerb[];
  stream?: TwimlStream;
  /** Texts of <Say> verbs executed. */
  said: string[];
  /** `<Dial>`s executed (transfers), in order. */
  dials: FakeDialRecord[];
  /** TwiML documents the call was redirected to by a call update (`Twiml`, or the document `Url` answered), in order. */
  redirects: string[];
  /** Hold audio heard while waiting in a conference, frame by frame (the conference's `waitUrl` `<Play>`). */
  held: HeardHoldFrame[];
  caller?: TwilioCaller;
  /** Problems Twilio would report in its debugger (bad TwiML, webhook failures, stream errors). */
  errors: string[];
  createdAtMs: number;
  answeredAtMs?: number;
  endedAtMs?: number;
  durationSecs?: number;
  /** Resolves when the call has ended and the final status callback has been delivered. */
  ended: Promise<FakeCallRecord>;
}

export interface RecordedApiRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  params: Record<string, string | string[]>;
  status: number;
}

export interface FakeTwilioOptions {
  accountSid: string;
  authToken: string;
  /** Default ring time before an outcome (ms). Short by default so tests run fast. */
  ringMs?: number;
  /** Passed to simulated callers; only for unit tests of the fakes. */
  callerSpeed?: number;
  /** Keep received media messages in each caller's events (default true). */
  keepMediaEvents?: boolean;
}

export interface SimulateInboundOptions {
  /** The number's voice URL, e.g. {public_base_url}/telephony/twilio/inbound/<agent_name>. */
  webhookUrl: string;
  from: string;
  to: string;
  /** Signing token; defaults to the fake's auth token. */
  authToken?: string;
  method?: 'POST' | 'GET';
  /** The number's status callback URL (receives `completed`). */
  statusCallbackUrl?: string;
}

export interface FakeTwilio {
  apiBaseUrl: string;
  accountSid: string;
  authToken: string;
  calls: FakeCallRecord[];
  requests: RecordedApiRequest[];
  /** Outcome of the next outbound calls to `to` (or to any number when `to` is omitted). */
  setOutcome(outcome: CallOutcome | OutcomeScript, to?: string): void;
  /** How the party at `to` (number or SIP URI) answers a `<Dial>` (default: answers, talks 300 ms). */
  setDialOutcome(to: string, script: CallOutcome | DialScript): void;
  /** Resolves when the call has answered and connected its stream (or ended without one). */
  simulateInbound(opts: SimulateInboundOptions): Promise<FakeCallRecord>;
  call(sid: string): FakeCallRecord | undefined;
  /** A `<Conference>` by name (warm transfers: `warm-<call id>`). */
  conference(name: string): FakeConference | undefined;
  lastCaller(): TwilioCaller | undefined;
  /** Resolves with the next caller that connects to a stream. */
  nextCaller(timeoutMs?: number): Promise<TwilioCaller>;
  stop(): Promise<void>;
}

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
}

/** What the simulation needs besides the public record. */
export interface CallState {
  record: FakeCallRecord;
  authToken: string;
  statusCallback?: string;
  statusCallbackMethod: string;
  timeLimitSecs?: number;
  sequence: number;
  hangupRequested: Deferred<void>;
  hungUp: boolean;
  settled: Deferred<void>;
  ended: Deferred<FakeCallRecord>;
  /** TwiML of a call update, run in place of the current document. */
  redirect?: TwimlVerb[];
  /** How the destination behaves (outbound calls); a human answering when unset. */
  script?: OutcomeScript;
  /** Wakes a verb that waits (a conference) when a call update or a hang-up comes. */
  wake?: () => void;
}

/** The fake's shared state, handed to the REST API and the call simulation. */
export interface FakeTwilioContext {
  opts: FakeTwilioOptions;
  accountSid: string;
  authToken: string;
  defaultRingMs: number;
  calls: FakeCallRecord[];
  states: Map<string, CallState>;
  requests: RecordedApiRequest[];
  outcomes: Map<string, OutcomeScript>;
  dialOutcomes: Map<string, DialScript>;
  conferences: Map<string, FakeConference & { ended: Deferred<void>; started: Deferred<void> }>;
  defaultOutcome: OutcomeScript;
  callerWaiters: Array<(c: TwilioCaller) => void>;
  lastCaller?: TwilioCaller;
  stopping: boolean;
}
