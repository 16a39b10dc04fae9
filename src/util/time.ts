/** The stored form (toDbTimestamp): date and time, UTC, no zone. */
const DB_FORM = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}\.\d{3})$/;

/**
 * ISO 8601 / RFC 3339 as a server may send it: a calendar date, then optionally a time (`T`, hours
 * and minutes, optional seconds, any number of fraction digits) with a zone (`Z`, `±HH:MM`, `±HHMM`
 * or `±HH`). Groups: year, month, day, hour, minute, second, fraction, zone.
 */
const ISO_FORM = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** Days of a month of the proleptic Gregorian calendar (month 1–12). */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Milliseconds since the epoch of a UTC calendar date and time; years 0–99 stay years 0–99. */
function utcMs(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): number {
  // Date.UTC reads years 0–99 as 1900–1999; from 100 on it is exact and allocates nothing.
  if (y >= 100) return Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, ms);
  return date.getTime();
}

/** The number of `n` ASCII digits at `from`, or -1 when any is not a digit. */
function digitsAt(s: string, from: number, n: number): number {
  let v = 0;
  for (let i = from; i < from + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/**
 * The instant of a timestamp in the one canonical UTC form (`YYYY-MM-DDTHH:MM:SS.sssZ`, what
 * `toISOString` writes and what the simulator and most servers send), read by character codes;
 * null for any other text and for a time no calendar has (readInstant then says why). An L
 * backfill reads about half a million such timestamps: the general expression's match array and
 * conversions were about 2 % of its CPU (bench/README.md, "Thirteenth pass").
 */
export function canonicalInstant(s: string): number | null {
  // - - T : : . Z at their places
  if (s.length !== 24 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84) return null;
  if (s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58 || s.charCodeAt(19) !== 46 || s.charCodeAt(23) !== 90) return null;
  const y = digitsAt(s, 0, 4);
  const mo = digitsAt(s, 5, 2);
  const d = digitsAt(s, 8, 2);
  const h = digitsAt(s, 11, 2);
  const mi = digitsAt(s, 14, 2);
  const sec = digitsAt(s, 17, 2);
  const ms = digitsAt(s, 20, 3);
  if (
    y < 0 ||
    mo < 1 ||
    mo > 12 ||
    d < 1 ||
    d > daysInMonth(y, mo) ||
    h < 0 ||
    h > 23 ||
    mi < 0 ||
    mi > 59 ||
    sec < 0 ||
    sec > 59 ||
    ms < 0
  )
    return null;
  return utcMs(y, mo, d, h, mi, sec, ms);
}

/** What a strict reading of a timestamp found: its instant, or why it is none. */
export type StrictInstant =
  | { ok: true; ms: number }
  /** `impossible`: the text has the form but names no real instant (31 November, hour 24, …). */
  | { ok: false; why: string; impossible: boolean };

/**
 * Reads an ISO 8601 timestamp strictly: every part must be a real calendar value (month 1–12, a
 * day that month has, hour 0–23, minute and second 0–59, a zone offset of at most 23:59), so
 * `2026-11-31T12:00:00Z`, hour 24 or 29 February of a common year are refused instead of rolled
 * over, as `Date.parse` does. A fraction finer than a millisecond is cut to the millisecond (the
 * mirror stores milliseconds). A date alone is midnight UTC; a time without a zone is refused
 * unless `zoneless` says how to read it ('utc' for the mirror's own stored form).
 */
export function readInstant(text: string, zoneless: 'refuse' | 'utc' = 'refuse'): StrictInstant {
  const canonical = canonicalInstant(text);
  if (canonical !== null) return { ok: true, ms: canonical };
  const m = ISO_FORM.exec(text);
  if (!m) return { ok: false, why: 'not an ISO 8601 timestamp', impossible: false };
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12) return { ok: false, why: `month ${m[2]} does not exist`, impossible: true };
  if (d < 1 || d > daysInMonth(y, mo)) return { ok: false, why: `day ${m[3]} does not exist in ${m[1]}-${m[2]}`, impossible: true };
  if (m[4] === undefined) return { ok: true, ms: utcMs(y, mo, d, 0, 0, 0, 0) };
  const [h, mi, s] = [Number(m[4]), Number(m[5]), Number(m[6] ?? '0')];
  if (h > 23) return { ok: false, why: `hour ${m[4]} does not exist`, impossible: true };
  if (mi > 59) return { ok: false, why: `minute ${m[5]} does not exist`, impossible: true };
  if (s > 59) return { ok: false, why: `second ${m[6]} does not exist`, impossible: true };
  const ms = Number((m[7] ?? '').slice(0, 3).padEnd(3, '0'));
  const zone = m[8];
  if (zone === undefined && zoneless === 'refuse')
    return { ok: false, why: 'it has no zone (Z or an offset), so its instant is ambiguous', impossible: false };
  let offsetMinutes = 0;
  if (zone !== undefined && zone !== 'Z' && zone !== 'z') {
    const digits = zone.slice(1).replace(':', '');
    const [oh, om] = [Number(digits.slice(0, 2)), Number(digits.slice(2) || '0')];
    if (oh > 23 || om > 59) return { ok: false, why: `offset ${zone} does not exist`, impossible: true };
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (oh * 60 + om);
  }
  return { ok: true, ms: utcMs(y, mo, d, h, mi, s, ms) - offsetMinutes * 60_000 };
}

/**
 * Instants of upstream timestamps the validator has already read strictly (src/api/schemas.ts),
 * which checks at least what toIsoTimestamp does (a zone, a real calendar instant, years 1–9999),
 * so the store converts them without reading them again: that second read was about 3 % of a
 * backfill's CPU (issue 30). Bounded: past the bound it starts afresh, and a text it no longer
 * holds is simply read again, with the same checks. A text in the canonical form is not kept:
 * canonicalInstant reads it again faster than the map holds it.
 */
const checkedInstants = new Map<string, number>();
const MAX_CHECKED = 20_000;

/** Records that `text` passed the validator's strict reading, as the instant `ms`. */
export function rememberCheckedInstant(text: string, ms: number): void {
  if (canonicalInstant(text) !== null) return;
  if (checkedInstants.size >= MAX_CHECKED) checkedInstants.clear();
  checkedInstants.set(text, ms);
}

/** The instant of a timestamp text: the stored form (zoneless, UTC) or ISO 8601 with a zone. */
function readText(value: string): number {
  // The stored form has no zone and is UTC; Date would read it as local time.
  const stored = DB_FORM.exec(value);
  const read = stored ? readInstant(`${stored[1]}T${stored[2]}`, 'utc') : readInstant(value);
  if (!read.ok) throw new RangeError(`not a valid timestamp (${read.why}): ${JSON.stringify(value)}`);
  return read.ms;
}

/** True for a real `yyyy-mm-dd` calendar date (no time): `2026-02-29` is not one. */
export function isCalendarDate(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && readInstant(text).ok;
}

/**
 * The sync's own time text: UTC in one fixed 24-character ISO form (`YYYY-MM-DDTHH:MM:SS.sssZ`),
 * what upstream times are compared in; the mirror stores toDbTimestamp's form. Returns null for
 * null/undefined; throws on junk, and on a time that is not a real calendar instant (readInstant),
 * so a bad upstream value is quarantined rather than stored, never rolled over.
 */
export function toIsoTimestamp(value: string | Date | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  // Already the one form toISOString writes, and a real instant of years 0–9999: itself.
  if (typeof value === 'string' && canonicalInstant(value) !== null) return value;
  const ms = value instanceof Date ? value.getTime() : (checkedInstants.get(value) ?? readText(value));
  if (Number.isNaN(ms)) throw new RangeError(`not a valid timestamp: ${JSON.stringify(value)}`);
  const date = new Date(ms);
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
  // Already UTC to the millisecond and a real instant: the stored form is its own digits.
  if (typeof value === 'string' && canonicalInstant(value) !== null) return `${value.slice(0, 10)} ${value.slice(11, 23)}`;
  if (typeof value === 'string' && DB_FORM.test(value) && readInstant(value.replace(' ', 'T'), 'utc').ok) return value;
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
