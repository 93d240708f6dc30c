/** The API's timestamp forms: ISO 8601 UTC without offset suffix (the spec's convention). */
export function apiTimestamp(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return new Date(value).toISOString().slice(0, 19);
}

/** The event trace keeps fractional seconds (milliseconds). */
export function apiTimestampPrecise(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return new Date(value).toISOString().slice(0, 23);
}
