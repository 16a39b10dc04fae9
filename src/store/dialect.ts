import { PostgresAdapter, sql, type QueryExecutor, type RawBuilder } from 'kysely';

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
   * A commit writes every index page the transaction touched (SQLite), so a backfill's list pages
   * of records with random ids commit far cheaper in groups (docs/sync.md, "Backfill");
   * PostgreSQL gains nothing and, as its writes do not block the event loop, keeps the network
   * busier with a commit per page (L backfill 42-46 s per page, 44-49 s in groups of 10). The
   * change log commits in groups on both (src/sync/page-group.ts, logGroupLimits).
   */
  commitsPagesInGroups: boolean;
  /**
   * A first backfill loads faster without the secondary indexes and builds them at the end
   * (src/store/deferred-indexes.ts). SQLite: each insert updates every index, and each commit
   * writes the index pages it touched. PostgreSQL: the connection's one server process, which
   * maintains every index row by row, is what a backfill waits on; there only the indexes whose
   * entries cannot exceed `indexEntryBytes` are deferred (bench/README.md, "Sixteenth pass").
   */
  defersIndexesInBulkLoad: boolean;
  /**
   * The statement listing the indexes that CREATE INDEX made on `tables` (not a primary key's or a
   * UNIQUE constraint's own index), each with the statement that builds it again and whether its
   * entries are bounded, so that no row can fail its build: plain columns of fixed width where
   * `indexEntryBytes` is set, every index where it is null. Only bounded indexes are deferred. By name.
   */
  createdIndexes(tables: readonly string[]): RawBuilder<{ name: string; sql: string; bounded: boolean | number }>;
  /**
   * The most bytes an index entry may hold where there is a limit, or null (SQLite). PostgreSQL's
   * B-tree refuses an entry over 2,704 bytes, and a text value from upstream (a ticket status, an
   * id) has no such bound. With the index in place the row is refused as it is written and only its
   * record quarantined; built at the end, the same row would fail the build and the whole mirror.
   * So where this is set, `createdIndexes` calls only indexes of fixed-width columns (timestamps)
   * `bounded`, and only those are deferred.
   */
  indexEntryBytes: number | null;
  /** The statement that gives a row when the table `name` exists in the mirror's schema. */
  tableExists(name: string): RawBuilder<unknown>;
  /**
   * A statement bounding how long the rest of the transaction waits for a lock another session
   * holds, or null where it never waits on readers (SQLite in WAL mode). PostgreSQL: a BI tool's
   * open transaction holds a table against DROP INDEX for as long as it stays open.
   */
  boundLockWait(ms: number): RawBuilder<unknown> | null;
  /** True for the error of a wait that boundLockWait ended. */
  lockWaitEnded(err: unknown): boolean;
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
  /** The SQL type of the mirror's timestamp columns, for a cast of a bound array (`bindsArrays`). */
  timestampType: string;
  /**
   * Runs `work` (index builds) with the memory of its sorts bounded to about `kib` KiB where that
   * memory is the connection's, so in wsmirror's own process: SQLite's sorter keeps as much in
   * memory as the page cache may hold (16 MB in better-sqlite3's build) before it spills to a
   * temporary file. PostgreSQL sorts in its server, within maintenance_work_mem: `work` runs as is.
   */
  boundSortMemory<T>(db: { getExecutor(): QueryExecutor }, kib: number, work: () => Promise<T>): Promise<T>;
  /**
   * The declared type of a reporting column added at run time (a custom field's, src/report/custom-fields.ts),
   * which is what JDBC drivers type the column by: SQLite's xerial driver reads REAL as a double,
   * BOOLEAN as a boolean, DATETIME and DATE as timestamps and dates only when declared so.
   */
  columnType: Record<AddedColumnKind, string>;
}

/** The kinds of column added at run time (docs/schema.md, "Custom fields as columns"). */
export type AddedColumnKind = 'number' | 'boolean' | 'timestamp' | 'date' | 'text';

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

