/**
 * How the agent speaks and thinks on a call. Text calls (test channel, client-managed calls) run
 * the LLM as an activity on the workflow's own task queue; voice calls run speech and LLM→TTS
 * turns on the media gateway instance that holds the call's audio socket. Workflow code.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities, sleep, TimeoutFailure, type RetryPolicy } from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  GATEWAY_HEARTBEAT_TIMEOUT_SECS,
  type ArmedTurnRequest,
  type ArmedTurnResult,
  type CallWorkflowInput,
  type GatewayActivities,
  type GatewayEvent,
  type LlmTurnRequest,
  type LlmTurnResult,
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
    ({ llmTurn: this.llm } = proxyActivities<Activities>({ startToCloseTimeout: '60s', retry: llmRetry(options) }));
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

export class VoiceChannel implements CallChannel {
  private readonly speech: GatewayActivities;
  private readonly turns: GatewayActivities;
  private readonly armed: GatewayActivities;
  private readonly retryTurns: GatewayActivities | null;

  constructor(
    private readonly callId: string,
    taskQueue: string,
    private readonly options: RetryOptions,
  ) {
    const common = {
      taskQueue,
      // A dead gateway must not stall the call: nobody picks the task up within seconds.
      scheduleToStartTimeout: '5s' as const,
      // A long reply may play for minutes; liveness comes from the heartbeat.
      startToCloseTimeout: '15m' as const,
      heartbeatTimeout: GATEWAY_HEARTBEAT_TIMEOUT_SECS * 1000,
    };
    this.speech = proxyActivities<GatewayActivities>({ ...common, retry: { maximumAttempts: 1 } });
    this.turns = proxyActivities<GatewayActivities>({ ...common, retry: llmRetry(options) });
    // An armed turn waits for the caller as long as the call lasts; the heartbeat says the gateway lives.
    this.armed = proxyActivities<GatewayActivities>({ ...common, startToCloseTimeout: '24h', retry: { maximumAttempts: 1 } });
    // An armed turn's LLM attempt counts as the first of the retry policy's attempts.
    this.retryTurns =
      options.llmRetryMaxAttempts > 1 ? proxyActivities<GatewayActivities>({ ...common, retry: { ...llmRetry(options), maximumAttempts: options.llmRetryMaxAttempts - 1 } }) : null;
  }

  /** Hands the gateway the next turn; resolves when the caller spoke (or it was disarmed). */
  async arm(request: ArmedTurnRequest): Promise<ArmedTurnResult> {
    try {
      return await this.armed.armedTurn(request);
    } catch (err) {
      throw this.translate(err);
    }
  }

  async disarm(armId: string): Promise<void> {
    try {
      await this.speech.disarmTurn({ callId: this.callId, armId });
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
      return await this.retryTurns.voiceTurn({ ...request, utteranceId });
    } catch (err) {
      throw this.translate(err);
    }
  }

  async say(text: string, utteranceId: string): Promise<Spoken> {
    try {
      return await this.speech.speak({ callId: this.callId, utteranceId, text });
    } catch (err) {
      throw this.translate(err);
    }
  }

  async think(request: LlmTurnRequest, utteranceId: string): Promise<Thought> {
    try {
      return await this.turns.voiceTurn({ ...request, utteranceId });
    } catch (err) {
      throw this.translate(err);
    }
  }

  private translate(err: unknown): unknown {
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
