/**
 * Checks answers against the OpenAPI document with ajv (JSON Schema 2020-12, what OpenAPI 3.1
 * uses): is the status documented for the operation, and is the body what its schema says.
 * Formats are checked as this API writes them: `date-time` is the spec's form without an offset.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';

const DOC_ID = 'openapi.json';

export interface Answer {
  status: number;
  contentType: string;
  body: unknown;
}

export class OpenApiValidator {
  private readonly ajv = new Ajv2020({
    strict: false,
    allErrors: false,
    formats: {
      uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
      'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?$/,
      date: /^\d{4}-\d{2}-\d{2}$/,
      email: /^[^\s@]+@[^\s@]+$/,
      uri: (value: string) => URL.canParse(value),
    },
  });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: any) {
    this.ajv.addSchema({ $id: DOC_ID, components: doc.components });
  }

  /** What is wrong with `answer` for the operation, or null when nothing is. */
  problem(method: string, path: string, answer: Answer): string | null {
    const op = this.doc.paths[path]?.[method.toLowerCase()];
    const doc = op?.responses?.[String(answer.status)];
    if (!doc) return `undocumented status ${answer.status}`;
    if (answer.status >= 400 && !answer.contentType.startsWith('application/json')) return `error ${answer.status} as ${answer.contentType || 'no content type'}`;
    const schema = doc.content?.['application/json']?.schema;
    if (!schema) return null;
    if (!answer.contentType.startsWith('application/json')) return `${answer.status} as ${answer.contentType}, documented as JSON`;
    const key = `${method} ${path} ${answer.status}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`)));
      this.compiled.set(key, validate);
    }
    if (validate(answer.body)) return null;
    const e = validate.errors![0]!;
    return `${answer.status} body outside its schema: ${e.instancePath || '/'} ${e.message} (${e.schemaPath})`;
  }
}
