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

/**
 * A lone UTF-16 surrogate (half of a pair, e.g. `"k\ud800ey"` in the upstream's JSON) is no
 * Unicode text: SQLite would store it as invalid UTF-8, which other readers (Python's sqlite3)
 * cannot decode, and PostgreSQL's jsonb refuses its escape.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
// Native on Node 20 (not yet in the ES2023 lib types): a fast check for the common clean string.
const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * Text both stores can hold and every reader can decode: U+0000 (PostgreSQL's text and jsonb
 * cannot hold it) and lone surrogates become U+FFFD, in both dialects, so they hold the same data
 * and one bad character cannot fail a write (docs/schema.md, "How values are stored").
 */
export function cleanText(s: string): string {
  let out = s.includes('\u0000') ? s.replaceAll('\u0000', '\uFFFD') : s;
  if (!wellFormed(out)) out = out.replace(LONE_SURROGATE, '\uFFFD');
  return out;
}

/** The first name of {@link cleanText}, from when U+0000 was the only character replaced. */
export const noNul = cleanText;
const jsonReplacer = (_key: string, v: unknown) => (typeof v === 'string' ? cleanText(v) : typeof v === 'bigint' ? v.toString() : v);

// JSON.stringify writes U+0000 as \u0000 and a lone surrogate as \udXXX (a pair stays as is), in
// keys and values alike; an escape preceded by an even run of backslashes is a real one.
const UNSTORABLE_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/g;

/**
 * JSON text that never throws (a cycle falls back to its inspect() text): raw data must always be
 * storable. U+0000 and lone surrogates become U+FFFD as in {@link cleanText}; two keys of one
 * object that only differed there then repeat in the text, where PostgreSQL's jsonb keeps the last.
 */
export function json(value: unknown): string | null {
  if (value === undefined) return null;
  // A replacer function takes V8 off its fast serialiser (it was a large share of a backfill's
  // CPU), so try without one first. The replacer only changes strings holding U+0000 or a lone
  // surrogate (which JSON writes as escapes) and bigints (which throw here), so output without
  // either is the same text.
  try {
    const fast = JSON.stringify(value);
    if (fast === undefined) return null;
    return fast.includes('\\u0000') || fast.includes('\\ud') ? fast.replace(UNSTORABLE_ESCAPE, '$1\\ufffd') : fast;
  } catch {
    // A bigint or a cycle: the replacer path below decides.
  }
  try {
    const text = JSON.stringify(value, jsonReplacer);
    // Keys are not seen by a replacer: clean their escapes in the text.
    return text === undefined ? null : text.replace(UNSTORABLE_ESCAPE, '$1\\ufffd');
  } catch {
    return JSON.stringify(cleanText(inspect(value)));
  }
}

/** Stands for an array already written (jsonWithList); found in a text only where it was put. */
const LIST_MARK = '@@wsmirror:list:9c41e7@@';
const QUOTED_MARK = JSON.stringify(LIST_MARK);

/**
 * json(record) when the array `record[key]` has already been written item by item as `texts`
 * (json of each): the items are not serialised a second time. A ticket's messages are most of
 * its text and each is stored on its own too (src/store/tickets.ts): that second serialisation
 * was about 3 % of an L backfill's CPU (bench/README.md, "Thirteenth pass"). The same text as
 * json(record): an array's JSON is its items' JSON between brackets, comma-separated, and json's
 * cleaning of escapes works within one string literal, so item by item it cleans the same ones.
 * Falls back to json(record) whenever that could differ (a missing item text, the mark found
 * elsewhere in the record).
 */
export function jsonWithList(record: object, key: string, texts: readonly (string | null)[]): string | null {
  const list = (record as Record<string, unknown>)[key];
  if (!Array.isArray(list) || list.length !== texts.length || texts.some((t) => t === null)) return json(record);
  const head = json({ ...record, [key]: LIST_MARK });
  const at = head === null ? -1 : head.indexOf(QUOTED_MARK);
  if (head === null || at < 0 || head.indexOf(QUOTED_MARK, at + 1) >= 0) return json(record);
  return `${head.slice(0, at)}[${texts.join(',')}]${head.slice(at + QUOTED_MARK.length)}`;
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

/**
 * ticket_fields / deal_fields rows: value_text for scalars, value_json always. Keys are cleaned
 * like any text (cleanText); two keys that only differed in what cleaning replaced would be one
 * row, and keeping either value would lose the other silently, so the record is refused
 * (StoreError INVALID_VALUE: quarantined with this reason, its previous copy kept).
 */
export function fieldRows(fields: Record<string, unknown> | null | undefined): FieldRow[] {
  if (!fields || typeof fields !== 'object') return [];
  const seen = new Map<string, string>();
  return Object.entries(fields).map(([raw, value]) => {
    const key = cleanText(raw);
    const before = seen.get(key);
    if (before !== undefined) {
      throw new StoreError(
        'INVALID_VALUE',
        `custom fields ${JSON.stringify(before)} and ${JSON.stringify(raw)} are one key (${JSON.stringify(key)}) once text that is not valid Unicode (U+0000, a lone UTF-16 surrogate) is replaced by U+FFFD; keeping either would lose the other`,
      );
    }
    seen.set(key, raw);
    return {
      key,
      value_text:
        typeof value === 'string'
          ? cleanText(value)
          : typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint'
            ? String(value)
            : null,
      value_json: json(value ?? null),
    };
  });
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
