/**
 * How the agent speaks and thinks on a call. Text calls (test channel, client-managed calls) run
 * the LLM as an activity on the workflow's own task queue; voice calls run speech and LLM→TTS
 * turns on the media gateway instance that holds the call's audio socket. Workflow code.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  sleep,
  TimeoutFailure,
  type RetryPolicy,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { AnsweredByVerdict } from '../src/voicemail/settings';
import {
  GATEWAY_PROBE_TIMEOUT_SECS,
  type ArmedTurnRequest,
  type ArmedTurnResult,
  type CallWorkflowInput,
  type GatewayActivities,
  type GatewayEvent,
  type LlmTurnRequest,
  type LlmTurnResult,
  type MediaSessionResult,
  type EndReason,
  type SendDtmfResult,
} from './call-definitions';

export interface Spoken {
  heardText: string;
  interrupted: boolean;
  characters: number;
  events: GatewayEvent[];
}

export type Thought = LlmTurnResult & Spoken;

/** The LLM could not be reached after the retry policy gave up, or refused the request. */
export class LlmUnavailable extends Error {}
/** The media gateway holding the call is gone (crashed, or lost the socket). */
export class GatewayLost extends Error {}
/** Text-to-speech could not be produced (provider down or not configured). */
export class SpeechUnavailable extends Error {}

export interface CallChannel {
  say(text: string, utteranceId: string): Promise<Spoken>;
  think(request: LlmTurnRequest, utteranceId: string): Promise<Thought>;
}

type RetryOptions = CallWorkflowInput['options'];

function llmRetry(options: RetryOptions): RetryPolicy {
  return {
    initialInterval: options.llmRetryInitialSecs * 1000,
    backoffCoefficient: 2,
    maximumInterval: '10s',
    maximumAttempts: options.llmRetryMaxAttempts,
    nonRetryableErrorTypes: ['LlmRequestRejected', 'CallNotOnGateway', 'GatewayShutdown', 'SpeechUnavailable'],
  };
}

const causeMessage = (err: ActivityFailure) => err.cause?.message ?? err.message;

export class TextChannel implements CallChannel {
  private readonly llm: Activities['llmTurn'];

  constructor(options: RetryOptions) {
    ({ llmTurn: this.llm } = proxyActivities<Activities>({ startToCloseTimeout: '60s', heartbeatTimeout: '5s', retry: llmRetry(options) }));
  }

  async say(text: string): Promise<Spoken> {
    return { heardText: text, interrupted: false, characters: 0, events: [] };
  }

  async think(request: LlmTurnRequest): Promise<Thought> {
    try {
      const result = await this.llm(request);
      return { ...result, heardText: result.content, interrupted: false, characters: 0, events: [] };
    } catch (err) {
      if (err instanceof ActivityFailure) throw new LlmUnavailable(`LLM request failed: ${causeMessage(err)}`);
      throw err;
    }
  }
}

// Room for the gateway's pollers to come back after a Temporal outage before a task counts as
// never picked up (a dead gateway is found sooner, by the watchdog).
const SCHEDULE_MARGIN_SECS = 30;

/**
 * The media gateway holding a voice call. How the workflow knows the gateway lives
 * (docs/call-lifecycle.md): gateway activities carry no heartbeat; the workers' watchdog reports a
 * gateway without presence, the workflow probes it, and `abandon()` ends what waits on it.
 */

export class VoiceChannel implements CallChannel {
  private readonly speech: GatewayActivities;
  private readonly turns: GatewayActivities;
  private readonly armed: GatewayActivities;
  private readonly retryTurns: GatewayActivities | null;
  private readonly session: GatewayActivities;
  private readonly prober: GatewayActivities;
  /** Every gateway activity runs in it: cancelling it releases them all (abandon). */
  private readonly scope = new CancellationScope();
  private lost: string | null = null;

  constructor(
    private readonly callId: string,
    taskQueue: string,
    private readonly options: RetryOptions,
  ) {
    const common = {
      taskQueue,
      // A Temporal restart must not fail calls whose gateway polls again a moment later.
      scheduleToStartTimeout: (options.gatewayOutageSecs + SCHEDULE_MARGIN_SECS) * 1000,
      // A long reply may play for minutes; liveness comes from presence, not from a timeout.
      startToCloseTimeout: '15m' as const,
    };
    this.speech = proxyActivities<GatewayActivities>({ ...common, retry: { maximumAttempts: 1 } });
    this.turns = proxyActivities<GatewayActivities>({ ...common, retry: llmRetry(options) });
    // An armed turn waits for the caller as long as the call lasts.
    this.armed = proxyActivities<GatewayActivities>({ ...common, startToCloseTimeout: '24h', retry: { maximumAttempts: 1 } });
    this.session = this.armed;
    this.prober = proxyActivities<GatewayActivities>({
      taskQueue,
      scheduleToStartTimeout: GATEWAY_PROBE_TIMEOUT_SECS * 1000,
      startToCloseTimeout: GATEWAY_PROBE_TIMEOUT_SECS * 1000,
      retry: { maximumAttempts: 1 },
    });
    // An armed turn's LLM attempt counts as the first of the retry policy's attempts.
    this.retryTurns =
      options.llmRetryMaxAttempts > 1 ? proxyActivities<GatewayActivities>({ ...common, retry: { ...llmRetry(options), maximumAttempts: options.llmRetryMaxAttempts - 1 } }) : null;
  }

