/**
 * A call's knowledge bases (docs/knowledge-base.md): which bases and mode apply in the call's
 * current state (the node's own, else the agent's), the `auto` retrieval asked of the LLM request,
 * the builtin `search_knowledge_base` tool of `tool` mode (run by the searchKnowledge activity),
 * and the `knowledge_retrieved` / `knowledge_skipped` events. Workflow code: deterministic, no I/O.
 */
import { ActivityFailure, proxyActivities } from '@temporalio/workflow';
import type { createKnowledgeActivities } from '../activities/knowledge';
import type { CallContext } from './call-context';
import type { LlmToolSpec } from './call-definitions';
import { findNode } from './conversation';
import { knowledgeContextMessage, SEARCH_KNOWLEDGE_TOOL, type KnowledgeMode, type KnowledgeOutcome, type KnowledgeRequest } from '../src/shared/knowledge';

type KnowledgeActivities = ReturnType<typeof createKnowledgeActivities>;

const SEARCH_SPEC: LlmToolSpec = {
  type: 'function',
  function: {
    name: SEARCH_KNOWLEDGE_TOOL,
    description: "Search the business's documents (policies, prices, opening hours, manuals) for facts to answer the caller. Use it before answering a question about them.",
    parameters: { type: 'object', properties: { query: { type: 'string', description: 'what to look up, in a few words' } }, required: ['query'] },
  },
};

export class CallKnowledge {
  constructor(private readonly ctx: CallContext) {}

  /** The bases and mode in force now, or null when the call has none here. */
  private current(): { ids: string[]; mode: KnowledgeMode; timeoutMs: number } | null {
    const { agent } = this.ctx.input;
    if (!agent.knowledge) return null;
    const node = findNode(agent, this.ctx.conv.nodeKey);
    const own = node?.knowledge_base_ids?.length ? node : null;
    const ids = own ? own.knowledge_base_ids! : agent.knowledge.knowledge_base_ids;
    if (ids.length === 0) return null;
    const mode = own ? (own.knowledge_mode ?? 'auto') : agent.knowledge.mode;
    // Whoever runs the LLM request retrieves in `auto` mode: the llmTurn activity for text calls,
    // the media gateway (voice-turn.ts) for voice and web calls.
    return { ids, mode, timeoutMs: agent.knowledge.timeout_ms };
  }

  /** The retrieval an LLM request of a turn carries in `auto` mode. */
  autoRequest(): KnowledgeRequest | undefined {
    const now = this.current();
    return now?.mode === 'auto' ? { knowledgeBaseIds: now.ids, timeoutMs: now.timeoutMs } : undefined;
  }

  /** The builtin tool, offered in `tool` mode. */
  toolSpecs(): LlmToolSpec[] {
    return this.current()?.mode === 'tool' ? [SEARCH_SPEC] : [];
  }

  offers(functionName: string): boolean {
    return functionName === SEARCH_KNOWLEDGE_TOOL && this.current()?.mode === 'tool';
  }

  record(outcome: KnowledgeOutcome | undefined): void {
    if (outcome) this.ctx.recorder.record(outcome.event, outcome.data as unknown as Record<string, unknown>);
  }

  /** `search_knowledge_base {query}`: the passages as the LLM's tool result. */
  async search(args: Record<string, unknown>): Promise<string> {
    const now = this.current()!;
    const query = String(args.query ?? '').trim();
    const { searchKnowledge } = proxyActivities<KnowledgeActivities>({
      // A search is milliseconds of PostgreSQL; the budget is the agent's, with room to start.
      startToCloseTimeout: now.timeoutMs + 5000,
      retry: { initialInterval: '200ms', maximumAttempts: 2 },
    });
    const base = { knowledge_base_ids: now.ids, query, mode: 'tool' as const };
    try {
      const { passages, ms, method, semantic_error } = await searchKnowledge({ knowledgeBaseIds: now.ids, query });
      const chunks = passages.map((p) => ({ chunk_id: p.chunk_id, knowledge_base_id: p.knowledge_base_id, document: p.document, heading: p.heading, score: p.score }));
      // `method` is absent from the answers of workers older than semantic search.
      this.record({ event: 'knowledge_retrieved', data: { ...base, chunks, ms, ...(method ? { method } : {}), ...(semantic_error ? { semantic_error } : {}) } });
      this.ctx.recorder.record('tool_result', { function: SEARCH_KNOWLEDGE_TOOL, result: `${passages.length} passages` });
      return passages.length ? knowledgeContextMessage(passages) : 'No passage of the knowledge base matches this query.';
    } catch (err) {
      const reason = `retrieval failed: ${err instanceof ActivityFailure ? (err.cause?.message ?? err.message) : (err as Error).message}`;
      this.record({ event: 'knowledge_skipped', data: { ...base, reason, ms: 0 } });
      this.ctx.recorder.record('tool_result', { function: SEARCH_KNOWLEDGE_TOOL, result: null, error: reason });
      return 'Error: the knowledge base could not be searched right now. Answer without it.';
    }
  }
}
