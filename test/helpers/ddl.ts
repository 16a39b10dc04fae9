import { sql, type Kysely } from 'kysely';
import type { LogicalType, TableDecl } from '../../src/entities/table-decl.js';

/**
 * Each logical type's declared type per database, as the migrations create it: written here, not
 * read from src/, so a change of either side is a difference test/store/declared-schema.test.ts sees.
 */
export const DECLARED_TYPES: Record<'sqlite' | 'postgres', Record<LogicalType, string>> = {
  sqlite: {
    text: 'text',
    integer: 'integer',
    bigint: 'integer',
    numeric: 'real',
    real: 'real',
    boolean: 'boolean',
    timestamp: 'datetime',
    date: 'date',
    json: 'text',
  },
  postgres: {
    text: 'text',
    integer: 'integer',
    bigint: 'bigint',
    numeric: 'numeric',
    real: 'double precision',
    boolean: 'boolean',
    timestamp: 'timestamp with time zone',
    date: 'date',
    json: 'jsonb',
  },
};

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The statements that create `table` as declared, as the migrations would (a serial key as they
 * make one, a generated counter defaulting to 0): for a table no migration creates, a test's
 * fixture entity's. Both dialects.
 */
export function createTableStatements(dialect: 'sqlite' | 'postgres', name: string, table: TableDecl): string[] {
  const pg = dialect === 'postgres';
  const serialKey = table.primaryKey.length === 1 && table.columns[table.primaryKey[0]!]!.generated ? table.primaryKey[0]! : null;
  const columns = Object.entries(table.columns).map(([column, c]) => {
    if (column === serialKey)
      return pg
        ? `${q(column)} ${c.type === 'bigint' ? 'bigserial' : 'serial'} primary key`
        : `${q(column)} integer primary key autoincrement`;
    const type = DECLARED_TYPES[dialect][c.type];
    return `${q(column)} ${type}${c.nullable ? '' : ' not null'}${c.generated ? ' default 0' : ''}`;
  });
  if (serialKey === null) columns.push(`primary key (${table.primaryKey.map(q).join(', ')})`);
  return [
    `create table ${q(name)} (${columns.join(', ')})`,
    ...table.indexes.map((i) => `create ${i.unique ? 'unique ' : ''}index ${q(i.name)} on ${q(name)} (${i.columns.map(q).join(', ')})`),
  ];
}

/** Creates the declared tables in the mirror `db` is connected to (a fixture entity's: no migration knows them). */
export async function createDeclaredTables(
  db: Kysely<unknown>,
  dialect: 'sqlite' | 'postgres',
  tables: Readonly<Record<string, TableDecl>>,
): Promise<void> {
  for (const [name, table] of Object.entries(tables))
    for (const statement of createTableStatements(dialect, name, table)) await sql.raw(statement).execute(db);
}
