/** Weighted reciprocal rank fusion (src/knowledge/ranking.ts), table-driven. */
import { fuseRankings, RRF_K } from '../../src/knowledge/ranking';

const list = (weight: number, ...ids: string[]) => ({ weight, items: ids.map((id, i) => ({ id, relevance: 1 - i / 10 })) });

it.each([
  { name: 'one list keeps its order', lists: [list(1, 'a', 'b', 'c')], order: ['a', 'b', 'c'] },
  { name: 'agreement lower down beats a first place in one list', lists: [list(1, 'x', 'a', 'b'), list(1, 'y', 'a', 'b')], order: ['a', 'b', 'x', 'y'] },
  { name: 'two lists reversed: the heavier list decides', lists: [list(1, 'a', 'b'), list(0.7, 'b', 'a')], order: ['a', 'b'] },
  { name: 'a passage in one list only still counts', lists: [list(1, 'a'), list(0.7, 'b')], order: ['a', 'b'] },
  { name: 'no lists, nothing', lists: [], order: [] },
])('$name', ({ lists, order }) => {
  expect(fuseRankings(lists).map((f) => f.id)).toEqual(order);
});

it('scores by the sum of w/(k + rank) and keeps the best relevance', () => {
  const [first] = fuseRankings([list(1, 'a'), list(0.5, 'b', 'a')]);
  expect(first!.id).toBe('a');
  expect(first!.score).toBeCloseTo(1 / (RRF_K + 1) + 0.5 / (RRF_K + 2), 10);
  expect(first!.relevance).toBe(1);
});
