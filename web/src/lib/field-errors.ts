/**
 * The API's 422 answers name the field in `detail` ("pipeline_settings.idle_end_secs: must be …",
 * several joined by "; "). This splits them so a form can show each message next to its field;
 * whatever names no known field stays a general message.
 */
export interface SplitErrors {
  fields: Record<string, string>;
  general: string[];
}

export function splitFieldErrors(detail: string, knownFields: (field: string) => boolean): SplitErrors {
  const out: SplitErrors = { fields: {}, general: [] };
  for (const part of detail.split('; ')) {
    const match = /^([A-Za-z_][\w.]*): (.+)$/s.exec(part);
    const field = match?.[1];
    if (match && field && knownFields(field)) out.fields[field] = match[2]!;
    else out.general.push(part);
  }
  return out;
}

/** The closest known form path for an API path: "tool_ids.0" → "tool_ids" when only that is known. */
export function nearestField(field: string, known: readonly string[]): string | undefined {
  const parts = field.split('.');
  for (let n = parts.length; n > 0; n--) {
    const candidate = parts.slice(0, n).join('.');
    if (known.includes(candidate)) return candidate;
  }
  return undefined;
}
