/**
 * Retrieval started on the interim transcript (src/knowledge/prefetch.ts): the turn's search finds
 * the one the gateway started when the caller stopped, whatever the case and punctuation of the
 * final; other words are searched afresh; the event says which.
 */
import type { LlmTurnRequest } from '../../workflows/call-definitions';
import type { Retrieval, SearchRequest } from '../../src/knowledge/retrieval';
import { PrefetchingRetriever, searchKey } from '../../src/knowledge/prefetch';
import { knowledgeSearchOf, withKnowledge } from '../../src/knowledge/turn-knowledge';
import { TurnDetector } from '../../src/gateway/turns/turn-detector';
import type { RetrievedPassage } from '../../src/shared/knowledge';

const passage: RetrievedPassage = { chunk_id: 'c1', knowledge_base_id: 'kb1', document_id: 'd1', document: 'faq.md', heading: 'FAQ > Hours', content: 'Open 8 to 8.', score: 0.7 };

function countingRetriever(delayMs = 0) {
  const searched: string[] = [];
  return {
    searched,
    search: (req: SearchRequest) => {
      searched.push(req.query);
      return new Promise<Retrieval>((resolve) => setTimeout(() => resolve({ passages: [passage], method: 'lexical' }), delayMs));
    },
  };
}

const turn = (said: string): LlmTurnRequest => ({
  callId: 'call',
  provider: 'openai',
  model: 'm',
  messages: [{ role: 'system', content: 'prompt' }, { role: 'user', content: said }],
  tools: [],
  knowledge: { knowledgeBaseIds: ['kb1'], timeoutMs: 1000 },
});

it('treats queries that differ only in case, punctuation and spacing as one search', () => {
  const a = searchKey({ knowledgeBaseIds: ['b', 'a'], query: 'When are you open?', topK: 3 });
  expect(searchKey({ knowledgeBaseIds: ['a', 'b'], query: 'when  are you OPEN', topK: 3 })).toBe(a);
  expect(searchKey({ knowledgeBaseIds: ['a', 'b'], query: 'when are you closed', topK: 3 })).not.toBe(a);
  expect(searchKey({ knowledgeBaseIds: ['a', 'b'], query: 'When are you open?', topK: 5 })).not.toBe(a);
  // Devanagari keeps its vowel signs (\p{M}): these are different words.
  expect(searchKey({ knowledgeBaseIds: ['a'], query: 'खुला', topK: 3 })).not.toBe(searchKey({ knowledgeBaseIds: ['a'], query: 'खल', topK: 3 }));
});

it("answers the turn's search from the prefetch started on the interim words, once, and marks the event", async () => {
  const inner = countingRetriever(30);
  const retriever = new PrefetchingRetriever(inner);
  retriever.prefetch(knowledgeSearchOf(turn('when are you open'))!);
  const out = await withKnowledge(retriever, turn('When are you open?'));
  expect(inner.searched).toEqual(['when are you open']);
  expect(retriever.hits).toBe(1);
  expect(out.knowledge).toMatchObject({ event: 'knowledge_retrieved', data: { query: 'When are you open?', prefetched: true, chunks: [{ chunk_id: 'c1' }] } });
  // Used once: the same words in a later turn search again, and that event is not marked.
  const again = await withKnowledge(retriever, turn('When are you open?'));
  expect(inner.searched).toHaveLength(2);
  expect(again.knowledge!.data).not.toHaveProperty('prefetched');
});

it('searches afresh when the final says something else than the interim', async () => {
  const inner = countingRetriever();
  const retriever = new PrefetchingRetriever(inner);
  retriever.prefetch(knowledgeSearchOf(turn('when are you'))!);
  const out = await withKnowledge(retriever, turn('When are you open on Sunday?'));
  expect(inner.searched).toEqual(['when are you', 'When are you open on Sunday?']);
  expect(retriever.hits).toBe(0);
  expect(out.knowledge!.data).not.toHaveProperty('prefetched');
});

it('gives the words heard so far when the VAD says the caller stopped, before the final', () => {
  const heard: string[] = [];
  const utterances: string[] = [];
  const detector = new TurnDetector(1, {
    agentSpeaking: () => false,
    bargeIn: () => undefined,
    finalize: () => undefined,
    utterance: (t) => utterances.push(t.text),
    heardSoFar: (text) => heard.push(text),
  });
  detector.onVad({ type: 'speech_started', at_ms: 0, detected_at_ms: 200 } as never);
  detector.onTranscript({ text: 'I would like', isFinal: true } as never);
  detector.onTranscript({ text: 'to book', isFinal: false } as never);
  detector.onVad({ type: 'speech_stopped', at_ms: 1500, detected_at_ms: 1900 } as never);
  expect(heard).toEqual(['I would like to book']);
  expect(utterances).toEqual([]);
  detector.onTranscript({ text: 'to book.', isFinal: true, fromFinalize: true } as never);
  expect(utterances).toEqual(['I would like to book.']);
  detector.close();
});