/**
 * SQLite's sorter spills to a temporary file past the main database's cache_size, so the setting
 * is lowered for `work` and put back after; lowering it also frees cached pages over the bound.
 */
async function sqliteSortMemory<T>(db: { getExecutor(): QueryExecutor }, kib: number, work: () => Promise<T>): Promise<T> {
  const pragma = (text: string) => sql.raw<{ cache_size?: number }>(text).execute(db);
  const saved = (await pragma('pragma cache_size')).rows[0]?.cache_size;
  await pragma(`pragma cache_size = -${Math.max(1, Math.floor(kib))}`);
  try {
    return await work();
  } finally {
    if (typeof saved === 'number') await pragma(`pragma cache_size = ${saved}`);
  }
}

const CAPABILITIES: Record<DialectName, DialectCapabilities> = {
  sqlite: {
    placeholder: '?',
    failedStatementAbortsTransaction: false,
    writesUnchangedIndexes: true,
    refusedRecord: sqliteRefusal,
    commitsPagesInGroups: true,
    defersIndexesInBulkLoad: true,
    createdIndexes: (tables) => sql`
      select name, sql, 1 as bounded from sqlite_master
      where type = 'index' and sql is not null and tbl_name in (${sql.join(tables.map((t) => sql.lit(t)))})
      order by name`,
    indexEntryBytes: null,
    tableExists: (name) => sql`select 1 from sqlite_master where type = 'table' and name = ${name}`,
    boundLockWait: () => null,
    lockWaitEnded: () => false,
    tidiesAfterBulkLoad: false,
    loadsRowsByCopy: false,
    bindsArrays: false,
    timestampType: 'datetime',
    boundSortMemory: sqliteSortMemory,
    columnType: { number: 'REAL', boolean: 'BOOLEAN', timestamp: 'DATETIME', date: 'DATE', text: 'TEXT' },
  },
  postgres: {
    placeholder: '$n',
    failedStatementAbortsTransaction: true,
    writesUnchangedIndexes: false,
    refusedRecord: postgresRefusal,
    commitsPagesInGroups: false,
    defersIndexesInBulkLoad: true,
    // A constraint's index (primary key, UNIQUE constraint) belongs to its constraint; the rest,
    // a user's own included, come back from pg_get_indexdef as they were made.
    createdIndexes: (tables) => sql`
      select ci.relname as name, pg_get_indexdef(i.indexrelid) as sql,
        (i.indexprs is null and i.indpred is null and not exists (
          select 1 from unnest(i.indkey::int2[]) as k(attnum)
          join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum
          join pg_type ty on ty.oid = a.atttypid
          where ty.typlen < 0)) as bounded
      from pg_index i
      join pg_class ci on ci.oid = i.indexrelid
      join pg_class t on t.oid = i.indrelid
      join pg_namespace n on n.oid = t.relnamespace
      where n.nspname = current_schema() and t.relname in (${sql.join(tables.map((t) => sql.lit(t)))})
        and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)
      order by ci.relname`,
    // An entry of fixed-width columns (indkey includes INCLUDE ones) is a few dozen bytes.
    indexEntryBytes: 2704,
    tableExists: (name) => sql`select 1 from pg_tables where schemaname = current_schema() and tablename = ${name}`,
    // SET takes no parameter: the number is an integer the caller chose.
    boundLockWait: (ms) => sql.raw(`set local lock_timeout = ${Math.max(1, Math.round(ms))}`),
    lockWaitEnded: (err) => codeOf(err) === '55P03',
    tidiesAfterBulkLoad: true,
    loadsRowsByCopy: true,
    bindsArrays: true,
    timestampType: 'timestamptz',
    boundSortMemory: (_db, _kib, work) => work(),
    columnType: { number: 'double precision', boolean: 'boolean', timestamp: 'timestamptz', date: 'date', text: 'text' },
  },
};

export function capabilitiesOf(db: { getExecutor(): QueryExecutor }): DialectCapabilities {
  return CAPABILITIES[dialectOf(db)];
}
