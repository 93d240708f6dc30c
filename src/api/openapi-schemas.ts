/**
 * Turns the zod schemas of the routes into the OpenAPI document's JSON Schemas, with every schema
 * that carries an id (`.meta({ id: 'Agent' })`) in `components.schemas` once and referenced from
 * everywhere else. Without that a generated client gets one class per operation and field (a
 * Python client once had 1,336 of them, and the agent was a different class in each operation).
 *
 * A named schema can differ between a request and a response: defaults make a field optional in
 * what a client sends but always present in what it gets back. The response form then keeps the
 * name and the request form is `<Name>Input`; a schema used one way only, or the same both ways,
 * has just its name.
 */
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';

export type Io = 'input' | 'output';
type Json = Record<string, unknown>;

// Placeholder refs until every operation has been converted and the final names are known.
const PENDING = '#/components/schemas/__pending__/';

export class SchemaComponents {
  private readonly pools: Record<Io, Map<string, Json>> = { input: new Map(), output: new Map() };

  /** The JSON Schema of `schema` as a request (`input`) or response (`output`) body, named parts as refs. */
  convert(schema: z.ZodType, io: Io): Json {
    const out = z.toJSONSchema(schema, { io, unrepresentable: 'any', reused: 'inline' }) as Json;
    delete out.$schema;
    const defs = (out.$defs ?? {}) as Record<string, Json>;
    delete out.$defs;
    for (const [id, def] of Object.entries(defs)) this.keep(io, id, pending(def, io));
    return pending(out, io);
  }

  private keep(io: Io, id: string, def: Json): void {
    const known = this.pools[io].get(id);
    if (known && !isDeepStrictEqual(known, def)) {
      throw new Error(`Two different schemas are named "${id}" (${io}); give one of them another id`);
    }
    this.pools[io].set(id, def);
  }

  /** The final name of each (io, id): see the header comment. */
  private names(): Map<string, string> {
    const names = new Map<string, string>();
    for (const id of this.pools.output.keys()) names.set(`output/${id}`, id);
    for (const [id, input] of this.pools.input) {
      const output = this.pools.output.get(id);
      names.set(`input/${id}`, !output || isDeepStrictEqual(output, input) ? id : `${id}Input`);
    }
    return names;
  }

  /** `components.schemas`, sorted by name, and `document` with its placeholder refs resolved (in place). */
  finish<T>(document: T): { document: T; schemas: Record<string, Json> } {
    const names = this.names();
    const schemas: Record<string, Json> = {};
    for (const io of ['output', 'input'] as const) {
      for (const [id, def] of this.pools[io]) schemas[names.get(`${io}/${id}`)!] ??= def;
    }
    const sorted = Object.fromEntries(Object.keys(schemas).sort().map((name) => [name, schemas[name]!]));
    resolve(sorted, names);
    resolve(document, names);
    return { document, schemas: sorted };
  }
}

/** Rewrites zod's `#/$defs/<id>` refs into placeholders that remember whether they were input or output. */
function pending(node: Json, io: Io): Json {
  return JSON.parse(JSON.stringify(node), (key, value) =>
    key === '$ref' && typeof value === 'string' && value.startsWith('#/$defs/') ? `${PENDING}${io}/${value.slice('#/$defs/'.length)}` : value,
  ) as Json;
}

function resolve(node: unknown, names: Map<string, string>): void {
  if (Array.isArray(node)) return node.forEach((item) => resolve(item, names));
  if (!node || typeof node !== 'object') return;
  const object = node as Json;
  if (typeof object.$ref === 'string' && object.$ref.startsWith(PENDING)) {
    const name = names.get(object.$ref.slice(PENDING.length));
    if (!name) throw new Error(`Unresolved schema ref ${object.$ref}`);
    object.$ref = `#/components/schemas/${name}`;
  }
  for (const value of Object.values(object)) resolve(value, names);
}
