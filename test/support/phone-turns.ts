/**
 * Inbound phone calls through the Twilio fake, and turns on them: the caller asks `call X turn N`
 * (the Deepgram fake transcribes it so) and waits until it has heard the agent's whole answer in
 * audio. Suites pair it with an LLM fake that answers `Answer XN.`.
 */
import type { FakeDeepgram } from '../fakes/deepgram-server';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import type { FakeTwilio } from '../fakes/twilio-server';
import path from 'node:path';
import { eventually } from './fixtures';
import type { Harness } from './harness';

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
/** The TTS fakes' audio per character of text. */
const MS_PER_CHAR = 60;

export interface PhoneCall {
  caller: TwilioCaller;
  callId: string;
}

export interface PhoneTurnsOptions {
  /** Read at each call: suites assign theirs in beforeAll. */
  harness: () => Harness;
  twilio: () => FakeTwilio;
  deepgram: () => FakeDeepgram;
  /** The voice agent answering the number, and the number. */
  agent: string;
  ourNumber: string;
  greeting: string;
}

export function phoneTurns(opts: PhoneTurnsOptions) {
  const heardMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;

  /** A caller dials in and hears the greeting. */
  async function inboundCall(from: string): Promise<PhoneCall> {
    const fake = await opts.twilio().simulateInbound({ webhookUrl: `${opts.harness().api.url}/telephony/twilio/inbound/${opts.agent}`, from, to: opts.ourNumber });
    const verb = fake.verbs![0]!;
    if (verb.verb !== 'Connect') throw new Error(`expected <Connect>, got ${fake.twiml}`);
    const caller = fake.caller!;
    await eventually(async () => heardMs(caller) >= (opts.greeting.length - 2) * MS_PER_CHAR, 20_000, 20);
    return { caller, callId: verb.stream.parameters.call_id! };
  }

  /** The caller asks (`call X turn N` for label `XN`) and hears the answer (`Answer XN.`) to its end. */
  async function ask(call: PhoneCall, label: string): Promise<void> {
    opts.deepgram().script([`Question for call ${label[0]} turn ${label.slice(1)}.`]);
    const before = heardMs(call.caller);
    await call.caller.say(HELLO_WAV);
    await eventually(async () => heardMs(call.caller) >= before + (`Answer ${label}.`.length - 2) * MS_PER_CHAR, 20_000, 20);
    // …to its end: the agent's audio has stopped for a moment.
    let last = -1;
    await eventually(async () => {
      const now = heardMs(call.caller);
      const still = now === last;
      last = now;
      return still;
    }, 10_000, 300);
  }

  return { inboundCall, ask, heardMs, MS_PER_CHAR };
}
