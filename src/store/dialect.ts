import { PostgresAdapter, type QueryExecutor } from 'kysely';

export type DialectName = 'sqlite' | 'postgres';

/** Reads the dialect from the adapter, so migrations need no extra argument. Takes any Kysely (or transaction), whatever its tables. */
export function dialectOf(db: { getExecutor(): QueryExecutor }): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * What the dialect-neutral store code may ask of the database it runs on, instead of its name
 * (as Kysely's adapters describe their SQL): each answer says what to do, not which database.
 */
export interface DialectCapabilities {
  /** How positional parameters are spelled in hand-written SQL: `?` (SQLite) or `$1, $2…` (PostgreSQL). */
  placeholder: '?' | '$n';
  /**
   * A failed statement leaves the whole transaction aborted (PostgreSQL), so a batch that may hold
   * a refused value runs in a savepoint to be retried row by row; SQLite's transaction survives it.
   */
  failedStatementAbortsTransaction: boolean;
  /**
   * An upsert that rewrites an indexed column with its own value still writes its index pages
   * (SQLite), so the update leaves unchanged indexed columns out; PostgreSQL skips them itself.
   */
  writesUnchangedIndexes: boolean;
}

const CAPABILITIES: Record<DialectName, DialectCapabilities> = {
  sqlite: { placeholder: '?', failedStatementAbortsTransaction: false, writesUnchangedIndexes: true },
  postgres: { placeholder: '$n', failedStatementAbortsTransaction: true, writesUnchangedIndexes: false },
};

export function capabilitiesOf(db: { getExecutor(): QueryExecutor }): DialectCapabilities {
  return CAPABILITIES[dialectOf(db)];
}
