import { sql, type Kysely } from 'kysely';

// The catalogs are not tables of the mirror's schema.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** A table as the database's own catalog describes it, in one shape for both dialects. */
export interface CatalogTable {
  columns: Map<string, { type: string; notNull: boolean; hasDefault: boolean }>;
  primaryKey: string[];
  /** Every index but the primary key's. */
  indexes: { name: string; columns: string[]; unique: boolean }[];
}

/**
 * Reads a table from SQLite's pragmas or PostgreSQL's catalog, independently of the store's code.
 * Types come back lower case, as declared (SQLite) or as information_schema names them (PostgreSQL).
 */
export function readCatalog(dialect: 'sqlite' | 'postgres', db: AnyDb, table: string): Promise<CatalogTable> {
  return dialect === 'sqlite' ? sqliteTable(db, table) : postgresTable(db, table);
}

interface SqliteColumn {
  name: string;
  type: string;
  notnull: number;
  pk: number;
  dflt_value: string | null;
}

async function sqliteTable(db: AnyDb, table: string): Promise<CatalogTable> {
  const cols = (await sql<SqliteColumn>`select name, type, "notnull", pk, dflt_value from pragma_table_info(${table})`.execute(db)).rows;
  const columns = new Map(
    cols.map((c) => {
      const type = c.type.toLowerCase();
      // An INTEGER PRIMARY KEY is the rowid: never null, filled when omitted.
      const rowid = c.pk > 0 && type === 'integer' && cols.filter((x) => x.pk > 0).length === 1;
      return [c.name, { type, notNull: c.notnull === 1 || rowid, hasDefault: c.dflt_value !== null || rowid }];
    }),
  );
  const primaryKey = cols
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => c.name);
  const list = (
    await sql<{ name: string; unique: number; origin: string }>`select name, "unique", origin from pragma_index_list(${table})`.execute(db)
  ).rows;
  const indexes = [];
  for (const i of list.filter((x) => x.origin !== 'pk')) {
    const info = await sql<{ name: string }>`select name from pragma_index_info(${i.name}) order by seqno`.execute(db);
    indexes.push({ name: i.name, columns: info.rows.map((r) => r.name), unique: i.unique === 1 });
  }
  return { columns, primaryKey, indexes };
}

async function postgresTable(db: AnyDb, table: string): Promise<CatalogTable> {
  const cols = await sql<{ column_name: string; data_type: string; is_nullable: string; column_default: string | null }>`
    select column_name, data_type, is_nullable, column_default from information_schema.columns
    where table_schema = current_schema() and table_name = ${table}`.execute(db);
  const columns = new Map(
    cols.rows.map((c) => [c.column_name, { type: c.data_type, notNull: c.is_nullable === 'NO', hasDefault: c.column_default !== null }]),
  );
  const idx = await sql<{ name: string; unique: boolean; primary: boolean; columns: string }>`
    select i.relname as name, x.indisunique as unique, x.indisprimary as primary,
      (select string_agg(a.attname, ',' order by k.n)
         from unnest(x.indkey::int2[]) with ordinality as k(attnum, n)
         join pg_attribute a on a.attrelid = x.indrelid and a.attnum = k.attnum) as columns
    from pg_index x
    join pg_class i on i.oid = x.indexrelid
    join pg_class t on t.oid = x.indrelid
    where t.relname = ${table} and t.relnamespace = current_schema()::regnamespace`.execute(db);
  const split = (s: string | null) => (s ?? '').split(',').filter(Boolean);
  const primary = idx.rows.find((r) => r.primary);
  return {
    columns,
    primaryKey: split(primary?.columns ?? null),
    indexes: idx.rows.filter((r) => !r.primary).map((r) => ({ name: r.name, columns: split(r.columns), unique: r.unique })),
  };
}
