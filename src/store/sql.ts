import { CompiledQuery, type Kysely } from 'kysely';
import { capabilitiesOf } from './dialect.js';
import type { MirrorDatabase } from './schema.js';
import { CopiedRows, StagedRows, stageOf } from './staged-rows.js';

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
  if (capabilitiesOf(db).placeholder === '?') return text;
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
  return result.rows;
}

export const q = (name: string) => `"${name}"`;

// 999 was SQLite's variable limit before 3.32 and stays far under PostgreSQL's 65535; staying
// under it keeps the statement shapes few, so the statement cache keeps them prepared.
export const MAX_PARAMS = 999;

/** A multi-row INSERT of fixed table, columns and tail; its text per row count is built once. */
export interface InsertStatement {
  readonly table: string;
  readonly columns: readonly string[];
  readonly texts: Map<number, string>;
  readonly tail: string;
  /** The columns' SQL types, when the rows may go as one array per column (`bindsArrays`). */
  readonly types?: readonly string[];
}

/**
 * `tail` is appended verbatim (an ON CONFLICT clause, or ''). `types`, the columns' SQL types,
 * lets a dialect that binds arrays send any number of rows in one statement. Create once, at
 * module level.
 */
export function insertStatement(table: string, columns: readonly string[], tail = '', types?: readonly string[]): InsertStatement {
  return { table, columns, tail, texts: new Map(), ...(types ? { types } : {}) };
}

const arrayTexts = new WeakMap<InsertStatement, string>();

/** The insert as one statement over `unnest` of one array per column (`bindsArrays`). */
async function insertArrays(db: Db, stmt: InsertStatement, types: readonly string[], rows: readonly (readonly unknown[])[]): Promise<void> {
  let text = arrayTexts.get(stmt);
  if (text === undefined) {
    const arrays = types.map((t) => `?::${t}[]`).join(',');
    text = `insert into ${q(stmt.table)} (${stmt.columns.map(q).join(',')}) select * from unnest(${arrays}) ${stmt.tail}`;
    arrayTexts.set(stmt, text);
  }
  await run(
    db,
    text,
    stmt.columns.map((_, i) => rows.map((r) => r[i] ?? null)),
  );
}

/**
 * Row counts per statement: the largest power of two under the parameter limit, then powers of two
 * down to one. A statement text per row count up to the limit would fill the statement cache with
 * hundreds of large prepared statements (SQLite keeps each one's program in memory).
 */
function rowCounts(total: number, columns: number): number[] {
  let size = 1;
  while (size * 2 * columns <= MAX_PARAMS) size *= 2;
  const out: number[] = [];
  for (let left = total; left > 0;) {
    while (size > left) size /= 2;
    out.push(size);
    left -= size;
  }
  return out;
}

/**
 * Inserts `rows` (values in the statement's column order), chunked under the parameter limit; more
 * rows than one statement holds go through a staging table where the dialect loads rows by COPY.
 * A statement that knows its column types takes any number of rows as one statement of arrays
 * where the dialect binds them.
 */
export async function insertRows(db: Db, stmt: InsertStatement, rows: readonly (readonly unknown[])[]): Promise<void> {
  if (stmt.types && capabilitiesOf(db).bindsArrays) return insertArrays(db, stmt, stmt.types, rows);
  if (rows.length * stmt.columns.length > MAX_PARAMS && capabilitiesOf(db).loadsRowsByCopy) {
    await run(db, stagedInsertText(stmt), [new StagedRows(stmt.table, stmt.columns, rows)]);
    return;
  }
  let start = 0;
  for (const count of rowCounts(rows.length, stmt.columns.length)) {
    const batch = rows.slice(start, start + count);
    start += count;
    let text = stmt.texts.get(batch.length);
    if (text === undefined) {
      const tuple = `(${stmt.columns.map(() => '?').join(',')})`;
      text = `insert into ${q(stmt.table)} (${stmt.columns.map(q).join(',')}) values ${Array(batch.length).fill(tuple).join(',')} ${stmt.tail}`;
      stmt.texts.set(batch.length, text);
    }
    await run(db, text, batch.flat());
  }
}

const copyTexts = new WeakMap<InsertStatement, string>();

/**
 * Inserts rows that nothing can conflict with: no stored row holds their keys and no two of them
 * share one (the caller's guarantee: a first backfill's append, docs/sync.md, "Appended rows are
 * copied straight into their tables"). Where the dialect loads rows by COPY they go straight into
 * the table, without the staging table and the INSERT ... SELECT that the statement's ON CONFLICT
 * tail needs; elsewhere as insertRows, whose tail then never fires. A row the table refuses still
 * fails the statement.
 */
