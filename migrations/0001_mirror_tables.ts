import { PostgresAdapter, sql, type Kysely, type CreateTableBuilder, type RawBuilder } from 'kysely';

/** Frozen: the migration tells the dialect itself and imports nothing from src/. */
const isPostgres = (db: Kysely<any>): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * The mirror tables of docs/design.md §5 (a public contract: names only change through a new
 * migration and a changelog note) plus the internal sync tables. Child tables reference their
 * parent with ON DELETE CASCADE so BI tools can infer joins; history and events carry no foreign
 * keys because they may name records the mirror has not fetched (yet).
 */
/**
 * Column types per dialect as this migration created them, copied here (as 0100 keeps its own) so
 * a later change to the live map in src/store/dialect.ts cannot change what 0001 creates.
 */
function types(db: Kysely<any>) {
  const pg = isPostgres(db);
  return {
    timestamp: pg ? 'timestamptz' : 'datetime',
    date: 'date',
    boolean: pg ? 'boolean' : 'integer',
    json: pg ? 'jsonb' : 'text',
    decimal: pg ? 'numeric' : 'text',
    bigint: pg ? 'bigint' : 'integer',
    serial: pg ? 'bigserial' : 'integer',
    pg,
  } as const;
}

/** The column types and the auto-increment key, resolved once per run for the migrating database. */
interface Columns {
  t: ReturnType<typeof types>;
  ts: RawBuilder<unknown>;
  bool: RawBuilder<unknown>;
  json: RawBuilder<unknown>;
  serialPk: <N extends string>(b: CreateTableBuilder<N, any>) => CreateTableBuilder<N, any>;
}

function columns(db: Kysely<any>): Columns {
  const t = types(db);
  return {
    t,
    ts: sql.raw(t.timestamp),
    bool: sql.raw(t.boolean),
    json: sql.raw(t.json),
    serialPk: (b) => b.addColumn('id', sql.raw(t.serial), (c) => (t.pg ? c.primaryKey() : c.primaryKey().autoIncrement())),
  };
}

/**
 * One helper per group of tables, called in the order the statements always ran: this migration is
 * frozen (docs/design.md §5), so splitting it must not change a statement or their order.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const cols = columns(db);
  await createPeopleTables(db);
  await createTicketTables(db, cols);
  await createSalesTables(db, cols);
  await createChangeLogTables(db, cols);
  await createSyncTables(db, cols);
  await createIndexes(db);
}

/** Users, contacts and companies: the names tickets and deals point at. */
async function createPeopleTables(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text')
    .addColumn('email', 'text')
    .execute();

  await db.schema
    .createTable('contacts')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('first_name', 'text')
    .addColumn('last_name', 'text')
    .addColumn('email', 'text')
    .execute();

  await db.schema
    .createTable('companies')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text')
    .addColumn('domain', 'text')
    .execute();
}

