/**
 * The parts of semantic search that need no server (docs/knowledge-base.md, "Semantic search"):
 * the vector maths, the literals PostgreSQL reads, the EMBEDDINGS_* settings validated at start-up,
 * and the fusion of a semantic list with the lexical ones.
 */
import { ConfigError, loadConfig } from '../../src/config';
import { embedderFromConfig, embeddingsSettings } from '../../src/providers/embeddings';
import { embeddingText } from '../../src/knowledge/ingest';
import { fuseRankings } from '../../src/knowledge/ranking';
import { cosine, dot, normalise, vectorLiteral } from '../../src/knowledge/vectors';

describe('vector maths', () => {
  it('normalises to length 1, keeping the direction; a zero vector stays zero', () => {
    const v = normalise([3, 4]);
    expect(Array.from(v)).toEqual([expect.closeTo(0.6, 6), expect.closeTo(0.8, 6)]);
    expect(dot(v, v)).toBeCloseTo(1, 6);
    expect(Array.from(normalise([0, 0, 0]))).toEqual([0, 0, 0]);
  });

  it('computes cosine similarity whatever the lengths, and the dot product of normalised vectors equals it', () => {
    expect(cosine([1, 0], [0, 1])).toBe(0);
    expect(cosine([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 10);
    expect(cosine([1, 2], [-1, -2])).toBeCloseTo(-1, 10);
    expect(cosine([0, 0], [1, 1])).toBe(0);
    const a = [0.3, -1.2, 5, 0.01];
    const b = [2, 0.5, 4.5, -3];
    expect(dot(normalise(a), normalise(b))).toBeCloseTo(cosine(a, b), 6);
    expect(() => dot([1, 2], [1, 2, 3])).toThrow('vectors of 2 and 3 dimensions cannot be compared');
  });

  it('writes the literal of pgvector and of real[], refusing NaN and infinities', () => {
    expect(vectorLiteral(new Float32Array([0.5, -0.25, 1]), 'vector')).toBe('[0.5,-0.25,1]');
    expect(vectorLiteral([0.5, -0.25, 1], 'real[]')).toBe('{0.5,-0.25,1}');
    expect(() => vectorLiteral([1, Number.NaN], 'vector')).toThrow('not a finite number');
    expect(() => vectorLiteral([Number.POSITIVE_INFINITY], 'real[]')).toThrow('not a finite number');
  });

  it('embeds a chunk with its heading path', () => {
    expect(embeddingText({ heading: 'Prices > Roaming', content: 'UAE: 599 rupees.' })).toBe('Prices > Roaming\n\nUAE: 599 rupees.');
    expect(embeddingText({ heading: '', content: 'Just text.' })).toBe('Just text.');
  });
});

describe('EMBEDDINGS_* configuration', () => {
  it('is off by default: no embedder, lexical search only', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ EMBEDDINGS_BATCH_SIZE: 64, EMBEDDINGS_TIMEOUT_MS: 2000, EMBEDDINGS_MIN_SIMILARITY: 0.3 });
    expect(embedderFromConfig(config)).toBeNull();
  });

  it('is on with a model and a base URL (a local server needs no key), or a model and a key (api.openai.com)', () => {
    const local = loadConfig({ EMBEDDINGS_MODEL: 'nomic-embed-text', EMBEDDINGS_BASE_URL: 'http://localhost:11434/v1' });
    expect(embeddingsSettings(local as never)).toEqual({ baseUrl: 'http://localhost:11434/v1', model: 'nomic-embed-text', batchSize: 64, timeoutMs: 2000, minSimilarity: 0.3 });
    expect(embedderFromConfig(local)?.model).toBe('nomic-embed-text');
    const openai = loadConfig({ EMBEDDINGS_MODEL: 'text-embedding-3-small', EMBEDDINGS_API_KEY: 'sk-x', EMBEDDINGS_DIMENSIONS: '512', EMBEDDINGS_BATCH_SIZE: '128' });
    expect(embeddingsSettings(openai as never)).toEqual({ apiKey: 'sk-x', model: 'text-embedding-3-small', dimensions: 512, batchSize: 128, timeoutMs: 2000, minSimilarity: 0.3 });
  });

  it('refuses at start-up settings that cannot work, naming the variable', () => {
    const message = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(message({ EMBEDDINGS_BASE_URL: 'http://localhost:11434/v1' })).toMatch(/EMBEDDINGS_MODEL: required when EMBEDDINGS_BASE_URL/);
    expect(message({ EMBEDDINGS_API_KEY: 'sk-x' })).toMatch(/EMBEDDINGS_MODEL: required/);
    expect(message({ EMBEDDINGS_MODEL: 'text-embedding-3-small' })).toMatch(/EMBEDDINGS_API_KEY: required when EMBEDDINGS_BASE_URL is unset/);
    expect(message({ EMBEDDINGS_MODEL: 'm', EMBEDDINGS_BASE_URL: 'localhost:11434' })).toMatch(/EMBEDDINGS_BASE_URL/);
    expect(message({ EMBEDDINGS_MODEL: 'm', EMBEDDINGS_BASE_URL: 'ftp://x.example/v1' })).toMatch(/EMBEDDINGS_BASE_URL: must be an http/);
    expect(message({ EMBEDDINGS_MODEL: 'm', EMBEDDINGS_API_KEY: 'k', EMBEDDINGS_DIMENSIONS: '1.5' })).toMatch(/EMBEDDINGS_DIMENSIONS: must be an integer/);
    expect(message({ EMBEDDINGS_MODEL: 'm', EMBEDDINGS_API_KEY: 'k', EMBEDDINGS_DIMENSIONS: 'many' })).toMatch(/EMBEDDINGS_DIMENSIONS/);
    expect(message({ EMBEDDINGS_MODEL: 'm', EMBEDDINGS_API_KEY: 'k', EMBEDDINGS_BATCH_SIZE: '0' })).toMatch(/EMBEDDINGS_BATCH_SIZE/);
    expect(message({ EMBEDDINGS_MODEL: 'm', EMBEDDINGS_API_KEY: 'k', EMBEDDINGS_MIN_SIMILARITY: '2' })).toMatch(/EMBEDDINGS_MIN_SIMILARITY/);
  });
});

it('fuses a semantic list with the lexical ones: agreement first, and what only meaning finds is kept', () => {
  const fullText = { items: [{ id: 'garage', relevance: 0.4 }, { id: 'hours', relevance: 0.1 }], weight: 1 };
  const semantic = { items: [{ id: 'garage', relevance: 0.7 }, { id: 'pets', relevance: 0.5 }], weight: 1 };
  const fused = fuseRankings([fullText, semantic]);
  // Second places of one list each tie; the better relevance goes first.
  expect(fused.map((f) => f.id)).toEqual(['garage', 'pets', 'hours']);
  // A passage's relevance is the best any list gave it: the cosine here.
  expect(fused[0]!.relevance).toBe(0.7);
  expect(fused.find((f) => f.id === 'pets')!.relevance).toBe(0.5);
});
