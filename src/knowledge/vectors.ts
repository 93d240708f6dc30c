/**
 * The vector maths of semantic search, kept apart from I/O so it is tested alone. Vectors are
 * stored L2-normalised, so the cosine similarity of two of them is their dot product.
 */

/** The vector scaled to length 1 (a zero vector stays zero: it is similar to nothing). */
export function normalise(vector: ArrayLike<number>): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sum);
  const out = new Float32Array(vector.length);
  if (norm === 0) return out;
  for (let i = 0; i < vector.length; i++) out[i] = vector[i]! / norm;
  return out;
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`vectors of ${a.length} and ${b.length} dimensions cannot be compared`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** Cosine similarity, −1…1 (0 when either vector is zero). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const na = Math.sqrt(dot(a, a));
  const nb = Math.sqrt(dot(b, b));
  return na === 0 || nb === 0 ? 0 : dot(a, b) / (na * nb);
}

/** A vector as PostgreSQL reads it: pgvector's `[1,2,3]` or a `real[]`'s `{1,2,3}`. */
export function vectorLiteral(vector: ArrayLike<number>, kind: 'vector' | 'real[]'): string {
  const parts: string[] = [];
  for (let i = 0; i < vector.length; i++) {
    const v = vector[i]!;
    if (!Number.isFinite(v)) throw new Error('a vector holds a value that is not a finite number');
    parts.push(String(v));
  }
  return kind === 'vector' ? `[${parts.join(',')}]` : `{${parts.join(',')}}`;
}
