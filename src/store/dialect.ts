import { PostgresAdapter, type Kysely } from 'kysely';

export type DialectName = 'sqlite' | 'postgres';

/** Reads the dialect from the adapter, so migrations need no extra argument. */
export function dialectOf(db: Kysely<any>): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * Column types per dialect. SQLite declared types are chosen for BI tools that read the declared
 * type (DATETIME, DATE) while the stored value stays UTC text (docs/schema.md); in SQLite DATETIME and
 * DATE have NUMERIC affinity, which leaves such text untouched. 0001 declared the amount TEXT and
 * booleans INTEGER; 0200 re-declares them REAL and BOOLEAN (frozen migrations keep these types).
 */
export function types(db: Kysely<any>) {
  const pg = dialectOf(db) === 'postgres';
  return {
    timestamp: pg ? 'timestamptz' : 'datetime',
    date: pg ? 'date' : 'date',
    boolean: pg ? 'boolean' : 'integer',
    json: pg ? 'jsonb' : 'text',
    decimal: pg ? 'numeric' : 'text',
    bigint: pg ? 'bigint' : 'integer',
    /** Auto-increment primary key type. */
    serial: pg ? 'bigserial' : 'integer',
    pg,
  } as const;
}
