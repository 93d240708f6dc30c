/**
 * Which passages each agent reply was given (src/knowledge/reply-sources.ts), from event
 * sequences as the call workflow records them: auto retrieval before each LLM request, tool mode's
 * search between the rounds, replies without retrieval, backchannels.
 */
import { documentsUsed, replySources, type SourceEvent } from '../../src/knowledge/reply-sources';

const chunk = (id: string, document: string, score: number) => ({ chunk_id: id, knowledge_base_id: 'kb', document, heading: `${document} > ${id}`, score });
function trace(...steps: Array<[string, Record<string, unknown>]>): SourceEvent[] {
  return steps.map(([event_type, data], i) => ({ seq: i + 1, event_type, data }));
}
const retrieved = (...chunks: ReturnType<typeof chunk>[]): [string, Record<string, unknown>] => ['knowledge_retrieved', { mode: 'auto', query: 'q', chunks, ms: 2 }];

it('gives each reply the passages of its own turn, and none to the greeting or a turn without retrieval', () => {
  const events = trace(
    ['agent_spoke', { text: 'Hello' }],
    ['user_spoke', { text: 'Price of a blood test?' }],
    retrieved(chunk('a', 'faq.md', 0.2), chunk('b', 'prices.pdf', 0.4)),
    ['llm_usage', {}],
    ['agent_spoke', { text: '25 euros' }],
    ['user_spoke', { text: 'Thanks' }],
    ['llm_usage', {}],
    ['agent_spoke', { text: 'Bye' }],
  );
  const sources = replySources(events);
  expect([...sources.keys()]).toEqual([5]);
  // In the retrieval's (fused) rank, as the LLM was given them, not re-sorted by score.
  expect(sources.get(5)!.map((s) => s.chunk_id)).toEqual(['a', 'b']);
  expect(documentsUsed(events)).toEqual(['faq.md', 'prices.pdf']);
});

it('tool mode: the reply after search_knowledge_base has its result; the words said before the search do not', () => {
  const events = trace(
    ['user_spoke', { text: 'Where can I park?' }],
    ['llm_usage', {}],
    ['agent_spoke', { text: 'Let me look.' }],
    ['tool_called', { function: 'search_knowledge_base', args: { query: 'parking' } }],
    ['knowledge_retrieved', { mode: 'tool', query: 'parking', chunks: [chunk('p', 'faq.md', 0.3)], ms: 1 }],
    ['tool_result', { function: 'search_knowledge_base', result: '1 passages' }],
    ['llm_usage', {}],
    ['agent_spoke', { text: 'Two hours are free.' }],
  );
  const sources = replySources(events);
  expect([...sources.keys()]).toEqual([8]);
  expect(sources.get(8)).toEqual([chunk('p', 'faq.md', 0.3)]);
});

it('an auto retrieval repeated after a tool round counts each chunk once, in its first place at its best score; a backchannel does not end the turn', () => {
  const events = trace(
    ['user_spoke', { text: 'Book me and tell me the price' }],
    retrieved(chunk('a', 'faq.md', 0.2)),
    ['llm_usage', {}],
    ['user_spoke', { text: 'mm', backchannel: true }],
    ['tool_called', { function: 'book', args: {} }],
    ['tool_result', { function: 'book', result: 'ok' }],
    retrieved(chunk('a', 'faq.md', 0.25), chunk('c', 'faq.md', 0.1)),
    ['llm_usage', {}],
    ['agent_spoke', { text: 'Booked; it costs 25 euros.' }],
  );
  expect(replySources(events).get(9)).toEqual([chunk('a', 'faq.md', 0.25), chunk('c', 'faq.md', 0.1)]);
  // A retrieval that found nothing gives no sources.
  expect(replySources(trace(['user_spoke', { text: 'x' }], retrieved(), ['agent_spoke', { text: 'y' }])).size).toBe(0);
});
