import { createHash } from 'node:crypto';
import { inspect } from 'node:util';
import { isCalendarDate, toDbTimestamp } from '../util/time.js';
import { StoreError } from './errors.js';
import type { FieldRow } from './schema.js';

/** Upstream timestamp → the stored 23-char UTC form (docs/schema.md); junk becomes INVALID_VALUE (quarantinable). */
export function ts(value: unknown, what: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' && !(value instanceof Date)) {
    throw new StoreError('INVALID_VALUE', `${what} is not a timestamp: ${JSON.stringify(value)}`);
  }
  try {
    return toDbTimestamp(value);
  } catch (cause) {
    throw new StoreError('INVALID_VALUE', `${what} is not a valid timestamp: ${JSON.stringify(value)}`, { cause });
  }
}

export function requiredTs(value: unknown, what: string): string {
  const iso = ts(value, what);
  if (iso === null) throw new StoreError('INVALID_VALUE', `${what} is missing`);
  return iso;
}

/** 0/1 binds in both dialects (PostgreSQL accepts '0'/'1' as boolean input); better-sqlite3 cannot bind JS booleans. */
export function bool(value: unknown): 0 | 1 | null {
  if (value === null || value === undefined) return null;
  return value ? 1 : 0;
}

// PostgreSQL text and jsonb cannot hold U+0000; it is replaced in both dialects so they hold the
// same data and one bad character cannot fail a whole page's transaction.
export const noNul = (s: string) => (s.includes('\u0000') ? s.replaceAll('\u0000', '\uFFFD') : s);
const jsonReplacer = (_key: string, v: unknown) => (typeof v === 'string' ? noNul(v) : typeof v === 'bigint' ? v.toString() : v);

/** JSON text that never throws (a cycle falls back to its inspect() text): raw data must always be storable. */
export function json(value: unknown): string | null {
  if (value === undefined) return null;
  // A replacer function takes V8 off its fast serialiser (it was a large share of a backfill's
  // CPU), so try without one first. The replacer only changes strings holding U+0000 (which JSON
  // writes as \u0000) and bigints (which throw here), so output without either is the same text.
  try {
    const fast = JSON.stringify(value);
    if (fast === undefined) return null;
    // Keys as well as values: an escape preceded by an even run of backslashes is a real U+0000.
    return fast.includes('\\u0000') ? fast.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd') : fast;
  } catch {
    // A bigint or a cycle: the replacer path below decides.
  }
  try {
    return JSON.stringify(value, jsonReplacer) ?? null;
  } catch {
    return JSON.stringify(noNul(inspect(value)));
  }
}

export function str(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return noNul(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return json(value); // objects and arrays as their JSON text
}

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;

/**
 * Canonical decimal text and exact integer cents, by string arithmetic only (floats would turn
 * 19.99 into 1998.9999…). At least two decimals are kept ("12.5" → "12.50"); cents round half away
 * from zero when more than two decimals arrive.
 */
export function parseAmount(value: unknown): { amount: string | null; cents: number | null } {
  if (value === null || value === undefined || value === '') return { amount: null, cents: null };
  const text = typeof value === 'number' && Number.isFinite(value) ? numberToPlain(value) : value;
  const m = typeof text === 'string' ? DECIMAL.exec(text.trim()) : null;
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) {
    throw new StoreError('INVALID_VALUE', `deal amount is not a decimal number: ${JSON.stringify(value)}`);
  }
  const negative = m[1] === '-';
  const intPart = (m[2] ?? '').replace(/^0+(?=\d)/, '') || '0';
  const frac = m[3] ?? '';
  const fracOut = frac.length >= 2 ? frac : frac.padEnd(2, '0');
  let cents = BigInt(intPart) * 100n + BigInt(fracOut.slice(0, 2));
  if (frac.length > 2 && Number(frac[2]) >= 5) cents += 1n;
  if (cents > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new StoreError('INVALID_VALUE', `deal amount is too large to store exactly: ${JSON.stringify(value)}`);
  }
  // "-0.00" is stored as "0.00"; cents never become -0.
  const sign = negative && /[1-9]/.test(intPart + frac) ? '-' : '';
  return { amount: `${sign}${intPart}.${fracOut}`, cents: negative && cents !== 0n ? -Number(cents) : Number(cents) };
}

/** Exact decimal text of integer cents ("1200.50"): the value history rows hold for an amount. */
export function centsText(cents: number | null): string | null {
  if (cents === null) return null;
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

function numberToPlain(n: number): string {
  // toString gives exponent form beyond 1e21; toFixed covers every amount worth storing.
  const s = String(n);
  return /e/i.test(s) ? n.toFixed(2) : s;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** Close dates stay calendar dates ('yyyy-mm-dd'); a full timestamp is cut to its UTC date. */
export function dateOnly(value: unknown, what: string): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'string' && DATE_ONLY.test(value)) {
    if (isCalendarDate(value)) return value;
    throw new StoreError('INVALID_VALUE', `${what} is not a real calendar date: ${JSON.stringify(value)}`);
  }
  const iso = ts(value, what);
  return iso === null ? null : iso.slice(0, 10);
}

/** ticket_fields / deal_fields rows: value_text for scalars, value_json always. */
export function fieldRows(fields: Record<string, unknown> | null | undefined): FieldRow[] {
  if (!fields || typeof fields !== 'object') return [];
  return Object.entries(fields).map(([key, value]) => ({
    key: noNul(key),
    value_text:
      typeof value === 'string'
        ? noNul(value)
        : typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint'
          ? String(value)
          : null,
    value_json: json(value ?? null),
  }));
}

/** Stable primary-key stand-in for a quarantined record whose id could not be read. */
export function unknownId(raw: unknown): string {
  return `unknown:${createHash('sha1')
    .update(json(raw) ?? 'undefined')
    .digest('hex')}`;
}

/** Keeps the first of each key, in order (upstream lists may repeat an id or tag). */
export function uniqueBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = key(item);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The references of one record as its own upsert wrote them: those with an id, the first of each. */
export function firstOfEach<R extends { id?: unknown }>(refs: readonly (R | null | undefined)[]): R[] {
  return uniqueBy(
    refs.filter((r): r is R => !!r && r.id !== null && r.id !== undefined),
    (r) => String(r.id),
  );
}

/**
 * The references of several records, one per id, as upserting the records one after another
 * would leave them: a reference's upsert keeps the stored value where it brings null, so per
 * field the last non-null value wins. Ids keep their order of first appearance.
 */
export function foldRefs<R extends { id?: unknown }>(perRecord: readonly (readonly R[])[]): R[] {
  const out = new Map<string, R>();
  for (const refs of perRecord) {
    for (const r of refs) {
      const key = String(r.id);
      const before = out.get(key);
      if (!before) {
        out.set(key, r);
        continue;
      }
      const merged: Record<string, unknown> = { ...before };
      for (const [k, v] of Object.entries(r)) if (v !== null && v !== undefined) merged[k] = v;
      out.set(key, merged as R);
    }
  }
  return [...out.values()];
}
