/**
 * `{{variable}}` substitution with the spec's rules: names are case-sensitive; a placeholder for
 * an unknown variable is left as it is; a variable that is present but empty or null renders as
 * an empty string. Workflow-safe: pure.
 */
export type Variables = Record<string, unknown>;

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

export function substitute(text: string, vars: Variables): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => {
    if (!Object.prototype.hasOwnProperty.call(vars, name)) return whole;
    const value = vars[name];
    if (value === null || value === undefined) return '';
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  });
}

/**
 * Substitutes inside every string of a JSON-like value (tool arguments), keeping its structure:
 * a value holding quotes, backslashes or newlines stays one intact string. Keys are not touched.
 */
export function substituteDeep(value: unknown, vars: Variables): unknown {
  if (typeof value === 'string') return substitute(value, vars);
  if (Array.isArray(value)) return value.map((item) => substituteDeep(item, vars));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substituteDeep(item, vars)]));
  }
  return value;
}

/**
 * The variables of a call at its start: the custom parameters, plus every variable the agent
 * declares in `context_variables` that the caller did not supply, as missing (rendered empty).
 * A placeholder for a name that is neither stays as written.
 */
export function callVariables(customParameters: Variables, declared: Record<string, unknown> | undefined): Variables {
  const missing = Object.fromEntries(Object.keys(declared ?? {}).map((name) => [name, null]));
  return { ...missing, ...customParameters };
}

/** The call-context line injected into the system prompt: `name: value` pairs. */
export function contextLine(vars: Variables): string {
  return Object.entries(vars)
    .map(([k, v]) => `${k}: ${v === null || v === undefined ? '' : String(v)}`)
    .join(', ');
}
