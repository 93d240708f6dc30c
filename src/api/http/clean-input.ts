/**
 * Clean input at the edge: before any route sees a request, every string in its body (JSON or
 * form), query and path is checked for characters no field of this API can hold — NUL (PostgreSQL
 * text cannot store it) and lone UTF-16 surrogates (not valid Unicode; they break JSON encoders
 * and providers downstream) — and JSON nesting is bounded. Such requests get 422 `{detail}`
 * naming the field, on every route, instead of failing somewhere deeper.
 */
import type { RequestHandler } from 'express';
import { HttpError } from '../errors';

/** Deepest nesting of objects and arrays a request body may have (the deepest real one, a flow node's function parameters, is about 8). */
export const JSON_MAX_DEPTH = 32;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function stringProblem(value: string): string | null {
  if (value.includes('\u0000')) return 'contains a NUL character (\\u0000)';
  if (LONE_SURROGATE.test(value)) return 'contains a lone UTF-16 surrogate (not valid Unicode)';
  return null;
}

const fieldName = (path: string[], prefix: string) => [prefix, ...path].filter(Boolean).join('.') || (prefix ? prefix : 'body');

/** Walks a parsed value without recursion (a hostile body cannot exhaust the stack); throws 422 on the first problem. */
export function assertCleanValue(root: unknown, prefix = ''): void {
  const stack: Array<{ value: unknown; path: string[] }> = [{ value: root, path: [] }];
  while (stack.length) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      const problem = stringProblem(value);
      if (problem) throw new HttpError(422, `${fieldName(path, prefix)}: ${problem}`);
    } else if (value !== null && typeof value === 'object') {
      if (path.length >= JSON_MAX_DEPTH) throw new HttpError(422, `${fieldName(path.slice(0, 3), prefix)}: nested deeper than ${JSON_MAX_DEPTH} levels`);
      for (const [key, child] of Object.entries(value)) {
        const problem = stringProblem(key);
        if (problem) throw new HttpError(422, `${fieldName(path, prefix)}: a key ${problem}`);
        stack.push({ value: child, path: [...path, key] });
      }
    }
  }
}

export const cleanInput: RequestHandler = (req, _res, next) => {
  try {
    let decodedPath: string;
    try {
      decodedPath = decodeURIComponent(req.path);
    } catch {
      throw new HttpError(400, 'Malformed percent-encoding in the path');
    }
    assertCleanValue(decodedPath, 'path');
    assertCleanValue(req.query, 'query');
    if (req.body !== undefined) assertCleanValue(req.body);
    next();
  } catch (err) {
    next(err);
  }
};