  /** Runs a gateway activity inside the channel's scope (see abandon). */
  private run<T>(fn: () => Promise<T>): Promise<T> {
    return this.scope.run(fn);
  }

  /** The media session: runs from stream connect until the stream closes. */
  mediaSession(): Promise<MediaSessionResult> {
    return this.run(() => this.session.mediaSession({ callId: this.callId }));
  }

  /** Lets the agent's last words play, then closes the stream. */
  async endMedia(reason: EndReason): Promise<void> {
    await this.run(() => this.speech.endMedia({ callId: this.callId, reason }));
  }

  /** The vendor found a machine: the gateway stops speaking and hangs up or leaves the message. */
  async voicemail(verdict: AnsweredByVerdict): Promise<void> {
    await this.run(() => this.speech.voicemail({ callId: this.callId, verdict }));
  }

  /** Does the gateway live and hold the call? False when it does not answer in time. */
  async probe(): Promise<boolean> {
    try {
      return (await this.prober.probe({ callId: this.callId })).holds === true;
    } catch {
      return false;
    }
  }

  /** The gateway is gone: everything waiting on it fails with GatewayLost. */
  abandon(reason: string): void {
    this.lost ??= reason;
    this.scope.cancel();
  }

  get isAbandoned(): boolean {
    return this.lost !== null;
  }

  /** Hands the gateway the next turn; resolves when the caller spoke (or it was disarmed). */
  async arm(request: ArmedTurnRequest): Promise<ArmedTurnResult> {
    try {
      return await this.run(() => this.armed.armedTurn(request));
    } catch (err) {
      throw this.translate(err);
    }
  }

  async disarm(armId: string): Promise<void> {
    try {
      await this.run(() => this.speech.disarmTurn({ callId: this.callId, armId }));
    } catch (err) {
      throw this.translate(err);
    }
  }

  /** The LLM request of an armed turn failed on the gateway: the remaining attempts, or its error. */
  async retryArmed(request: LlmTurnRequest, utteranceId: string, failure: { type: string; message: string }): Promise<Thought> {
    const message = `LLM request failed: ${failure.message}`;
    if (failure.type === 'SpeechUnavailable') throw new SpeechUnavailable(`speech synthesis failed: ${failure.message}`);
    if (failure.type === 'CallNotOnGateway' || failure.type === 'GatewayShutdown') throw new GatewayLost(`media gateway lost: ${failure.message}`);
    if (failure.type === 'LlmRequestRejected' || !this.retryTurns) throw new LlmUnavailable(message);
    // The policy's backoff before its second attempt.
    await sleep(this.options.llmRetryInitialSecs * 1000);
    try {
      return await this.run(() => this.retryTurns!.voiceTurn({ ...request, utteranceId }));
    } catch (err) {
      throw this.translate(err);
    }
  }

  /** send_dtmf: the keys as tones on the line; resolves once they have played. */
  async sendDtmf(digits: string, utteranceId: string): Promise<SendDtmfResult> {
    try {
      return await this.run(() => this.speech.sendDtmf({ callId: this.callId, utteranceId, digits }));
    } catch (err) {
      throw this.translate(err);
    }
  }

  async say(text: string, utteranceId: string): Promise<Spoken> {
    try {
      return await this.run(() => this.speech.speak({ callId: this.callId, utteranceId, text }));
    } catch (err) {
      throw this.translate(err);
    }
  }

  async think(request: LlmTurnRequest, utteranceId: string): Promise<Thought> {
    try {
      return await this.run(() => this.turns.voiceTurn({ ...request, utteranceId }));
    } catch (err) {
      throw this.translate(err);
    }
  }

  private translate(err: unknown): unknown {
    // Released by abandon(): the gateway was probed and did not answer.
    if (this.lost !== null && isCancellation(err)) return new GatewayLost(`media gateway lost: ${this.lost}`);
    if (!(err instanceof ActivityFailure)) return err;
    const cause = err.cause;
    const type = cause instanceof ApplicationFailure ? cause.type : null;
    if (cause instanceof TimeoutFailure || type === 'CallNotOnGateway' || type === 'GatewayShutdown') {
      return new GatewayLost(`media gateway lost: ${causeMessage(err)}`);
    }
    if (type === 'SpeechUnavailable') return new SpeechUnavailable(`speech synthesis failed: ${causeMessage(err)}`);
    return new LlmUnavailable(`LLM request failed: ${causeMessage(err)}`);
  }
}
