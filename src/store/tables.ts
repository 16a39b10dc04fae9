import type { Generated, SqlBool } from 'kysely';
import { StoreError } from './errors.js';

/**
 * One declaration per mirror table (docs/design.md §7): its columns, key and the indexes the engine
 * relies on. The row types of `MirrorDatabase` and the column lists of the upserts derive from it;
 * the migrations stay plain SQL and test/store/declared-schema.test.ts holds them to it on both
 * databases, so a table added here without its migration (or the reverse) fails a test, not a sync.
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

/** How a row is made from a record: one source per declared column, each giving the stored value. */
export type RowSources<T extends TableDecl, R> = { readonly [K in keyof RowOf<T>]: (record: R) => RowOf<T>[K] };

/**
 * A table's row mapping from records of type R, derived from its declaration: the compiler names a
 * column without a source, and a not-null column a source leaves empty fails naming the column,
 * before any write. The row keeps each source's own type (a source may promise more than the
 * column, as an event's occurred_at does).
 */
export function rowMapping<R>() {
  return <T extends TableDecl, S extends RowSources<T, R>>(name: string, table: T, sources: S) => {
    const columns = Object.entries(table.columns);
    const from = sources as unknown as Record<string, (record: R) => unknown>;
    return (record: R): { -readonly [K in keyof S]: ReturnType<S[K]> } => {
      const row: Record<string, unknown> = {};
      for (const [column, decl] of columns) {
        const value = from[column]!(record);
        if (!decl.nullable && (value === null || value === undefined))
          throw new StoreError('INVALID_VALUE', `${name}.${column} is missing: the upstream record has no value for it`);
        row[column] = value;
      }
      return row as { -readonly [K in keyof S]: ReturnType<S[K]> };
    };
  };
}

/** A nullable column, and a not-null one (a key's or a required value's); src/store/tables-sync.ts uses them too. */
export const col = <T extends LogicalType>(type: T) => ({ type, nullable: true }) as const;
export const key = <T extends LogicalType>(type: T) => ({ type, nullable: false }) as const;
const text = col('text');
const ts = col('timestamp');
const json = col('json');
const counter = { type: 'integer', nullable: false, generated: true } as const;

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

/** A record's custom fields, one row per key. */
function fieldsTable<O extends string>(owner: O) {
  return {
    columns: { ...owned(owner), key: key('text'), value_text: text, value_json: json },
    primaryKey: [owner, 'key'],
    indexes: [],
  } as const satisfies TableDecl;
}

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

const tickets = {
  columns: {
    id: key('text'),
    number: col('integer'),
    key: text,
    subject: text,
    status: text,
    priority: text,
    summary: text,
    contact_id: text,
    assignee_id: text,
    team_id: text,
    team_name: text,
    team_json: json,
    tags_json: json,
    fields_json: json,
    cc_json: json,
    message_count: col('integer'),
    first_reply_due_at: ts,
    resolve_due_at: ts,
    first_reply_breached_at: ts,
    resolve_breached_at: ts,
    first_agent_reply_at: ts,
    resolved_at: ts,
    status_changed_at: ts,
    ...recordStamps,
  },
  primaryKey: ['id'],
  indexes: [liveUpdated('tickets')],
} as const satisfies TableDecl;

// Keyed by (ticket_id, id) since 0700_owner_keyed_children: a message id the upstream reuses in
// another ticket is another message, not a move (docs/sync.md, "Hostile upstream").
const ticket_messages = {
  columns: {
    id: key('text'),
    ticket_id: key('text'),
    body: text,
    author_type: text,
    author_id: text,
    is_internal: col('boolean'),
    attachments_json: json,
    created_at: ts,
    raw_json: json,
  },
  primaryKey: ['ticket_id', 'id'],
  indexes: [],
} as const satisfies TableDecl;

const ticket_tags = {
  columns: { ticket_id: key('text'), tag: key('text') },
  primaryKey: ['ticket_id', 'tag'],
  indexes: [],
} as const satisfies TableDecl;

const deals = {
  columns: {
    id: key('text'),
    name: text,
    amount: col('numeric'),
    amount_cents: col('bigint'),
    currency: text,
    close_date: col('date'),
    status: text,
    pipeline_id: text,
    stage_id: text,
    owner_id: text,
    company_id: text,
    fields_json: json,
    ...recordStamps,
  },
  primaryKey: ['id'],
  indexes: [liveUpdated('deals')],
} as const satisfies TableDecl;

const deal_contacts = {
  columns: { deal_id: key('text'), contact_id: key('text'), is_primary: col('boolean'), position: col('integer') },
  primaryKey: ['deal_id', 'contact_id'],
  indexes: [],
} as const satisfies TableDecl;

const events = {
  columns: {
    id: key('text'),
    type: text,
    entity_type: text,
    entity_id: text,
    payload_json: json,
    actor_id: text,
    occurred_at: ts,
    received_at: ts,
    raw_json: json,
  },
  primaryKey: ['id'],
  indexes: [],
} as const satisfies TableDecl;

/** Records whose upstream copy changed since the mirror's: keyed so a record is marked once. */
const dirty = {
  columns: {
    entity_type: key('text'),
    entity_id: key('text'),
    occurred_at: key('timestamp'),
    stale_reads: counter,
    marked_at: ts,
    /** 1 when a ticket's messages may have changed since the mirror's copy (migration 0300); deals ignore it. */
    read_messages: counter,
    /** Reads of this record that failed after their retries, in a row (migration 0800_dirty_failed_reads). */
    failed_reads: counter,
  },
  primaryKey: ['entity_type', 'entity_id'],
  indexes: [{ name: 'dirty_occurred_at_idx', columns: ['occurred_at'], unique: false, why: 'the drain reads the oldest marks first' }],
} as const satisfies TableDecl;

/** The declared tables: every entry is checked against the migrated schema on both databases. */
export const TABLES = {
  tickets,
  ticket_messages,
  ticket_tags,
  ticket_fields: fieldsTable('ticket_id'),
  deals,
  deal_contacts,
  deal_fields: fieldsTable('deal_id'),
  events,
  ticket_history: historyTable('ticket_id', 'ticket_history'),
  deal_history: historyTable('deal_id', 'deal_history'),
  dirty,
} as const satisfies Record<string, TableDecl>;

export type DeclaredTable = keyof typeof TABLES;
