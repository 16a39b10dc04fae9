import { PostgresAdapter, type QueryExecutor } from 'kysely';

export type DialectName = 'sqlite' | 'postgres';

/** Reads the dialect from the adapter, so migrations need no extra argument. Takes any Kysely (or transaction), whatever its tables. */
export function dialectOf(db: { getExecutor(): QueryExecutor }): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}
