/**
 * Builds the OpenAPI 3.1 document from the route definitions (the schemas that validate requests).
 * OpenAPI 3.1 uses JSON Schema 2020-12, which zod emits directly; named schemas become
 * `components.schemas` (openapi-schemas.ts).
 */
import type { z } from 'zod';
import { SchemaComponents } from './openapi-schemas';
import { ErrorSchema, requiredRole, type AnyRoute } from './route';
import { mcpPathItem } from './mcp/openapi-path';

/**
 * A query flag is parsed from the strings "true"/"false" (some also take "1"/"0"), which zod
 * documents as a string enum; to a client it is a boolean, which every generator writes as
 * `true`/`false` in the URL.
 */
function booleanQuery(prop: Record<string, unknown>): Record<string, unknown> {
  const values = prop.enum as unknown[] | undefined;
  if (prop.type !== 'string' || !values?.includes('true') || !values.includes('false') || !values.every((v) => ['true', 'false', '1', '0'].includes(String(v)))) return prop;
  const { enum: _values, type: _type, default: fallback, ...rest } = prop;
  return { ...rest, type: 'boolean', ...(fallback === undefined ? {} : { default: fallback === 'true' || fallback === '1' }) };
}

function parameters(components: SchemaComponents, schema: z.ZodType | undefined, location: 'path' | 'query') {
  if (!schema) return [];
  const json = components.convert(schema, 'input') as { properties?: Record<string, any>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, prop]) => ({
    name,
    in: location,
    required: location === 'path' || (json.required ?? []).includes(name),
    description: prop.description,
    schema: location === 'query' ? booleanQuery(prop) : prop,
  }));
}

/** Audio is bytes; XML documents and server-sent events are text a client reads as a string. */
function nonJsonSchema(contentType: string): Record<string, unknown> {
  if (contentType === 'text/event-stream') {
    return { type: 'string', description: 'Server-sent events: `id:` the sequence number, `data:` one CallEvent as JSON' };
  }
  return contentType.startsWith('text/') ? { type: 'string' } : { type: 'string', contentMediaType: contentType };
}

const ERROR_TEXT: Record<number, string> = {
  400: 'Malformed JSON body',
  401: 'Missing, invalid or expired credentials',
  403: 'Authenticated but not allowed',
  404: 'Unknown identifier',
  409: 'Conflicts with an existing resource',
  413: 'Body over the size limit',
  415: 'The body is not of the content type the operation takes',
  422: 'Validation failed; `detail` names the field',
  429: 'Too many requests; see Retry-After',
  503: 'A required service is not configured or not reachable',
};

export interface ApiInfo {
  title: string;
  version: string;
  description: string;
  license: { name: string; identifier: string };
}

export function buildOpenApi(routes: AnyRoute[], info: ApiInfo) {
  const components = new SchemaComponents();
  const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') => components.convert(schema, io);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const def of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, doc] of Object.entries(def.responses)) {
      const content = doc.contentType
        ? { [doc.contentType]: { schema: nonJsonSchema(doc.contentType) } }
        : doc.schema
          ? { 'application/json': { schema: jsonSchema(doc.schema, 'output') } }
          : undefined;
      responses[status] = { description: doc.description, ...(content ? { content } : {}) };
    }
    const implied = [
      ...(def.body ? [400, 413, 422] : []),
      ...(def.rawBody ? [413, 415, 422] : []),
      ...(def.query || def.params ? [422] : []),
      ...(def.public ? [] : [401]),
      ...(!def.public && (requiredRole(def) === 'admin' || def.owned) ? [403] : []),
    ];
    for (const status of implied) {
      if (!responses[status]) {
        responses[status] = {
          description: ERROR_TEXT[status],
          content: { 'application/json': { schema: jsonSchema(ErrorSchema, 'output') } },
        };
      }
    }
    for (const [status, value] of Object.entries(responses)) {
      const v = value as { description: string; content?: unknown };
      if (Number(status) >= 400 && !v.content) {
        v.content = { 'application/json': { schema: jsonSchema(ErrorSchema, 'output') } };
      }
    }
    paths[def.path] ??= {};
    paths[def.path]![def.method] = {
      operationId: def.operationId,
      tags: [def.tag],
      summary: def.summary,
      ...(def.description ? { description: def.description } : {}),
      ...(def.public ? { security: [] } : {}),
      // Who may call it: public, member (any signed-in user) or admin; x-owner-or-admin: members only on their own.
      'x-required-role': def.public ? 'public' : requiredRole(def),
      ...(def.owned ? { 'x-owner-or-admin': true } : {}),
      parameters: [...parameters(components, def.params, 'path'), ...parameters(components, def.query, 'query')],
      ...(def.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(def.body, 'input') } } } }
        : def.rawBody
          ? { requestBody: { required: true, description: def.rawBody.description, content: { [def.rawBody.contentType]: { schema: nonJsonSchema(def.rawBody.contentType) } } } }
          : {}),
      responses,
    };
  }
  // Not a REST route: JSON-RPC for MCP clients, written by hand (mcp/openapi-path.ts).
  paths['/mcp'] = mcpPathItem();
  const { schemas } = components.finish(paths);
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/' }],
    components: {
      schemas,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'A JWT from POST /api/auth/login, or an API key (prefix `vap_`) from POST /api/auth/api-keys.',
        },
      },
    },
    security: [{ bearer: [] }],
    paths,
  };
}
