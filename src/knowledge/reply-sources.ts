/**
 * Which passages each agent reply was given (docs/knowledge-base.md#traceability), read from a
 * call's stored events so no workflow records anything more: a reply's sources are the chunks of
 * the `knowledge_retrieved` events of its turn recorded after the agent's previous reply (auto
 * retrievals before each LLM request, and `search_knowledge_base` results of tool mode, which the
 * workflow records before the LLM's next round). Used by the call serializer (transcript `sources`)
 * and by agent tests (`used_document`).
 */

export interface ReplySource {
  chunk_id: string;
  knowledge_base_id: string;
  document: string;
  heading: string;
  score: number;
}

/** The fields of a stored event this needs (a CallEventRow, or a row of a test's call). */
export interface SourceEvent {
  seq: number;
  event_type: string;
  data: Record<string, unknown> | null;
}

function chunksOf(data: Record<string, unknown>): ReplySource[] {
  const chunks = Array.isArray(data.chunks) ? data.chunks : [];
  return chunks
    .filter((c): c is Record<string, unknown> => !!c && typeof c === 'object' && typeof (c as Record<string, unknown>).chunk_id === 'string')
    .map((c) => ({
      chunk_id: c.chunk_id as string,
      knowledge_base_id: String(c.knowledge_base_id ?? ''),
      document: String(c.document ?? ''),
      heading: String(c.heading ?? ''),
      score: typeof c.score === 'number' ? c.score : 0,
    }));
}

/**
 * The sources of every agent reply that was given passages, by the seq of its `agent_spoke`
 * event, in the order the LLM was given them (the retrieval's rank, which fuses lists and so is
 * not always the score's order); each chunk once, at its best score (a tool round's second
 * request retrieves the same chunks again). Replies without passages are not in the map.
 */
export function replySources(events: SourceEvent[]): Map<number, ReplySource[]> {
  const bySeq = new Map<number, ReplySource[]>();
  let pending = new Map<string, ReplySource>();
  for (const e of [...events].sort((a, b) => a.seq - b.seq)) {
    const data = e.data ?? {};
    if (e.event_type === 'user_spoke' && !data.backchannel) {
      // A new caller turn: what was retrieved for the previous one answered nothing said since.
      pending = new Map();
    } else if (e.event_type === 'knowledge_retrieved') {
      for (const chunk of chunksOf(data)) {
        const seen = pending.get(chunk.chunk_id);
        if (!seen) pending.set(chunk.chunk_id, chunk);
        else if (chunk.score > seen.score) seen.score = chunk.score;
      }
    } else if (e.event_type === 'agent_spoke' && typeof data.text === 'string') {
      if (pending.size) bySeq.set(e.seq, [...pending.values()]);
      pending = new Map();
    }
  }
  return bySeq;
}

/** The documents any reply of the call was answered from, in the order first used. */
export function documentsUsed(events: SourceEvent[]): string[] {
  const documents = new Set<string>();
  for (const sources of replySources(events).values()) for (const s of sources) documents.add(s.document);
  return [...documents];
}
