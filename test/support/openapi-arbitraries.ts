/**
 * fast-check arbitraries made from the OpenAPI document's JSON Schemas, for the property-based
 * fuzz test (test/integration/openapi-fuzz.test.ts): a value a schema describes, mostly valid
 * (so a request gets past validation to the code behind it), sometimes broken on purpose (a
 * required field left out, a value of the wrong type) so the refusals are exercised too.
 * Sizes are kept small: the point is the shapes, not big payloads (the other fuzz test sends those).
 */
import fc from 'fast-check';

type Schema = Record<string, any>;

const MAX_DEPTH = 5;
const MAX_ITEMS = 3;
const MAX_STRING = 24;
const OMIT = Symbol('omitted');

export class SchemaArbitraries {
  constructor(private readonly components: Record<string, Schema>) {}

  /** A value of `schema`; `broken` mixes in values that violate it. */
  value(schema: Schema | undefined, options: { broken?: boolean } = {}): fc.Arbitrary<unknown> {
    const valid = this.of(schema ?? {}, 0);
    if (!options.broken) return valid;
    return fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: this.broken(schema ?? {}), weight: 1 });
  }

  private resolve(schema: Schema): Schema {
    let s = schema;
    while (typeof s.$ref === 'string') {
      const name = s.$ref.replace('#/components/schemas/', '');
      const { $ref: _ref, ...siblings } = s;
      s = { ...this.components[name], ...siblings };
    }
    return s;
  }

  private of(raw: Schema, depth: number): fc.Arbitrary<unknown> {
    const s = this.resolve(raw);
    if ('const' in s) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
    const branches = (s.anyOf ?? (s.type === undefined ? s.oneOf : undefined)) as Schema[] | undefined;
    if (branches) return fc.oneof(...branches.map((b) => this.of(b, depth + 1)));
    if (Array.isArray(s.type)) return fc.oneof(...s.type.map((t: string) => this.of({ ...s, type: t }, depth)));
    switch (s.type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
      case 'number':
        return this.number(s);
      case 'string':
        return this.string(s);
      case 'array':
        return fc.array(this.of(s.items ?? {}, depth + 1), { minLength: s.minItems ?? 0, maxLength: Math.max(s.minItems ?? 0, depth >= MAX_DEPTH ? 0 : MAX_ITEMS) });
      case 'object':
        return this.object(s, depth);
      default:
        return s.properties ? this.object(s, depth) : fc.jsonValue({ maxDepth: 1 });
    }
  }

  private number(s: Schema): fc.Arbitrary<number> {
    const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + (s.type === 'integer' ? 1 : 1e-6) : -1000);
    const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - (s.type === 'integer' ? 1 : 1e-6) : 1000);
    const cap = (v: number) => Math.max(-1e6, Math.min(1e6, v));
    if (s.type === 'integer') return fc.integer({ min: Math.ceil(cap(min)), max: Math.floor(cap(max)) });
    return fc.double({ min: cap(min), max: cap(max), noNaN: true, noDefaultInfinity: true });
  }

  private string(s: Schema): fc.Arbitrary<string> {
    switch (s.format) {
      case 'uuid':
        return fc.uuid();
      case 'date-time':
        return fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 19));
      case 'date':
        return fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
      case 'email':
        return fc.emailAddress().filter((e) => e.length <= 254);
      case 'uri':
        return fc.constantFrom('https://example.com/hook', 'http://127.0.0.1:9/x', 'https://voice.example.com');
    }
    if (s.pattern) {
      return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length >= (s.minLength ?? 0) && v.length <= (s.maxLength ?? MAX_STRING * 4));
    }
    const minLength = s.minLength ?? 0;
    return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(s.maxLength ?? MAX_STRING, MAX_STRING)) });
  }

  private object(s: Schema, depth: number): fc.Arbitrary<Record<string, unknown>> {
    const required = new Set<string>(s.required ?? []);
    const props = Object.entries((s.properties ?? {}) as Record<string, Schema>).filter(([name]) => depth < MAX_DEPTH || required.has(name));
    // An optional field is left out three times in four: a request with every field set would
    // mostly trip a cross-field rule (idle_end_secs > idle_warn_secs, stt_mode…) and never pass.
    const field = (name: string, prop: Schema) =>
      required.has(name) ? this.of(prop, depth + 1) : fc.oneof({ arbitrary: fc.constant(OMIT), weight: 3 }, { arbitrary: this.of(prop, depth + 1), weight: 1 });
    const known = fc
      .record(Object.fromEntries(props.map(([name, prop]) => [name, field(name, prop)])))
      .map((value) => Object.fromEntries(Object.entries(value).filter(([, v]) => v !== OMIT)));
    const extra = s.additionalProperties;
    if (!extra || typeof extra !== 'object' || depth >= MAX_DEPTH || props.length > 0) return known;
    // A map (`record` in zod): keys as `propertyNames` says, a few entries.
    const key = s.propertyNames ? this.string(this.resolve(s.propertyNames)) : fc.string({ minLength: 1, maxLength: 12 });
    return fc.dictionary(key, this.of(extra, depth + 1), { maxKeys: MAX_ITEMS });
  }

  /** A value that breaks `schema` at its top: a required field left out, or the wrong type. */
  private broken(raw: Schema): fc.Arbitrary<unknown> {
    const s = this.resolve(raw);
    const wrongType = fc.constantFrom<unknown>(42, 'text', true, null, [], {});
    if (s.type !== 'object' || !s.required?.length) return wrongType;
    return fc.tuple(this.object(s, MAX_DEPTH - 1), fc.constantFrom(...(s.required as string[]))).map(([value, drop]) => {
      const copy = { ...value };
      delete copy[drop];
      return copy;
    });
  }
}
