import { createHash } from 'node:crypto';
import type { AddedColumnKind } from '../store/dialect.js';

/**
 * How a custom field key becomes a typed column (docs/schema.md, "Custom fields as columns"): the
 * type its values fit, and a column name that is a plain SQL identifier in both dialects.
 */

/** A column's type; `null` while every value seen is null (the key has no column yet). */
export type CustomFieldType = AddedColumnKind;

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,3})?(Z|([+-])(\d{2}):(\d{2}))$/;

/** A real calendar day (no 31 November), in years both dialects read alike. */
function realDay(y: number, m: number, d: number): boolean {
  if (y < 1000 || y > 9999) return false;
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

/** An ISO 8601 instant with its offset, at most millisecond precision: both dialects turn it into the same UTC time. */
function isInstant(s: string): boolean {
  const m = INSTANT.exec(s);
  if (!m) return false;
  const [h, min, sec] = [Number(m[4]), Number(m[5]), Number(m[6])];
  if (h > 23 || min > 59 || sec > 59) return false;
  if (m[9] !== undefined && (Number(m[10]) > 14 || Number(m[11]) > 59)) return false;
  return realDay(Number(m[1]), Number(m[2]), Number(m[3]));
}

/**
 * The narrowest type that holds one value exactly, from the stored text (`value_text`) and JSON
 * (`value_json` as text); null for a JSON null. A value none of the narrow types holds exactly
 * (a string, an object, a number beyond a double, a timestamp with microseconds) is text.
 */
export function typeOfValue(valueText: string | null, jsonText: string | null): CustomFieldType | null {
  let v: unknown;
  try {
    v = jsonText === null ? null : JSON.parse(jsonText);
  } catch {
    return 'text';
  }
  if (v === null) return null;
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return valueText !== null && NUMBER.test(valueText) && Number.isFinite(Number(valueText)) ? 'number' : 'text';
  if (typeof v !== 'string' || valueText !== v) return 'text';
  const d = DATE.exec(v);
  if (d) return realDay(Number(d[1]), Number(d[2]), Number(d[3])) ? 'date' : 'text';
  return isInstant(v) ? 'timestamp' : 'text';
}

/** The type that holds the values of both: the same type, else text (a column only ever widens to text). */
export function joinTypes(a: CustomFieldType | null, b: CustomFieldType | null): CustomFieldType | null {
  if (a === null) return b;
  if (b === null || a === b) return a;
  return 'text';
}

/** PostgreSQL cuts identifiers at 63 bytes; names are ASCII, so 63 characters. */
export const MAX_IDENTIFIER = 63;

/**
 * Words a column may not be called unquoted: PostgreSQL's reserved key words (including those
 * that may only name a function or type) and the few more SQLite refuses as a column name.
 */
// prettier-ignore
const RESERVED = new Set(`
all analyse analyze and any array as asc asymmetric authorization binary both case cast check collate collation column
concurrently constraint create cross current_catalog current_date current_role current_schema current_time
current_timestamp current_user default deferrable desc distinct do else end except false fetch for foreign freeze from
full grant group having ilike in initially inner intersect into is isnull join lateral leading left like limit localtime
localtimestamp natural not notnull null offset on only or order outer overlaps placing primary references returning
right select session_user similar some symmetric system_user table tablesample then to trailing true union unique user
using variadic verbose when where window with
autoincrement between commit delete drop escape exists index insert nothing set transaction update values`.split(/\s+/).filter(Boolean));

/** A short, stable tag of the key, so a cut name still tells keys apart. */
const tag = (key: string) => createHash('sha1').update(key).digest('hex').slice(0, 8);

/**
 * A key's column name before collisions are settled: lower-case ASCII letters, digits and `_`
 * (accents dropped, every other run of characters one `_`), never starting with a digit, never a
 * reserved word nor one of the table's own columns (then `_field` is appended), at most 63
 * characters (a longer one is cut and ends in `_` and 8 hex digits of the key's SHA-1).
 */
export function baseColumnName(key: string, own: readonly string[]): string {
  let s = key
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (s === '') s = 'field';
  if (/^[0-9]/.test(s)) s = `f_${s}`;
  if (RESERVED.has(s) || own.includes(s)) s = `${s}_field`;
  if (s.length > MAX_IDENTIFIER) s = `${s.slice(0, MAX_IDENTIFIER - 9)}_${tag(key)}`;
  return s;
}

/**
 * The column name for a new key, given the names the catalog already gave: the base name, else the
 * first free `<base>_2`, `<base>_3`, … (cut so the whole stays within 63 characters). Names once
 * given are kept for good, so a key's column never moves to another key.
 */
export function columnNameFor(key: string, own: readonly string[], taken: ReadonlySet<string>): string {
  const base = baseColumnName(key, own);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const name = `${base.slice(0, MAX_IDENTIFIER - suffix.length)}${suffix}`;
    if (!taken.has(name) && !own.includes(name)) return name;
  }
}
