/** The stored form (toDbTimestamp): date and time, UTC, no zone. */
const DB_FORM = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}\.\d{3})$/;

/**
 * The sync's own time text: UTC in one fixed 24-character ISO form (`YYYY-MM-DDTHH:MM:SS.sssZ`),
 * what upstream times are compared in; the mirror stores toDbTimestamp's form. Returns null for
 * null/undefined; throws on junk so a bad upstream value is quarantined rather than stored.
 */
export function toIsoTimestamp(value: string | Date | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  // The stored form has no zone and is UTC; Date would read it as local time.
  const stored = typeof value === 'string' ? DB_FORM.exec(value) : null;
  const date = value instanceof Date ? value : new Date(stored ? `${stored[1]}T${stored[2]}Z` : value);
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

/**
 * The mirror's stored timestamp form (docs/schema.md): `YYYY-MM-DD HH:MM:SS.SSS`, UTC, always 23
 * characters. It is SQLite's own form, so text order is time order and text comparison with
 * `datetime()` and with the literals BI tools write is correct. Accepts anything toIsoTimestamp
 * does, plus this form itself (read as UTC, never as local time).
 */
export function toDbTimestamp(value: string | Date | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' && DB_FORM.test(value)) return value;
  const iso = toIsoTimestamp(value) as string;
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
}

/** A stored timestamp (either form) as the 24-char ISO text the sync compares with upstream times. */
export function fromDbTimestamp(value: string | Date | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') {
    const m = DB_FORM.exec(value);
    if (m) return `${m[1]}T${m[2]}Z`;
  }
  return toIsoTimestamp(value);
}

/** Milliseconds since the epoch of a stored or upstream timestamp; the zone-less stored form is UTC. */
export function parseTimestamp(value: string): number {
  const m = DB_FORM.exec(value);
  return Date.parse(m ? `${m[1]}T${m[2]}Z` : value);
}
