import type { Generated, SqlBool } from 'kysely';

/**
 * How a mirror table is declared (docs/design.md §7): its columns, key and the indexes the engine
 * relies on, once. An entity declares its tables beside itself (src/entities/ticket.ts), the store
 * its own (src/store/tables.ts, tables-sync.ts) and the reports theirs (src/report/tables.ts); the
 * row types, column lists and row mappings derive from them, and test/store/declared-schema.test.ts
 * holds every one to the migrated schema on both databases. A leaf: it imports nothing of the
 * project, so src/entities, which sits below the store, may declare its tables with it.
 */

/**
 * What a column holds; each database's declared type for it is in the schema test. `real` is a
 * float in both (the reporting tables' minutes and rates), where `numeric` is exact in PostgreSQL.
 */
export type LogicalType = 'text' | 'integer' | 'bigint' | 'numeric' | 'real' | 'boolean' | 'timestamp' | 'date' | 'json';

export interface ColumnDecl {
  readonly type: LogicalType;
  readonly nullable: boolean;
  /** Filled by the database (a serial key or a default): optional on insert. */
  readonly generated?: boolean;
  /** The only values written, when the column is an enumeration kept as text. */
  readonly values?: readonly string[];
}

export interface IndexDecl {
  readonly name: string;
  readonly columns: readonly string[];
  readonly unique: boolean;
  /** What fails or slows without it: the reason it is declared. */
  readonly why: string;
}

export interface TableDecl {
  readonly columns: Readonly<Record<string, ColumnDecl>>;
  readonly primaryKey: readonly string[];
  readonly indexes: readonly IndexDecl[];
}

/**
 * Timestamps are 23-char UTC text `YYYY-MM-DD HH:MM:SS.SSS` in both dialects (the PostgreSQL
 * store's type parsers give the same form); booleans are 0/1 in SQLite and true/false in
 * PostgreSQL (SqlBool); JSON columns hold JSON text; `numeric` is exact decimal text on write, read
 * back as a float (SQLite REAL) or numeric text (PostgreSQL).
 */
interface TypeOf {
  text: string;
  integer: number;
  bigint: number;
  numeric: string | number;
  real: number;
  boolean: SqlBool;
  timestamp: string;
  date: string;
  json: string;
}

type Base<C extends ColumnDecl> = C extends { values: readonly (infer V)[] } ? V : TypeOf[C['type']];
type Cell<C extends ColumnDecl> = C['nullable'] extends true ? Base<C> | null : Base<C>;
type ColumnType<C extends ColumnDecl> = C extends { generated: true } ? Generated<Cell<C>> : Cell<C>;

/** The row type of a declared table, as Kysely sees it. */
export type RowOf<T extends TableDecl> = { -readonly [K in keyof T['columns']]: ColumnType<T['columns'][K]> };

/** The column names of a declared table, in declaration order. */
export function columnsOf<T extends TableDecl>(table: T) {
  return Object.keys(table.columns) as (keyof T['columns'] & string)[];
}

/** The columns holding JSON text, which compare by value (PostgreSQL's jsonb spells JSON its own way). */
export function jsonColumnsOf(table: TableDecl): string[] {
  return Object.entries(table.columns)
    .filter(([, c]) => c.type === 'json')
    .map(([name]) => name);
}

/**
 * A child table's value columns: all but its keys, in declaration order, which is the order child
 * rows give their values in (src/store/children.ts).
 */
export function valueColumnsOf(table: TableDecl, ...keys: readonly string[]): string[] {
  return Object.keys(table.columns).filter((c) => !keys.includes(c));
}

/** A nullable column, and a not-null one (a key's or a required value's). */
export const col = <T extends LogicalType>(type: T) => ({ type, nullable: true }) as const;
export const key = <T extends LogicalType>(type: T) => ({ type, nullable: false }) as const;
const text = col('text');
const ts = col('timestamp');
const json = col('json');

/** The columns every history table has after its key and owner, as one history insert writes them. */
const historyValues = {
  field: key('text'),
  from_value: text,
  to_value: text,
  changed_at: key('timestamp'),
  source: { type: 'text', nullable: false, values: ['event', 'observed'] as const },
  event_id: text,
  observed_since: ts,
} as const satisfies Record<string, ColumnDecl>;
export const HISTORY_VALUE_COLUMNS = Object.keys(historyValues) as (keyof typeof historyValues)[];

type Owned<O extends string> = Record<O, ReturnType<typeof key<'text'>>>;
const owned = <O extends string>(owner: O) => ({ [owner]: key('text') }) as Owned<O>;

/** A history table: one row per change of a tracked field of its owner (docs/schema.md). */
export function historyTable<O extends string>(owner: O, table: string) {
  return {
    columns: { id: { type: 'bigint', nullable: false, generated: true }, ...owned(owner), ...historyValues },
    primaryKey: ['id'],
    indexes: [
      {
        name: `${table}_event_field_idx`,
        columns: ['event_id', 'field'],
        unique: true,
        why: "history's ON CONFLICT (event_id, field) names it: without it every history insert fails",
      },
    ],
  } as const satisfies TableDecl;
}

/**
 * A child table: rows that belong to one record, keyed by the column naming it and the rest of
 * `primaryKey` (the order the store's child writes and the bench's floor read them in), with no
 * index beyond its key.
 */
export function childTable<C extends Readonly<Record<string, ColumnDecl>>, const K extends readonly (keyof C & string)[]>(
  columns: C,
  primaryKey: K,
) {
  return { columns, primaryKey, indexes: [] } as const satisfies TableDecl;
}

/** A record's custom fields, one row per key. */
export const fieldsTable = <O extends string>(owner: O) =>
  childTable({ ...owned(owner), key: key('text'), value_text: text, value_json: json }, [owner, 'key']);

/** The closing columns of every record table: its times, the mirror's own and the raw copy. */
export const recordStamps = { created_at: ts, updated_at: ts, deleted_at: ts, synced_at: ts, raw_json: json } as const;

/** The index every record table's drain plan reads: its newest live records since a time (0400). */
const liveUpdated = (table: string) =>
  ({
    name: `${table}_deleted_updated_idx`,
    columns: ['deleted_at', 'updated_at'],
    unique: false,
    why: "the drain's cost model asks for the newest live records updated since a time (listedSince): without it, SQLite sorts every live record, 4 times per drain",
  }) as const satisfies IndexDecl;

/** A record table: keyed by the record's id, its own columns, then the closing stamps, with the index the drain's plan reads. */
export function recordTable<C extends Readonly<Record<string, ColumnDecl>>>(name: string, columns: C) {
  return {
    columns: { id: key('text'), ...columns, ...recordStamps },
    primaryKey: ['id'],
    indexes: [liveUpdated(name)],
  } as const satisfies TableDecl;
}
