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

/** The call-context line injected into the system prompt: `name: value` pairs. */
export function contextLine(vars: Variables): string {
  return Object.entries(vars)
    .map(([k, v]) => `${k}: ${v === null || v === undefined ? '' : String(v)}`)
    .join(', ');
}
