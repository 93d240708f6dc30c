/**
 * The media gateway's side of the call workflow's contract (its activities), with each result
 * released by the caller of this module: for tests and history recordings that must decide which
 * result the workflow sees first — the real gateway cannot be made to lose a race on purpose.
 * Run it in a worker on a gateway task queue of the test's own.
 */
import type { ArmedTurnRequest, ArmedTurnResult, GatewayActivities, MediaSessionResult } from '../../workflows/call-definitions';

export interface ArmedEntry {
  req: ArmedTurnRequest;
  resolve: (r: ArmedTurnResult) => void;
  /** The caller used this turn: a disarm no longer takes it back. */
  taken: boolean;
}

export interface GatewayStandInOptions {
  /** Every `speak` (the greeting) reports only once this settles. */
  speechReport?: Promise<void>;
}

const UNTAKEN: ArmedTurnResult = { utterance: null, thought: null, failure: null, events: [] };

export function gatewayActivitiesStandIn(options: GatewayStandInOptions = {}) {
  let hangup!: (r: MediaSessionResult) => void;
  const session = new Promise<MediaSessionResult>((resolve) => (hangup = resolve));
  const armed: ArmedEntry[] = [];
  const disarmed: string[] = [];
  const activities: GatewayActivities = {
    speak: async (req) => {
      await options.speechReport;
      return { heardText: req.text, interrupted: false, characters: req.text.length, events: [] };
    },
    voiceTurn: async () => ({ content: '', toolCalls: [], usage: { prompt_tokens: 0, completion_tokens: 0 }, ttfbMs: null, heardText: '', interrupted: true, characters: 0, events: [] }),
    sendDtmf: async () => ({ method: 'inband', playedMs: 0, events: [] }),
    armedTurn: (req) => new Promise((resolve) => armed.push({ req, resolve, taken: false })),
    disarmTurn: async ({ armId }) => {
      disarmed.push(armId);
      armed.find((x) => x.req.armId === armId && !x.taken)?.resolve(UNTAKEN);
    },
    mediaSession: () => session,
    endMedia: async () => undefined,
    probe: async () => ({ holds: true }),
    voicemail: async () => undefined,
  };
  /** Ends every activity still running, so the worker can shut down even after a failed assertion. */
  const release = () => {
    hangup({ reason: 'hangup', events: [] });
    for (const a of armed) a.resolve(UNTAKEN);
  };
  return { activities, armed, disarmed, hangup, release };
}

/** What the gateway reports for an armed turn the caller used: their words and the reply they heard. */
export function takenTurn(said: string, reply: string, saidAgoMs = 1500): ArmedTurnResult {
  return {
    utterance: { text: said, duringAgentSpeech: false, seq: 1, events: [], timestampMs: Date.now() - saidAgoMs },
    thought: {
      content: reply,
      toolCalls: [],
      usage: { prompt_tokens: 40, completion_tokens: 6 },
      ttfbMs: 5,
      heardText: reply,
      interrupted: false,
      characters: reply.length,
      events: [],
    },
    failure: null,
    events: [],
  };
}
