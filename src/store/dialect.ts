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
  /**
   * The database's code when it refused a write for a reason of the rows being written: a value it
   * cannot hold, or a constraint they break (a key already there, a foreign key, a check). That is
   * one record's problem, to quarantine while the others commit (docs/sync.md, "Hostile upstream");
   * null for anything else (a lost connection, a full disk: the command's problem).
   */
  refusedRecord(err: unknown): string | null;
  /**
   * A commit writes every index page the transaction touched (SQLite), so pages of records with
   * random ids commit far cheaper in groups (docs/sync.md, "Change-log pages commit in groups");
   * PostgreSQL gains nothing and, as its writes do not block the event loop, keeps the network
   * busier with a commit per page (L backfill 42-46 s per page, 44-49 s in groups of 10).
   */
  commitsPagesInGroups: boolean;
  /**
   * A first backfill loads faster without the secondary indexes and builds them at the end
   * (SQLite: each insert updates every index; src/store/deferred-indexes.ts). Not PostgreSQL,
   * whose B-tree refuses a row too large for an entry: as a record's write, not as the build's.
   */
  defersIndexesInBulkLoad: boolean;
  /**
   * The planner needs VACUUM (ANALYZE) after a bulk load before autovacuum comes round
   * (PostgreSQL; src/store/tidy-tables.ts says why SQLite does nothing).
   */
  tidiesAfterBulkLoad: boolean;
  /**
   * Many rows load faster by COPY into a staging table and one INSERT ... SELECT than as VALUES
   * statements, whose parameters the server parses, plans and binds (PostgreSQL:
   * src/store/postgres-copy.ts). SQLite binds parameters in process, at no such cost.
   */
  loadsRowsByCopy: boolean;
  /**
   * A parameter may be an array, so a batch of rows is one statement over `unnest` of one array per
   * column, whatever its row count (PostgreSQL): one text the server parses alike every time and one
   * round trip, where VALUES statements take one text per row count and several statements per
   * batch (src/store/sql.ts, insertRows). SQLite binds scalars only.
   */
  bindsArrays: boolean;
}

const codeOf = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
};

/** better-sqlite3 codes: constraint failures (SQLITE_CONSTRAINT_UNIQUE, _FOREIGNKEY, _NOTNULL, …), too big, type mismatch. */
const sqliteRefusal = (err: unknown): string | null => {
  const code = codeOf(err);
  return code.startsWith('SQLITE_CONSTRAINT') || code === 'SQLITE_TOOBIG' || code === 'SQLITE_MISMATCH' ? code : null;
};

/**
 * SQLSTATE classes: 21 cardinality (one upsert touching a row twice), 22 data exceptions (a lone
 * surrogate in jsonb, a number out of range), 23 integrity constraints, 54 program limits (a value
 * nested too deep).
 */
const postgresRefusal = (err: unknown): string | null => {
  const code = codeOf(err);
  return /^(21|22|23|54)/.test(code) ? code : null;
};

const CAPABILITIES: Record<DialectName, DialectCapabilities> = {
  sqlite: {
    placeholder: '?',
    failedStatementAbortsTransaction: false,
    writesUnchangedIndexes: true,
    refusedRecord: sqliteRefusal,
    commitsPagesInGroups: true,
    defersIndexesInBulkLoad: true,
    tidiesAfterBulkLoad: false,
    loadsRowsByCopy: false,
    bindsArrays: false,
  },
  postgres: {
    placeholder: '$n',
    failedStatementAbortsTransaction: true,
    writesUnchangedIndexes: false,
    refusedRecord: postgresRefusal,
    commitsPagesInGroups: false,
    defersIndexesInBulkLoad: false,
    tidiesAfterBulkLoad: true,
    loadsRowsByCopy: true,
    bindsArrays: true,
  },
};

export function capabilitiesOf(db: { getExecutor(): QueryExecutor }): DialectCapabilities {
  return CAPABILITIES[dialectOf(db)];
}
