import type { Kysely } from 'kysely';
import type { MirrorDatabase } from './schema.js';
import { MAX_PARAMS, q, run } from './sql.js';
import { capabilitiesOf } from './dialect.js';
import { chunks } from './values.js';
import type { RecordType } from '../entities/index.js';

type Db = Kysely<MirrorDatabase>;

/**
 * Statements over a set of keys, so a batch of records costs one statement per table instead of
 * one per record. Every key list is padded (with its last key) to a power of two: few statement
 * texts are ever prepared, and a repeated key matches nothing more.
 */

const marks = (n: number) => Array(n).fill('?').join(',');

function padded<T>(items: readonly T[]): readonly T[] {
  let size = 1;
  while (size < items.length) size *= 2;
  return size === items.length ? items : [...items, ...Array<T>(size - items.length).fill(items[items.length - 1]!)];
}

/** Rows of `table` whose `column` is one of `keys` (`columns` selected), chunked under the parameter limit. */
export async function selectIn<R>(
  db: Db,
  columns: readonly string[],
  table: string,
  column: string,
  keys: readonly string[],
): Promise<R[]> {
  const out: R[] = [];
  for (const batch of chunks([...new Set(keys)], 512).map(padded)) {
    out.push(
      ...(await run<R>(db, `select ${columns.map(q).join(', ')} from ${q(table)} where ${q(column)} in (${marks(batch.length)})`, batch)),
    );
  }
  return out;
}

/** Deletes the rows of `table` whose `column` is one of `keys`, chunked under the parameter limit. */
export async function deleteIn(db: Db, table: string, column: string, keys: readonly string[]): Promise<void> {
  for (const batch of chunks([...new Set(keys)], 512).map(padded)) {
    await run(db, `delete from ${q(table)} where ${q(column)} in (${marks(batch.length)})`, batch);
  }
}

/** Rows of `table` by id (`columns` besides id). */
export async function selectByIds<R extends { id: string }>(
  db: Db,
  columns: readonly string[],
  table: string,
  ids: readonly string[],
): Promise<Map<string, R>> {
  const rows = await selectIn<R>(db, ['id', ...columns], table, 'id', ids);
  return new Map(rows.map((r) => [String(r.id), r]));
}

/** A valid copy clears a record's quarantine entry (docs/design.md §4.5). */
export async function deleteQuarantined(db: Db, entityType: RecordType, ids: readonly string[]): Promise<void> {
  for (const batch of chunks(ids, 512).map(padded)) {
    await run(db, `delete from "quarantine" where "entity_type" = '${entityType}' and "entity_id" in (${marks(batch.length)})`, batch);
  }
}

/**
 * A statement that matches rows by many tuples at once: `<head> (<term> or <term> …) <tail>`,
 * each term comparing a row's columns with one tuple (`("a" = ? and "b" <= ?)`). Both dialects
 * look each term up in the index that leads with its columns (SQLite's multi-index OR,
 * PostgreSQL's bitmap OR), and each parameter takes its column's type, where a VALUES list would
 * have PostgreSQL compare a timestamp with text. Create once, at module level.
 *
 * With `types` (a type per term parameter), a dialect that binds arrays joins the rows with one
 * array per parameter instead (`delete from t using unnest(…) as v …`, `update t set … from
 * unnest(…) as v …`, the term reading `v.c1`, `v.c2`, …): PostgreSQL planned an OR of 175 terms in
 * about 6 ms against 0.1 ms for the join (clearing a drain batch's dirty marks), and the arrays say
 * each parameter's type themselves.
 */
export interface TupleStatement {
  readonly head: string;
  readonly term: string;
  readonly tail: string;
  /** Parameters per term. */
  readonly width: number;
  readonly texts: Map<number, string>;
  /** The term parameters' types, when the tuples may go as arrays (`bindsArrays`). */
  readonly types?: readonly TupleType[];
}

/** A term parameter's type: text, or a timestamp in the store's form (the dialect's timestampType). */
export type TupleType = 'text' | 'timestamp';

/** `head` ends with `where`: a `delete from <table>` or an `update <table> set …`. */
export function tupleStatement(head: string, term: string, tail = '', types?: readonly TupleType[]): TupleStatement {
  const width = term.split('?').length - 1;
  if (types && (types.length !== width || !/^(delete from \S+|update \S+ set .+) where$/s.test(head))) {
    throw new Error(`tupleStatement: ${types.length} types for ${width} parameters, or a head other than delete/update … where: ${head}`);
  }
  return { head, term, tail, width, texts: new Map(), ...(types ? { types } : {}) };
}

const arrayTexts = new WeakMap<TupleStatement, string>();

/** The statement as a join with one array per term parameter (`types` set, `bindsArrays`). */
function arrayText(db: Db, stmt: TupleStatement, types: readonly TupleType[]): string {
  let text = arrayTexts.get(stmt);
  if (text === undefined) {
    const sqlType = (t: TupleType) => (t === 'timestamp' ? capabilitiesOf(db).timestampType : 'text');
    const names = types.map((_, i) => `c${i + 1}`);
    const source = `unnest(${types.map((t) => `?::${sqlType(t)}[]`).join(', ')}) as v(${names.join(', ')})`;
    let i = 0;
    const term = stmt.term.replace(/\?/g, () => `v.${names[i++]}`);
    const head = stmt.head.replace(/ where$/, '');
    text = `${head} ${head.startsWith('delete') ? 'using' : 'from'} ${source} where ${term} ${stmt.tail}`;
    arrayTexts.set(stmt, text);
  }
  return text;
}

/** Tuples per statement of arrays: bounds what one statement holds, not what the planner weighs. */
const MAX_ARRAY_TUPLES = 10_000;

/** At most this many terms per statement: a planner weighs every term of an OR. */
const MAX_TERMS = 256;

/**
 * Runs `stmt` over `tuples` (values in term order), chunked; `lead` binds the head's own
 * parameters in every chunk. Returns the rows of all chunks (for a RETURNING tail).
 */
export async function runTuples<R = Record<string, unknown>>(
  db: Db,
  stmt: TupleStatement,
  tuples: readonly (readonly unknown[])[],
  lead: readonly unknown[] = [],
): Promise<R[]> {
  if (stmt.types && capabilitiesOf(db).bindsArrays) {
    const text = arrayText(db, stmt, stmt.types);
    const out: R[] = [];
    for (const batch of chunks(tuples, MAX_ARRAY_TUPLES)) {
      out.push(...(await run<R>(db, text, [...lead, ...stmt.types.map((_, i) => batch.map((t) => t[i] ?? null))])));
    }
    return out;
  }
  let per = MAX_TERMS;
  while (per * stmt.width + lead.length > MAX_PARAMS) per /= 2;
  const out: R[] = [];
  for (const batch of chunks(tuples, per).map(padded)) {
    let text = stmt.texts.get(batch.length);
    if (text === undefined) {
      text = `${stmt.head} (${Array(batch.length).fill(stmt.term).join(' or ')}) ${stmt.tail}`;
      stmt.texts.set(batch.length, text);
    }
    out.push(...(await run<R>(db, text, [...lead, ...batch.flat()])));
  }
  return out;
}
