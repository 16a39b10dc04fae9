import { CompiledQuery, type Kysely } from 'kysely';
import { dialectOf } from './dialect.js';
import type { MirrorDatabase } from './schema.js';
import { chunks } from './values.js';

type Db = Kysely<MirrorDatabase>;

/**
 * Hand-written SQL for the per-record write path. Building each statement through Kysely's query
 * builder (nodes, freezing, expression builders) cost about as much CPU as SQLite executing it;
 * these statements have a fixed shape, so their text is built once and only the parameters vary.
 * The text is written with `?` placeholders, valid in both dialects except for the placeholder,
 * which PostgreSQL spells `$n`.
 */

const pgText = new Map<string, string>();

function forDialect(db: Db, text: string): string {
  if (dialectOf(db) !== 'postgres') return text;
  let out = pgText.get(text);
  if (out === undefined) {
    let n = 0;
    // The statements here never hold a literal '?', so every one is a placeholder.
    out = text.replace(/\?/g, () => `$${++n}`);
    pgText.set(text, out);
  }
  return out;
}

/** Runs one statement; rows for a query, [] for a write. */
export async function run<R = Record<string, unknown>>(db: Db, text: string, params: readonly unknown[]): Promise<R[]> {
  const result = await db.executeQuery<R>(CompiledQuery.raw(forDialect(db, text), params as unknown[]));
  return result.rows as R[];
}

export const q = (name: string) => `"${name}"`;

// 999 was SQLite's variable limit before 3.32 and stays far under PostgreSQL's 65535; staying
// under it keeps the statement shapes few, so the statement cache keeps them prepared.
const MAX_PARAMS = 999;

const insertText = new Map<string, string>();

/**
 * Multi-row INSERT of `rows` (values in `columns` order), chunked under the parameter limit.
 * `tail` is appended verbatim (an ON CONFLICT clause, or '').
 */
export async function insertRows(
  db: Db,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  tail = '',
): Promise<void> {
  const perStatement = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
  for (const batch of chunks(rows, perStatement)) {
    const key = `${table}\u0000${columns.join(',')}\u0000${batch.length}\u0000${tail}`;
    let text = insertText.get(key);
    if (text === undefined) {
      const tuple = `(${columns.map(() => '?').join(',')})`;
      text = `insert into ${q(table)} (${columns.map(q).join(',')}) values ${Array(batch.length).fill(tuple).join(',')} ${tail}`;
      insertText.set(key, text);
    }
    await run(db, text, batch.flat());
  }
}

/** ON CONFLICT clause that overwrites `columns` with the incoming values. */
export function overwrite(conflict: readonly string[], columns: readonly string[]): string {
  return `on conflict (${conflict.map(q).join(',')}) do update set ${columns.map((c) => `${q(c)} = excluded.${q(c)}`).join(', ')}`;
}

/** ON CONFLICT clause for partial references: an incoming null never erases a known value. */
export function coalesceInto(table: string, columns: readonly string[]): string {
  return `on conflict ("id") do update set ${columns.map((c) => `${q(c)} = coalesce(excluded.${q(c)}, ${q(table)}.${q(c)})`).join(', ')}`;
}

/** Deletes rows of one parent whose key column is in `keys`, chunked under the parameter limit. */
export async function deleteKeys(db: Db, table: string, parentColumn: string, parentId: string, keyColumn: string, keys: readonly string[]): Promise<void> {
  for (const batch of chunks(keys, MAX_PARAMS - 1)) {
    const text = `delete from ${q(table)} where ${q(parentColumn)} = ? and ${q(keyColumn)} in (${batch.map(() => '?').join(',')})`;
    await run(db, text, [parentId, ...batch]);
  }
}
