/**
 * One LLM turn spoken as it streams: text deltas are cut into sentences and each sentence goes
 * to TTS the moment it ends, so the caller hears the first sentence while the LLM is still
 * writing the rest. Barge-in aborts the LLM request (AbortSignal) along with the audio.
 *
 * Returns when the reply has played (or was cut off); when the LLM asked for tools it returns as
 * soon as the LLM is done and the spoken part keeps playing while the workflow runs the tools.
 * LLM failures stop this turn's audio (a retry must not be heard twice) and are thrown for the
 * workflow's retry policy: `LlmRequestRejected` (not retryable) or `LlmUnavailable`.
 */
import OpenAI from 'openai';
import { streamChat, type ChatResult } from '../../providers/llm/chat';
import { llmFailure } from '../../providers/llm/llm-activity-support';
import { countProviderError, observeTurnStage } from '../../observability/metrics';
import type { VoiceTurnRequest, VoiceTurnResult } from '../../../workflows/call-definitions';
import type { ConversationMirror } from './conversation-mirror';
import type { PipelineObserver } from '../metrics/pipeline-observer';
import type { TurnSpans } from '../metrics/turn-spans';
import { SentenceSplitter } from '../speech/sentences';
import type { SpeechOut } from '../speech/speech-out';
import type { WorkflowReports } from '../workflow-link/workflow-reports';
import { withKnowledge } from '../../knowledge/turn-knowledge';
import type { KnowledgeRetriever } from '../../knowledge/retrieval';
import type { KnowledgeOutcome } from '../../shared/knowledge';

/** What a voice turn uses of its call (a CallMedia). */
export interface VoiceTurnParts {
  /** The reply's utterance (`tts`) and its LLM stream, aborted on barge-in (`trackLlm`). */
  speech: Pick<SpeechOut, 'tts' | 'trackLlm'>;
  /** The events that go back with the result. */
  reports: Pick<WorkflowReports, 'events'>;
  observer: Pick<PipelineObserver, 'turnStarted'>;
  /** The turn's spans in the call's trace (no-ops while tracing is off). */
  turnSpans?: Pick<TurnSpans, 'llm'>;
  /** What the gateway keeps of the conversation, to answer alone while Temporal is away. */
  conversation: Pick<ConversationMirror, 'planned' | 'said' | 'needsWorkflow'>;
  /** `auto` knowledge retrieval (docs/knowledge-base.md); absent on a gateway without a database. */
  knowledge?: KnowledgeRetriever;
}

// A gateway without a database cannot search: the request goes on without passages, with an event.
const NO_RETRIEVER: KnowledgeRetriever = { search: () => Promise.reject(new Error('this media gateway has no database')) };

export async function runVoiceTurn(call: VoiceTurnParts, client: OpenAI, req: VoiceTurnRequest, cancel: AbortSignal): Promise<VoiceTurnResult> {
  const { tts } = call.speech;
  const { events } = call.reports;
  call.observer.turnStarted();
  call.conversation.planned(req);
  const speech = tts.begin(req.utteranceId);
  const llmAbort = new AbortController();
  const untrack = call.speech.trackLlm(llmAbort);
  // Cut off before it began (the caller is talking): nobody will hear this reply.
  if (speech.state !== 'active') llmAbort.abort();
  const onCancel = () => {
    llmAbort.abort();
    tts.stop(speech);
  };
  cancel.addEventListener('abort', onCancel, { once: true });
  const splitter = new SentenceSplitter();
  const startedPerf = performance.now();
  let firstTextPerf: number | null = null;
  let sentenceTimed = false;

  let llm: ChatResult | null = null;
  let knowledge: KnowledgeOutcome | undefined;
  let messages = req.messages;
  // Not for a reply cut off before it began: nobody will hear it, so nothing is searched for it.
  if (req.knowledge && !llmAbort.signal.aborted) {
    // The same path as a text call's LLM activity: bounded by the agent's knowledge_timeout_ms.
    ({ messages, knowledge } = await withKnowledge(call.knowledge ?? NO_RETRIEVER, req));
  }
  const llmSpan = call.turnSpans?.llm(req.provider, req.model);
  try {
    llm = await streamChat(
      client,
      { provider: req.provider, model: req.model, messages, tools: req.tools, temperature: req.temperature, maxTokens: req.maxTokens },
      (delta) => {
        if (firstTextPerf === null) llmSpan?.firstToken();
        firstTextPerf ??= performance.now();
        if (speech.state !== 'active') return;
        for (const sentence of splitter.push(delta)) {
          if (!sentenceTimed) observeTurnStage('first_sentence', performance.now() - firstTextPerf);
          sentenceTimed = true;
          tts.push(speech, sentence);
        }
      },
      llmAbort.signal,
    );
    llmSpan?.end({ promptTokens: llm.usage.prompt_tokens, completionTokens: llm.usage.completion_tokens, toolCalls: llm.toolCalls.length });
  } catch (err) {
    llmSpan?.end(llmAbort.signal.aborted ? { aborted: true } : { error: err as Error });
    if (!llmAbort.signal.aborted) {
      // Whatever of this reply already plays is stopped: the retried turn starts it afresh.
      tts.stop(speech);
      countProviderError('llm', req.provider);
      events.error(`LLM request failed: ${(err as Error).message}`, 'llm', { utterance_id: req.utteranceId });
      throw llmFailure(err);
    }
    // Aborted by barge-in (or cancellation): the speech result says what was heard.
  } finally {
    untrack();
  }

  try {
    if (llm && speech.state === 'active') {
      const rest = splitter.flush();
      if (rest && !sentenceTimed && firstTextPerf !== null) observeTurnStage('first_sentence', performance.now() - firstTextPerf);
      if (rest) tts.push(speech, rest);
      tts.end(speech);
    }
    const ttfbMs = llm?.ttfbMs ?? (firstTextPerf === null ? null : Math.round(firstTextPerf - startedPerf));
    if (ttfbMs !== null) observeTurnStage('llm_first_token', ttfbMs);
    if (llm && llm.toolCalls.length > 0 && speech.state === 'active') {
      call.conversation.needsWorkflow();
      // Tools run while the spoken part plays; its tts_stopped comes with a later result.
      return {
        ...llm,
        heardText: llm.content.trim(),
        interrupted: false,
        characters: speech.characters,
        events: events.drain(),
        ...(knowledge ? { knowledge } : {}),
      };
    }
    const played = await speech.result;
    const heardText = played.whole && llm ? llm.content.trim() : played.heardText;
    call.conversation.said(heardText);
    return {
      content: played.interrupted || !llm ? heardText : llm.content,
      // An interrupted reply's tool calls are dropped: the caller spoke before they could matter.
      toolCalls: played.interrupted || !llm ? [] : llm.toolCalls,
      usage: llm?.usage ?? { prompt_tokens: 0, completion_tokens: 0 },
      ttfbMs,
      heardText,
      interrupted: played.interrupted,
      characters: speech.characters,
      events: events.drain(),
      ...(knowledge ? { knowledge } : {}),
    };
  } finally {
    cancel.removeEventListener('abort', onCancel);
  }
}
