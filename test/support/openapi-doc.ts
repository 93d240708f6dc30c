/**
 * The OpenAPI document with every `$ref` to a component replaced by the component itself (its
 * siblings, such as a description, kept), for tests that look at an operation's schema as a
 * whole rather than follow the references the way a client generator does.
 */
export function inlineRefs<T>(doc: T): T {
  const schemas = (doc as { components?: { schemas?: Record<string, unknown> } }).components?.schemas ?? {};
  const inline = (node: unknown, seen: string[]): unknown => {
    if (Array.isArray(node)) return node.map((item) => inline(item, seen));
    if (!node || typeof node !== 'object') return node;
    const { $ref, ...rest } = node as Record<string, unknown>;
    const own = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, inline(v, seen)]));
    if (typeof $ref !== 'string' || !$ref.startsWith('#/components/schemas/')) return $ref === undefined ? own : { $ref, ...own };
    const name = $ref.slice('#/components/schemas/'.length);
    if (seen.includes(name)) return { $ref, ...own };
    return { ...(inline(schemas[name], [...seen, name]) as object), ...own };
  };
  return { ...doc, paths: inline((doc as { paths: unknown }).paths, []) } as T;
}
