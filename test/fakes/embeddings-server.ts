/**
 * A local OpenAI-compatible embeddings server (`POST /v1/embeddings`, the wire format OpenAI,
 * Azure OpenAI's v1 endpoint, Ollama and TEI answer): `input` a string or an array of them,
 * `dimensions`, `encoding_format` `float` or `base64` (little-endian float32, the SDK's default),
 * `usage`, OpenAI's error JSON. Bearer auth when started with a key.
 *
 * Its vectors are deterministic and carry meaning, so semantic search can be tested without a
 * model: each word is mapped to its concept by a small synonym table (physician → doctor, cost →
 * price), hashed into one of N dimensions with a sign, plus the word's character trigrams at a
 * lower weight (so "refunds" stays near "refund"), and the sum is L2-normalised. Texts about the
 * same concepts have a high cosine similarity even when they share no word.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAKE_EMBEDDING_DIMENSIONS = 256;

// Words that mean the same to the fake, as a model's vectors would place them together.
const CONCEPTS: Record<string, string[]> = {
  doctor: ['doctor', 'doctors', 'physician', 'physicians', 'gp', 'medic', 'clinician'],
  price: ['price', 'prices', 'cost', 'costs', 'fee', 'fees', 'charge', 'charges', 'tariff', 'expensive', 'cheap'],
  consultation: ['consultation', 'consultations', 'appointment', 'appointments', 'visit', 'visits', 'checkup'],
  open: ['open', 'opening', 'hours', 'closed', 'close', 'closing'],
  weekend: ['weekend', 'weekends', 'saturday', 'saturdays', 'sunday', 'sundays'],
  car: ['car', 'cars', 'vehicle', 'vehicles', 'automobile', 'park', 'parking', 'garage'],
  money_back: ['refund', 'refunds', 'refunded', 'reimburse', 'reimbursed', 'reimbursement', 'repay', 'repaid', 'money'],
  delivery: ['delivery', 'deliver', 'delivered', 'shipping', 'shipped', 'courier', 'parcel', 'parcels', 'package', 'packages'],
  pet: ['pet', 'pets', 'dog', 'dogs', 'cat', 'cats', 'animal', 'animals'],
};
const CONCEPT_OF = new Map(Object.entries(CONCEPTS).flatMap(([concept, words]) => words.map((w) => [w, concept] as const)));
const STOPWORDS = new Set('a an and are at be by can do does for from how i in is it me much my of on or the to what when where which who will with you your'.split(' '));
const TRIGRAM_WEIGHT = 0.25;

function hash(text: string): number {
  let h = 0x811c9dc5; // FNV-1a
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function add(vector: number[], feature: string, weight: number): void {
  const h = hash(feature);
  vector[h % vector.length]! += (h & 0x80000000 ? -1 : 1) * weight;
}

/** The fake's vector of a text: concepts and character trigrams hashed into `dims`, L2-normalised. */
export function fakeEmbedding(text: string, dims = FAKE_EMBEDDING_DIMENSIONS): number[] {
  const vector = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (!word || STOPWORDS.has(word)) continue;
    add(vector, `w:${CONCEPT_OF.get(word) ?? word}`, 1);
    const padded = ` ${word} `;
    for (let i = 0; i + 3 <= padded.length; i++) add(vector, `t:${padded.slice(i, i + 3)}`, TRIGRAM_WEIGHT);
  }
  const norm = Math.sqrt(vector.reduce((s, v) => s + v * v, 0));
  return norm === 0 ? vector : vector.map((v) => v / norm);
}

export interface EmbeddingsRequest {
  model: string;
  inputs: string[];
  dimensions?: number;
  encoding_format?: string;
  authorization?: string;
}

export interface FakeEmbeddings {
  url: string;
  /** Every `POST /v1/embeddings` answered or refused, in order. */
  requests: EmbeddingsRequest[];
  /** Answer every request with this HTTP status (OpenAI's error JSON) until `fail(null)`. */
  fail(status: number | null): void;
  /** Wait this long before answering each request. */
  setDelay(ms: number): void;
  reset(): void;
  stop(): Promise<void>;
}

function sendError(res: http.ServerResponse, status: number, message: string): void {
  const type = status === 401 ? 'invalid_request_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, type, param: null, code: status === 401 ? 'invalid_api_key' : null } }));
}

export async function startFakeEmbeddings(options: { apiKey?: string } = {}): Promise<FakeEmbeddings> {
  const requests: EmbeddingsRequest[] = [];
  let failing: number | null = null;
  let delayMs = 0;
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/v1/embeddings') return sendError(res, 404, `Unknown request URL: ${req.method} ${req.url}`);
        let body: any;
        try {
          body = JSON.parse(Buffer.concat(parts).toString('utf8'));
        } catch {
          return sendError(res, 400, 'We could not parse the JSON body of your request.');
        }
        const inputs: unknown[] = Array.isArray(body?.input) ? body.input : [body?.input];
        const authorization = req.headers.authorization;
        requests.push({ model: body?.model, inputs: inputs.map(String), dimensions: body?.dimensions, encoding_format: body?.encoding_format, ...(authorization ? { authorization } : {}) });
        if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
        if (failing !== null) return sendError(res, failing, 'The server is overloaded or not ready yet.');
        if (options.apiKey && authorization !== `Bearer ${options.apiKey}`) return sendError(res, 401, 'Incorrect API key provided.');
        if (typeof body?.model !== 'string' || !body.model) return sendError(res, 400, "'model' is a required property");
        if (inputs.length === 0 || !inputs.every((i) => typeof i === 'string' && i.length > 0)) return sendError(res, 400, "'$.input' is invalid: expected non-empty strings");
        const dims = typeof body.dimensions === 'number' ? body.dimensions : FAKE_EMBEDDING_DIMENSIONS;
        const base64 = body.encoding_format === 'base64';
        const data = (inputs as string[]).map((text, index) => {
          const vector = fakeEmbedding(text, dims);
          return { object: 'embedding', index, embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector };
        });
        const tokens = (inputs as string[]).reduce((n, text) => n + Math.ceil(text.length / 4), 0);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    fail: (status) => void (failing = status),
    setDelay: (ms) => void (delayMs = ms),
    reset: () => {
      requests.length = 0;
      failing = null;
      delayMs = 0;
    },
    stop: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
