import { PostgresAdapter, sql, type Kysely } from 'kysely';

/** Frozen: the migration tells the dialect itself and imports nothing from src/. */
const isPostgres = (db: Kysely<any>): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * Three reporting shapes BI users ask for first (docs/schema.md, "Custom fields as columns",
 * "Versions", "Daily state"):
 * - `rpt_custom_field_columns`: the catalog mapping each custom field key to its column and type;
 *   `rpt_ticket_custom_fields` / `rpt_deal_custom_fields` start with the record id only, and
 *   src/report/custom-fields.ts adds one typed column per key as keys appear;
 * - `rpt_ticket_versions` / `rpt_deal_versions`: every version of the tracked fields (SCD2);
 * - `rpt_ticket_daily` / `rpt_deal_daily`: each record's tracked fields at the end of each UTC day
 *   of a window, and `rpt_daily_windows`, the window they were built for.
 * The next refresh rebuilds the rpt_ tables in full (`reporting_stale`), which fills them.
 */
type Kind = 'text' | 'int' | 'money' | 'bool' | 'ts' | 'date';

// prettier-ignore
const SQLITE: Record<Kind, string> = { text: 'text', int: 'integer', money: 'real', bool: 'boolean', ts: 'datetime', date: 'date' };
// prettier-ignore
const POSTGRES: Record<Kind, string> = {
  text: 'text', int: 'bigint', money: 'numeric(20,2)', bool: 'boolean', ts: 'timestamptz', date: 'date',
};

type Columns = readonly (readonly [string, Kind, 'key'?])[];

// prettier-ignore
const TABLES: Record<string, Columns> = {
  rpt_custom_field_columns: [
    ['entity_type', 'text', 'key'], ['key', 'text', 'key'], ['column_name', 'text'], ['type', 'text'],
    ['first_seen_at', 'ts'], ['widened_at', 'ts'], ['widened_from', 'text'], ['widened_value', 'text'],
  ],
  rpt_ticket_custom_fields: [['ticket_id', 'text', 'key']],
  rpt_deal_custom_fields: [['deal_id', 'text', 'key']],
  rpt_ticket_versions: [
    ['ticket_id', 'text', 'key'], ['valid_from', 'ts', 'key'], ['valid_to', 'ts'], ['status', 'text'], ['priority', 'text'],
    ['assignee_id', 'text'], ['team_id', 'text'], ['source', 'text'], ['complete', 'bool'], ['incomplete_reason', 'text'],
  ],
  rpt_deal_versions: [
    ['deal_id', 'text', 'key'], ['valid_from', 'ts', 'key'], ['valid_to', 'ts'], ['stage_id', 'text'], ['status', 'text'],
    ['amount', 'money'], ['currency', 'text'], ['owner_id', 'text'], ['close_date', 'date'], ['source', 'text'],
    ['complete', 'bool'], ['incomplete_reason', 'text'],
  ],
  rpt_ticket_daily: [
    ['ticket_id', 'text', 'key'], ['day', 'date', 'key'], ['status', 'text'], ['priority', 'text'], ['assignee_id', 'text'],
    ['team_id', 'text'], ['history_complete', 'bool'],
  ],
  rpt_deal_daily: [
    ['deal_id', 'text', 'key'], ['day', 'date', 'key'], ['stage_id', 'text'], ['status', 'text'], ['amount', 'money'],
    ['currency', 'text'], ['owner_id', 'text'], ['close_date', 'date'], ['history_complete', 'bool'],
  ],
  rpt_daily_windows: [['entity_type', 'text', 'key'], ['window_days', 'int'], ['last_day', 'date']],
};

/** BI filters: "as of a day" over every record, "open versions" per record. */
const INDEXES: readonly [string, string, readonly string[]][] = [
  ['rpt_ticket_daily_day_idx', 'rpt_ticket_daily', ['day']],
  ['rpt_deal_daily_day_idx', 'rpt_deal_daily', ['day']],
  ['rpt_ticket_versions_to_idx', 'rpt_ticket_versions', ['valid_to']],
  ['rpt_deal_versions_to_idx', 'rpt_deal_versions', ['valid_to']],
];

export async function up(db: Kysely<any>): Promise<void> {
  const types = isPostgres(db) ? POSTGRES : SQLITE;
  for (const [name, columns] of Object.entries(TABLES)) {
    let b = db.schema.createTable(name).ifNotExists();
    for (const [column, kind, key] of columns) b = b.addColumn(column, sql.raw(types[kind]), (c) => (key ? c.notNull() : c));
    b = b.addPrimaryKeyConstraint(`${name}_pk`, columns.filter((c) => c[2]).map((c) => c[0]) as never);
    await b.execute();
  }
  await db.schema
    .createIndex('rpt_custom_field_columns_name_idx')
    .ifNotExists()
    .unique()
    .on('rpt_custom_field_columns')
    .columns(['entity_type', 'column_name'])
    .execute();
  for (const [name, table, columns] of INDEXES)
    await db.schema
      .createIndex(name)
      .ifNotExists()
      .on(table)
      .columns([...columns])
      .execute();
  // The stored timestamp form of both dialects' text input: `YYYY-MM-DD HH:MM:SS.SSS`, UTC.
  const iso = new Date().toISOString();
  const now = `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
  await sql`INSERT INTO sync_state (key, value_json, updated_at) VALUES ('reporting_stale', 'true', ${now})
    ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [name] of INDEXES) await db.schema.dropIndex(name).ifExists().execute();
  for (const name of Object.keys(TABLES)) await db.schema.dropTable(name).ifExists().execute();
}
