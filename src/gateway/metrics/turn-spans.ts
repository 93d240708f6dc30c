/**
 * A call's turns as spans in its trace (docs/tracing.md), watched from the side of the pipeline
 * like the latency metrics (a PipelineObserver). A turn span runs from the caller's end of speech
 * to the reply's first frame on the socket, with a child span per stage: VAD end, STT final, the
 * hand-off through the workflow, the LLM request (its first token an event), TTS first audio;
 * barge-ins are spans of their own. Spans are made after the fact from the perf timestamps the
 * pipeline already keeps, so nothing new runs per audio frame.
 *
 * The call's trace reaches the gateway in its activities' headers (temporal-tracing.ts): the
 * latest activity of the call (`adopt`) is the parent of what follows. A call started without a
 * trace, or any call while tracing is off, adopts nothing and every method returns at once.
 */
import { context as otelContext, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { activeTracing, tracer } from '../../observability/tracing/tracing';
import type { AgentSpeech } from '../speech/agent-speech';
import type { CompletedTurn } from '../turns/turn-detector';
import type { PipelineObserver } from './pipeline-observer';

/** performance.now() → epoch ms, the span timestamps OpenTelemetry takes. */
const wall = (perf: number): number => performance.timeOrigin + perf;

interface OpenTurn {
  span: Span;
  ctx: Context;
  /** When the utterance was handed on (armed turn or report). */
  deliveredPerf: number;
  handedOff: boolean;
}

/** What the LLM request of a turn reports to its span. */
export interface LlmSpan {
  firstToken(): void;
  end(outcome: { promptTokens?: number; completionTokens?: number; toolCalls?: number; error?: Error; aborted?: boolean }): void;
}

const NO_LLM_SPAN: LlmSpan = { firstToken: () => undefined, end: () => undefined };

export interface TurnSpanVendors {
  stt: { provider: string; model: string | null };
  tts: { provider: string; model: string | null; voice: string | null };
}

export class TurnSpans implements PipelineObserver {
  private parent: Context | null = null;
  private turn: OpenTurn | null = null;
  private vadStartPerf: number | null = null;

  constructor(
    private readonly callId: string,
    private readonly vendors: TurnSpanVendors,
  ) {}

  /** An activity of this call runs now: its span (the call's trace) parents what follows. */
  adopt(ctx: Context = otelContext.active()): void {
    if (activeTracing() && trace.getSpanContext(ctx)) this.parent = ctx;
  }

  callerSpeechStarted(atPerf: number): void {
    this.vadStartPerf = atPerf;
  }

  utterance(turn: CompletedTurn): void {
    if (!this.parent) return;
    const now = performance.now();
    // A turn that never reached speech (cut off, or a tool-only reply) ends where the next begins.
    this.endTurn(now, { 'turn.spoken': false });
    const start = turn.speechEndPerf ?? turn.vadStopPerf ?? now;
    const span = tracer().startSpan(
      'turn',
      { startTime: wall(start), attributes: { 'call.id': this.callId, 'turn.during_agent_speech': turn.duringAgentSpeech, 'turn.words': countWords(turn.text) } },
      this.parent,
    );
    const ctx = trace.setSpan(this.parent, span);
    if (turn.speechEndPerf !== null && turn.vadStopPerf !== null) this.stage(ctx, 'vad.end', turn.speechEndPerf, turn.vadStopPerf);
    if (turn.vadStopPerf !== null && turn.sttTtfbMs !== null) {
      this.stage(ctx, 'stt.final', turn.vadStopPerf, turn.vadStopPerf + turn.sttTtfbMs, { 'stt.provider': this.vendors.stt.provider, ...optional('stt.model', this.vendors.stt.model) });
    }
    this.turn = { span, ctx, deliveredPerf: now, handedOff: false };
  }

  turnStarted(): void {
    const turn = this.turn;
    if (!turn || turn.handedOff) return;
    turn.handedOff = true;
    this.stage(turn.ctx, 'workflow.handoff', turn.deliveredPerf, performance.now());
  }

  /** The LLM request of a voice turn; its span closes with the request (usage, tool calls). */
  llm(provider: string, model: string): LlmSpan {
    const parent = this.turn?.ctx ?? this.parent;
    if (!parent) return NO_LLM_SPAN;
    const span = tracer().startSpan('llm', { attributes: { 'gen_ai.system': provider, 'gen_ai.request.model': model, 'call.id': this.callId } }, parent);
    let firstTokenSeen = false;
    return {
      firstToken: () => {
        if (firstTokenSeen) return;
        firstTokenSeen = true;
        span.addEvent('llm.first_token');
      },
      end: (outcome) => {
        if (outcome.promptTokens !== undefined) span.setAttribute('gen_ai.usage.input_tokens', outcome.promptTokens);
        if (outcome.completionTokens !== undefined) span.setAttribute('gen_ai.usage.output_tokens', outcome.completionTokens);
        if (outcome.toolCalls) span.setAttribute('llm.tool_calls', outcome.toolCalls);
        if (outcome.aborted) span.setAttribute('llm.aborted', true);
        if (outcome.error) {
          span.recordException(outcome.error);
          span.setStatus({ code: 2, message: outcome.error.message });
        }
        span.end();
      },
    };
  }

  agentSpeechStarted(speech: AgentSpeech, atPerf: number): void {
    const turn = this.turn;
    if (!turn || speech.createdPerf < turn.deliveredPerf) return;
    if (speech.firstTextPerf !== null && speech.firstAudioPerf !== null) {
      this.stage(turn.ctx, 'tts.first_audio', speech.firstTextPerf, speech.firstAudioPerf, {
        'tts.provider': this.vendors.tts.provider,
        ...optional('tts.model', this.vendors.tts.model),
        ...optional('tts.voice', this.vendors.tts.voice),
      });
    }
    turn.span.addEvent('first_frame_out', { 'tts.characters': speech.characters }, wall(atPerf));
    this.endTurn(atPerf, { 'turn.spoken': true, 'tts.characters': speech.characters });
  }

  bargedIn(cut: readonly AgentSpeech[]): void {
    if (!this.parent || !cut.some((s) => s.framesSent > 0)) return;
    const now = performance.now();
    const span = tracer().startSpan('barge_in', { startTime: wall(this.vadStartPerf ?? now), attributes: { 'call.id': this.callId, 'barge_in.cut_utterances': cut.length } }, this.turn?.ctx ?? this.parent);
    span.end(wall(now));
  }

  /** The call's stream closed: a turn still open ends here. */
  close(): void {
    this.endTurn(performance.now(), { 'turn.spoken': false });
    this.parent = null;
  }

  private endTurn(atPerf: number, attributes: Attributes): void {
    const turn = this.turn;
    if (!turn) return;
    this.turn = null;
    turn.span.setAttributes(attributes);
    turn.span.end(wall(atPerf));
  }

  private stage(parent: Context, name: string, fromPerf: number, toPerf: number, attributes: Attributes = {}): void {
    tracer().startSpan(name, { startTime: wall(fromPerf), attributes }, parent).end(wall(Math.max(fromPerf, toPerf)));
  }
}

function optional(key: string, value: string | null): Attributes {
  return value ? { [key]: value } : {};
}

function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
