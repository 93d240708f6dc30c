/**
 * What the gateway knows of a call's conversation, to answer the caller while Temporal is away
 * (docs/call-lifecycle.md, "Temporal unreachable"). The workflow decides every turn and hands the
 * gateway each LLM request whole (an armed turn's, a voice turn's); the mirror keeps the last one
 * and what was said since — the agent's words the caller heard, the caller's words nobody answered
 * yet. A reply that asked for tools ends what the gateway can do alone: only the workflow runs
 * tools and moves flow nodes, so the next utterance waits for it.
 */
import type { LlmMessage, VoiceTurnRequest } from '../../../workflows/call-definitions';

type Plan = Omit<VoiceTurnRequest, 'utteranceId'>;

export class ConversationMirror {
  private plan: Plan | null = null;
  private tail: LlmMessage[] = [];
  private blocked = false;

  /** An LLM request the workflow built (or the gateway, from this mirror): the new base. */
  planned(req: VoiceTurnRequest | (Plan & { armId?: string; afterSeq?: number })): void {
    const { messages, tools, provider, model, temperature, maxTokens, callId } = req;
    this.plan = { callId, provider, model, temperature, maxTokens, messages, tools };
    this.tail = [];
    this.blocked = false;
  }

  /** The agent said this and the caller heard it (a greeting, a reply, a `say`). */
  said(text: string): void {
    if (text.trim()) this.tail.push({ role: 'assistant', content: text.trim() });
  }

  /** The caller said this and nobody has answered it yet. */
  heard(text: string): void {
    if (text.trim()) this.tail.push({ role: 'user', content: text.trim() });
  }

  /** A reply asked for tools: the conversation cannot go on without the workflow. */
  needsWorkflow(): void {
    this.blocked = true;
  }

  /**
   * The request that answers `text` from what the mirror holds, or null when it cannot. `text`
   * null: the caller's words are already the last of what was `heard`.
   */
  requestFor(text: string | null, utteranceId: string): VoiceTurnRequest | null {
    if (!this.plan || this.blocked) return null;
    const asked = text === null ? [] : [{ role: 'user' as const, content: text.trim() }];
    return { ...this.plan, utteranceId, messages: [...this.plan.messages, ...this.tail, ...asked] };
  }
}