export async function appendRows(db: Db, stmt: InsertStatement, rows: readonly (readonly unknown[])[]): Promise<void> {
  if (rows.length === 0) return;
  if (!capabilitiesOf(db).loadsRowsByCopy) return insertRows(db, stmt, rows);
  let text = copyTexts.get(stmt);
  if (text === undefined) {
    text = `copy ${q(stmt.table)} (${stmt.columns.map(q).join(',')}) from stdin`;
    copyTexts.set(stmt, text);
  }
  await run(db, text, [new CopiedRows(rows)]);
}

const stagedTexts = new WeakMap<InsertStatement, string>();

/** The statement that empties the stage into the table, with the insert's own tail (staged-rows.ts). */
function stagedInsertText(stmt: InsertStatement): string {
  let text = stagedTexts.get(stmt);
  if (text === undefined) {
    const cols = stmt.columns.map(q).join(',');
    text = `with s as (delete from ${q(stageOf(stmt.table))} returning ${cols}) insert into ${q(stmt.table)} (${cols}) select ${cols} from s ${stmt.tail}`;
    stagedTexts.set(stmt, text);
  }
  return text;
}

/** ON CONFLICT clause that overwrites `columns` with the incoming values. */
export function overwrite(conflict: readonly string[], columns: readonly string[]): string {
  return `on conflict (${conflict.map(q).join(',')}) do update set ${columns.map((c) => `${q(c)} = excluded.${q(c)}`).join(', ')}`;
}

/**
 * ON CONFLICT clause for partial references: an incoming null never erases a known value. A
 * reference that brings nothing new is not updated at all: almost every record names users and
 * contacts the mirror already holds, and a no-op update still writes the page in SQLite (one more
 * page per commit) and a new row version in PostgreSQL.
 */
export function coalesceInto(table: string, columns: readonly string[]): string {
  const merged = (c: string) => `coalesce(excluded.${q(c)}, ${q(table)}.${q(c)})`;
  return (
    `on conflict ("id") do update set ${columns.map((c) => `${q(c)} = ${merged(c)}`).join(', ')}` +
    ` where ${columns.map((c) => `${q(table)}.${q(c)} is distinct from ${merged(c)}`).join(' or ')}`
  );
}

/**
 * Upsert by id of whole rows. In SQLite the update leaves out the indexed columns whose stored
 * value is the same: SQLite rewrites every index with a column in the SET list, changed or not,
 * and each index page is one more page written at commit. SQLite only, where transactions run one
 * at a time, so `stored` (read earlier in the same transaction) is still what the row holds;
 * PostgreSQL already skips index work for unchanged values. Rows that leave out the same columns
 * share multi-row statements.
 */
export function rowUpsert<C extends string>(table: string, columns: readonly C[], indexed: readonly C[]) {
  const byMask = new Map<number, InsertStatement>();
  const statementFor = (mask: number): InsertStatement => {
    let stmt = byMask.get(mask);
    if (!stmt) {
      const kept = columns.filter((c) => c !== 'id' && !indexed.some((x, i) => x === c && mask & (1 << i)));
      stmt = insertStatement(table, columns, overwrite(['id'], kept));
      byMask.set(mask, stmt);
    }
    return stmt;
  };
  const values = (row: Readonly<Record<C, unknown>>) => columns.map((c) => row[c]);
  return {
    /** Rows new to the mirror (nothing stored, so every column is written). */
    async many(db: Db, rows: readonly Readonly<Record<C, unknown>>[]): Promise<void> {
      if (rows.length > 0) await insertRows(db, statementFor(0), rows.map(values));
    },
    /** Rows under ids no stored row holds, distinct (appendRows: a first backfill's append). */
    async append(db: Db, rows: readonly Readonly<Record<C, unknown>>[]): Promise<void> {
      await appendRows(db, statementFor(0), rows.map(values));
    },
    /** Rows the mirror holds, each with its stored copy (distinct ids). */
    async known(
      db: Db,
      rows: readonly { row: Readonly<Record<C, unknown>>; stored: Readonly<Partial<Record<C, unknown>>> }[],
    ): Promise<void> {
      const skipsUnchanged = capabilitiesOf(db).writesUnchangedIndexes;
      const groups = new Map<number, unknown[][]>();
      for (const { row, stored } of rows) {
        let mask = 0;
        if (skipsUnchanged) {
          indexed.forEach((c, i) => {
            if (stored[c] === row[c]) mask |= 1 << i;
          });
        }
        const group = groups.get(mask) ?? [];
        group.push(values(row));
        groups.set(mask, group);
      }
      for (const [mask, group] of groups) await insertRows(db, statementFor(mask), group);
    },
  };
}
