/**
 * Mirror timestamps are UTC text in one fixed 24-character form (`YYYY-MM-DDTHH:MM:SS.sssZ`) so
 * that text order is time order in SQLite. Returns null for null/undefined; throws on junk so a
 * bad upstream value is quarantined rather than stored.
 */
export function toIsoTimestamp(value: string | Date | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const date = value instanceof Date ? value : new Date(value);
  const ms = date.getTime();
  if (Number.isNaN(ms)) throw new RangeError(`not a valid timestamp: ${JSON.stringify(value)}`);
  const year = date.getUTCFullYear();
  if (year < 0 || year > 9999) throw new RangeError(`timestamp out of range: ${JSON.stringify(value)}`);
  return date.toISOString();
}

/** Like toIsoTimestamp, for values that must be present. */
export function requireIsoTimestamp(value: string | Date): string {
  const iso = toIsoTimestamp(value);
  if (iso === null) throw new RangeError('timestamp is required');
  return iso;
}

/** Shift an ISO timestamp by a number of milliseconds (negative to go back). */
export function shiftIso(iso: string, ms: number): string {
  return new Date(new Date(iso).getTime() + ms).toISOString();
}
