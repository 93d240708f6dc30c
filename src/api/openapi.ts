/**
 * Builds the OpenAPI 3.1 document from the route definitions (the schemas that validate requests).
 * OpenAPI 3.1 uses JSON Schema 2020-12, which zod emits directly.
 */
import { z } from 'zod';
import { ErrorSchema, requiredRole, type AnyRoute } from './route';

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any', reused: 'inline' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

function parameters(schema: z.ZodType | undefined, location: 'path' | 'query') {
  if (!schema) return [];
  const json = jsonSchema(schema, 'input') as { properties?: Record<string, any>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, prop]) => ({
    name,
    in: location,
    required: location === 'path' || (json.required ?? []).includes(name),
    description: prop.description,
    schema: prop,
  }));
}

const ERROR_TEXT: Record<number, string> = {
  400: 'Malformed JSON body',
  401: 'Missing, invalid or expired credentials',
  403: 'Authenticated but not allowed',
  404: 'Unknown identifier',
  409: 'Conflicts with an existing resource',
  413: 'Body over the size limit',
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
  const paths: Record<string, Record<string, unknown>> = {};
  for (const def of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, doc] of Object.entries(def.responses)) {
      const content = doc.contentType
        ? { [doc.contentType]: { schema: { type: 'string', format: 'binary' } } }
        : doc.schema
          ? { 'application/json': { schema: jsonSchema(doc.schema, 'output') } }
          : undefined;
      responses[status] = { description: doc.description, ...(content ? { content } : {}) };
    }
    const implied = [
      ...(def.body ? [400, 413, 422] : []),
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
      parameters: [...parameters(def.params, 'path'), ...parameters(def.query, 'query')],
      ...(def.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(def.body, 'input') } } } }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/' }],
    components: {
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
