import { describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { readCatalog, type CatalogTable } from '../helpers/catalog.js';
import { sql } from 'kysely';
import { useDialectStore } from './fixtures.js';
import { databaseOf } from '../../src/store/internal.js';
import type { TableDecl } from '../../src/entities/table-decl.js';
import { TABLES } from '../../src/store/tables.js';
import { DECLARED_TABLES } from '../../src/store/tables-sync.js';
import { REPORT_TABLES } from '../../src/report/tables.js';
import { createDeclaredTables, DECLARED_TYPES } from '../helpers/ddl.js';
import { TASK_TABLES } from '../entity-fixture/task.js';

// Each logical type's declared type per database, as the migrations must create it (test/helpers/ddl.ts).
const DECLARED = DECLARED_TYPES;

/** Every declaration: the mirror's (src/store) and the reporting tables' (src/report). */
const ALL_TABLES: Record<string, TableDecl> = { ...DECLARED_TABLES, ...REPORT_TABLES };

const CUSTOM_FIELDS =
  'a reporting table whose columns the refresh adds at run time, one per custom field key ' +
  '(src/report/custom-fields.ts): no declaration could list them; test/report/schema-types.test.ts checks its key column';

/**
 * The tables of the migrated schema that have no declaration, each with why. A table a migration
 * adds is either declared (`WHERE_DECLARED`) or named here; SQLite's own `sqlite_*` tables are the
 * engine's, not the migrations'.
 */
const NOT_DECLARED: Record<string, string> = {
  kysely_migration: "Kysely's migrator keeps the applied migrations there; the store reads it through the migrator only",
  kysely_migration_lock: "Kysely's migrator's lock row",
  rpt_ticket_custom_fields: CUSTOM_FIELDS,
  rpt_deal_custom_fields: CUSTOM_FIELDS,
};

const WHERE_DECLARED =
  "a table of a record type is declared beside its entity, in its module's tables (src/entities/ticket.ts), and the entity " +
  "listed in BUILT_IN (src/entities/index.ts); the sync's in src/store/tables.ts or tables-sync.ts; the reports' in src/report/tables.ts";

/** The tables of the connected database's schema, from its own catalog. */
async function catalogTables(dialect: 'sqlite' | 'postgres', db: Parameters<typeof readCatalog>[1]): Promise<string[]> {
  const query =
    dialect === 'sqlite'
      ? sql<{ name: string }>`select name from sqlite_master where type = 'table' and substr(name, 1, 7) <> 'sqlite_'`
      : sql<{ name: string }>`select table_name as name from information_schema.tables
          where table_schema = current_schema() and table_type = 'BASE TABLE'`;
  return (await query.execute(db)).rows.map((r) => r.name).sort();
}

/** Every table the schema has that is neither declared nor listed, and every stale or double entry; empty when all is accounted for. */
function unaccounted(tables: readonly string[], declared: readonly string[], listed: Record<string, string>): string[] {
  const out: string[] = [];
  for (const t of tables) if (!declared.includes(t) && !(t in listed)) out.push(`${t}: in the database, neither declared nor listed`);
  for (const t of Object.keys(listed)) {
    if (declared.includes(t)) out.push(`${t}: declared and listed as not declared`);
    if (!tables.includes(t)) out.push(`${t}: listed as not declared, not in the database`);
  }
  return out;
}

/** Every way `found` differs from the declaration `table`, one line each; empty when they agree. */
function differences(dialect: 'sqlite' | 'postgres', name: string, table: TableDecl, found: CatalogTable): string[] {
  const out: string[] = [];
  if (found.columns.size === 0) return [`${name}: no such table (a table no migration creates: migrations/)`];
  for (const [column, decl] of Object.entries(table.columns)) {
    const c = found.columns.get(column);
    if (!c) {
      out.push(`${name}.${column}: declared, not in the database`);
      continue;
    }
    const type = DECLARED[dialect][decl.type];
    if (c.type !== type) out.push(`${name}.${column}: declared ${decl.type} (${type}), database has ${c.type}`);
    // SQLite lets a non-integer PRIMARY KEY hold NULL (its documented legacy); the store never writes one.
    const notNull = c.notNull || table.primaryKey.includes(column);
    if (notNull === decl.nullable) out.push(`${name}.${column}: declared ${decl.nullable ? 'nullable' : 'not null'}, database differs`);
    if (decl.generated && !c.hasDefault) out.push(`${name}.${column}: declared generated, database has no default`);
  }
  for (const column of found.columns.keys()) if (!(column in table.columns)) out.push(`${name}.${column}: in the database, not declared`);
  if (found.primaryKey.join(',') !== table.primaryKey.join(','))
    out.push(`${name}: primary key declared (${table.primaryKey.join(', ')}), database has (${found.primaryKey.join(', ')})`);
  for (const index of table.indexes) {
    const i = found.indexes.find((x) => x.name === index.name);
    if (!i) out.push(`${name}: index ${index.name} declared, not in the database`);
    else if (i.columns.join(',') !== index.columns.join(',') || i.unique !== index.unique)
      out.push(
        `${name}: index ${index.name} declared ${index.unique ? 'unique ' : ''}(${index.columns.join(', ')}), database has ${i.unique ? 'unique ' : ''}(${i.columns.join(', ')})`,
      );
  }
  // A unique index changes what a write does (ON CONFLICT, a refused duplicate): none goes undeclared.
  for (const i of found.indexes)
    if (i.unique && !table.indexes.some((x) => x.name === i.name))
      out.push(`${name}: unique index ${i.name} in the database, not declared`);
  return out;
}

for (const dialect of dialects) {
  describe(`declared tables match the migrated schema (${dialect.name})`, () => {
    const store = useDialectStore(dialect);
    const catalog = (table: string) => readCatalog(dialect.name, databaseOf(store), table);

    it('every declared table: columns, types, nullability, key and the indexes the engine relies on', async () => {
      const found: string[] = [];
      for (const [name, table] of Object.entries(ALL_TABLES)) found.push(...differences(dialect.name, name, table, await catalog(name)));
      expect(found).toEqual([]);
    });

    it('every table of the migrated schema is declared or listed with why it is not', async () => {
      const tables = await catalogTables(dialect.name, databaseOf(store));
      // The catalog query itself: it sees the tables of both kinds, so an empty answer cannot pass.
      expect(tables).toEqual(expect.arrayContaining(['tickets', 'writer_requests', 'rpt_tickets', 'kysely_migration']));
      expect(unaccounted(tables, Object.keys(ALL_TABLES), NOT_DECLARED), WHERE_DECLARED).toEqual([]);
    });

    it('sees a table neither declared nor listed, and a listed one that is stale', async () => {
      const tables = await catalogTables(dialect.name, databaseOf(store));
      const { sync_state: _dropped, ...declared } = ALL_TABLES;
      const { rpt_deal_custom_fields: _unlisted, ...listed } = NOT_DECLARED;
      expect(unaccounted(tables, Object.keys(declared), { ...listed, tickets: 'x', rpt_gone: 'x' })).toEqual([
        'rpt_deal_custom_fields: in the database, neither declared nor listed',
        'sync_state: in the database, neither declared nor listed',
        'tickets: declared and listed as not declared',
        'rpt_gone: listed as not declared, not in the database',
      ]);
    });

    it('sees a declaration that disagrees with the migrations', async () => {
      const history = TABLES.ticket_history;
      const wrong: TableDecl = {
        columns: { ...history.columns, field: { type: 'timestamp', nullable: true }, extra: { type: 'text', nullable: true } },
        primaryKey: ['ticket_id', 'id'],
        indexes: [
          { ...history.indexes[0], columns: ['field', 'event_id'] },
          { name: 'missing_idx', columns: ['source'], unique: false, why: '' },
        ],
      };
      const { observed_since: _dropped, ...fewer } = wrong.columns;
      const found = differences(dialect.name, 'ticket_history', { ...wrong, columns: fewer }, await catalog('ticket_history'));
      expect(found).toEqual([
        expect.stringMatching(/^ticket_history\.field: declared timestamp/),
        'ticket_history.field: declared nullable, database differs',
        'ticket_history.extra: declared, not in the database',
        'ticket_history.observed_since: in the database, not declared',
        'ticket_history: primary key declared (ticket_id, id), database has (id)',
        'ticket_history: index ticket_history_event_field_idx declared unique (field, event_id), database has unique (event_id, field)',
        'ticket_history: index missing_idx declared, not in the database',
      ]);
      const withoutIndex = differences(
        dialect.name,
        'deal_history',
        { ...TABLES.deal_history, indexes: [] },
        await catalog('deal_history'),
      );
      expect(withoutIndex).toEqual(['deal_history: unique index deal_history_event_field_idx in the database, not declared']);
    });

    it("a table created from its declaration (a fixture entity's, test/helpers/ddl.ts) matches it", async () => {
      await createDeclaredTables(databaseOf(store) as never, dialect.name, TASK_TABLES);
      const found: string[] = [];
      for (const [name, table] of Object.entries(TASK_TABLES)) found.push(...differences(dialect.name, name, table, await catalog(name)));
      expect(found).toEqual([]);
    });
  });
}