/** Tickets and their children; children cascade so BI tools can infer the joins. */
async function createTicketTables(db: Kysely<any>, { ts, bool, json }: Columns): Promise<void> {
  await db.schema
    .createTable('tickets')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('number', 'integer')
    .addColumn('key', 'text')
    .addColumn('subject', 'text')
    .addColumn('status', 'text')
    .addColumn('priority', 'text')
    .addColumn('summary', 'text')
    .addColumn('contact_id', 'text')
    .addColumn('assignee_id', 'text')
    .addColumn('team_id', 'text')
    .addColumn('team_name', 'text')
    .addColumn('team_json', json)
    .addColumn('tags_json', json)
    .addColumn('fields_json', json)
    .addColumn('cc_json', json)
    .addColumn('message_count', 'integer')
    .addColumn('first_reply_due_at', ts)
    .addColumn('resolve_due_at', ts)
    .addColumn('first_reply_breached_at', ts)
    .addColumn('resolve_breached_at', ts)
    .addColumn('first_agent_reply_at', ts)
    .addColumn('resolved_at', ts)
    .addColumn('status_changed_at', ts)
    .addColumn('created_at', ts)
    .addColumn('updated_at', ts)
    .addColumn('deleted_at', ts)
    .addColumn('synced_at', ts)
    .addColumn('raw_json', json)
    .execute();

  await db.schema
    .createTable('ticket_messages')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('ticket_id', 'text', (c) => c.notNull().references('tickets.id').onDelete('cascade'))
    .addColumn('body', 'text')
    .addColumn('author_type', 'text')
    .addColumn('author_id', 'text')
    .addColumn('is_internal', bool)
    .addColumn('attachments_json', json)
    .addColumn('created_at', ts)
    .addColumn('raw_json', json)
    .execute();

  await db.schema
    .createTable('ticket_tags')
    .ifNotExists()
    .addColumn('ticket_id', 'text', (c) => c.notNull().references('tickets.id').onDelete('cascade'))
    .addColumn('tag', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('ticket_tags_pk', ['ticket_id', 'tag'])
    .execute();

  await db.schema
    .createTable('ticket_fields')
    .ifNotExists()
    .addColumn('ticket_id', 'text', (c) => c.notNull().references('tickets.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value_text', 'text')
    .addColumn('value_json', json)
    .addPrimaryKeyConstraint('ticket_fields_pk', ['ticket_id', 'key'])
    .execute();
}

/** Pipelines, stages, deals and the deals' children. */
async function createSalesTables(db: Kysely<any>, { t, ts, bool, json }: Columns): Promise<void> {
  await db.schema
    .createTable('pipelines')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text')
    .addColumn('deal_count', 'integer')
    .addColumn('position', 'integer')
    .addColumn('raw_json', json)
    .execute();

  await db.schema
    .createTable('stages')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('pipeline_id', 'text', (c) => c.references('pipelines.id').onDelete('cascade'))
    .addColumn('name', 'text')
    .addColumn('position', 'integer')
    .addColumn('is_won', bool)
    .addColumn('is_lost', bool)
    .addColumn('raw_json', json)
    .execute();

  await db.schema
    .createTable('deals')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text')
    .addColumn('amount', sql.raw(t.decimal))
    .addColumn('amount_cents', sql.raw(t.bigint))
    .addColumn('currency', 'text')
    .addColumn('close_date', sql.raw(t.date))
    .addColumn('status', 'text')
    .addColumn('pipeline_id', 'text')
    .addColumn('stage_id', 'text')
    .addColumn('owner_id', 'text')
    .addColumn('company_id', 'text')
    .addColumn('fields_json', json)
    .addColumn('created_at', ts)
    .addColumn('updated_at', ts)
    .addColumn('deleted_at', ts)
    .addColumn('synced_at', ts)
    .addColumn('raw_json', json)
    .execute();

  await db.schema
    .createTable('deal_contacts')
    .ifNotExists()
    .addColumn('deal_id', 'text', (c) => c.notNull().references('deals.id').onDelete('cascade'))
    .addColumn('contact_id', 'text', (c) => c.notNull())
    .addColumn('is_primary', bool)
    .addColumn('position', 'integer')
    .addPrimaryKeyConstraint('deal_contacts_pk', ['deal_id', 'contact_id'])
    .execute();

  await db.schema
    .createTable('deal_fields')
    .ifNotExists()
    .addColumn('deal_id', 'text', (c) => c.notNull().references('deals.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value_text', 'text')
    .addColumn('value_json', json)
    .addPrimaryKeyConstraint('deal_fields_pk', ['deal_id', 'key'])
    .execute();
}

/** The change log and the per-field history; no foreign keys, they may name records not fetched yet. */
async function createChangeLogTables(db: Kysely<any>, { ts, json, serialPk }: Columns): Promise<void> {
  await db.schema
    .createTable('events')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text')
    .addColumn('entity_type', 'text')
    .addColumn('entity_id', 'text')
    .addColumn('payload_json', json)
    .addColumn('actor_id', 'text')
    .addColumn('occurred_at', ts)
    .addColumn('received_at', ts)
    .addColumn('raw_json', json)
    .execute();

  for (const [table, owner] of [
    ['ticket_history', 'ticket_id'],
    ['deal_history', 'deal_id'],
  ] as const) {
    await serialPk(db.schema.createTable(table).ifNotExists())
      .addColumn(owner, 'text', (c) => c.notNull())
      .addColumn('field', 'text', (c) => c.notNull())
      .addColumn('from_value', 'text')
      .addColumn('to_value', 'text')
      .addColumn('changed_at', ts, (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text')
      .addColumn('observed_since', ts)
      .execute();
  }
}

/** The sync's own bookkeeping: quarantine, runs, state and the dirty set (docs/design.md §4.3, §4.5). */
async function createSyncTables(db: Kysely<any>, { ts, json, serialPk }: Columns): Promise<void> {
  await db.schema
    .createTable('quarantine')
    .ifNotExists()
    .addColumn('entity_type', 'text', (c) => c.notNull())
    .addColumn('entity_id', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('raw_json', json, (c) => c.notNull())
    .addColumn('first_seen_at', ts, (c) => c.notNull())
    .addColumn('last_seen_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('quarantine_pk', ['entity_type', 'entity_id'])
    .execute();

  await serialPk(db.schema.createTable('sync_runs').ifNotExists())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('started_at', ts, (c) => c.notNull())
    .addColumn('finished_at', ts)
    .addColumn('outcome', 'text')
    .addColumn('events_read', 'integer')
    .addColumn('events_new', 'integer')
    .addColumn('records_fetched', 'integer')
    .addColumn('requests', 'integer')
    .addColumn('retries', 'integer')
    .addColumn('error', 'text')
    .execute();

  await db.schema
    .createTable('sync_state')
    .ifNotExists()
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value_json', 'text')
    .addColumn('updated_at', ts)
    .execute();

  await db.schema
    .createTable('dirty')
    .ifNotExists()
    .addColumn('entity_type', 'text', (c) => c.notNull())
    .addColumn('entity_id', 'text', (c) => c.notNull())
    .addColumn('occurred_at', ts, (c) => c.notNull())
    .addColumn('stale_reads', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('marked_at', ts)
    .addPrimaryKeyConstraint('dirty_pk', ['entity_type', 'entity_id'])
    .execute();
}

/** Indexes last, once every table they name exists. */
async function createIndexes(db: Kysely<any>): Promise<void> {
  const indexes: [string, string, string[], boolean?][] = [
    ['ticket_messages_ticket_created_idx', 'ticket_messages', ['ticket_id', 'created_at']],
    ['ticket_tags_tag_idx', 'ticket_tags', ['tag']],
    ['tickets_status_idx', 'tickets', ['status']],
    ['tickets_updated_at_idx', 'tickets', ['updated_at']],
    ['tickets_assignee_idx', 'tickets', ['assignee_id']],
    ['tickets_contact_idx', 'tickets', ['contact_id']],
    ['stages_pipeline_idx', 'stages', ['pipeline_id', 'position']],
    ['deals_stage_idx', 'deals', ['stage_id']],
    ['deals_pipeline_idx', 'deals', ['pipeline_id']],
    ['deals_owner_idx', 'deals', ['owner_id']],
    ['deals_company_idx', 'deals', ['company_id']],
    ['deal_contacts_contact_idx', 'deal_contacts', ['contact_id']],
    ['events_occurred_at_idx', 'events', ['occurred_at']],
    ['events_entity_idx', 'events', ['entity_type', 'entity_id']],
    ['ticket_history_ticket_changed_idx', 'ticket_history', ['ticket_id', 'changed_at']],
    ['deal_history_deal_changed_idx', 'deal_history', ['deal_id', 'changed_at']],
    // NULLs are distinct in unique indexes in both dialects, so observed rows (no event) coexist.
    ['ticket_history_event_id_idx', 'ticket_history', ['event_id'], true],
    ['deal_history_event_id_idx', 'deal_history', ['event_id'], true],
    ['dirty_occurred_at_idx', 'dirty', ['occurred_at']],
    ['sync_runs_started_at_idx', 'sync_runs', ['started_at']],
  ];
  for (const [name, table, columns, unique] of indexes) {
    let b = db.schema.createIndex(name).ifNotExists().on(table).columns(columns);
    if (unique) b = b.unique();
    await b.execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  // prettier-ignore
  for (const table of [
    'dirty', 'sync_state', 'sync_runs', 'quarantine', 'deal_history', 'ticket_history', 'events',
    'deal_fields', 'deal_contacts', 'deals', 'stages', 'pipelines', 'ticket_fields', 'ticket_tags',
    'ticket_messages', 'tickets', 'companies', 'contacts', 'users',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
