import { BUILT_IN_TABLES } from '../entities/index.js';
import { col, key, type RowOf, type TableDecl } from '../entities/table-decl.js';
import { StoreError } from './errors.js';

/**
 * The mirror's record tables and the sync's change log and dirty set (docs/design.md §7): each
 * record type's tables are declared beside it (src/entities/ticket.ts, how a table is declared in
 * src/entities/table-decl.ts), the others here and in tables-sync.ts. The row types of
 * `MirrorDatabase` and the column lists of the upserts derive from them; the migrations stay
 * plain SQL and test/store/declared-schema.test.ts holds them to these on both databases, so a
 * table declared without its migration (or the reverse) fails a test, not a sync.
 */

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

const text = col('text');
const ts = col('timestamp');
const json = col('json');
const counter = { type: 'integer', nullable: false, generated: true } as const;

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
export const TABLES = { ...BUILT_IN_TABLES, events, dirty } as const satisfies Record<string, TableDecl>;

export type DeclaredTable = keyof typeof TABLES;
