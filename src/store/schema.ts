import type { Generated, Kysely, SqlBool } from 'kysely';
import { pipelines, RECORD_ENTITIES, type RecordTable } from '../entities/index.js';
import { TABLES, type RowOf } from './tables.js';

/**
 * Row types of the mirror (docs/schema.md). Timestamps are 23-char UTC text `YYYY-MM-DD HH:MM:SS.SSS`
 * in both dialects (the PostgreSQL store's type parsers give the same form); booleans are
 * 0/1 in SQLite and true/false in PostgreSQL (SqlBool); JSON columns hold JSON text.
 */
type Ts = string;
type Json = string;

export type TicketsTable = RowOf<typeof TABLES.tickets>;

export type TicketMessagesTable = RowOf<typeof TABLES.ticket_messages>;

export type TicketTagsTable = RowOf<typeof TABLES.ticket_tags>;

export interface FieldRow {
  key: string;
  value_text: string | null;
  value_json: Json | null;
}

export type TicketFieldsTable = RowOf<typeof TABLES.ticket_fields>;

export type DealFieldsTable = RowOf<typeof TABLES.deal_fields>;

export interface UsersTable {
  id: string;
  name: string | null;
  email: string | null;
}

export interface ContactsTable {
  id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
}

export interface CompaniesTable {
  id: string;
  name: string | null;
  domain: string | null;
}

export interface PipelinesTable {
  id: string;
  name: string | null;
  deal_count: number | null;
  position: number | null;
  raw_json: Json | null;
}

/** Keyed by (pipeline_id, id) since 0700_owner_keyed_children. */
export interface StagesTable {
  id: string;
  pipeline_id: string;
  name: string | null;
  position: number | null;
  is_won: SqlBool | null;
  is_lost: SqlBool | null;
  raw_json: Json | null;
}

export type DealsTable = RowOf<typeof TABLES.deals>;

export type DealContactsTable = RowOf<typeof TABLES.deal_contacts>;

export type EventsTable = RowOf<typeof TABLES.events>;

export type HistorySource = TicketHistoryTable['source'];

export type TicketHistoryTable = RowOf<typeof TABLES.ticket_history>;

export type DealHistoryTable = RowOf<typeof TABLES.deal_history>;

/**
 * A change-log event that may hide a change of a tracked field but cannot be read as one (migration
 * 0900_history_gaps): its record's history is incomplete (docs/schema.md, history_gaps).
 */
export interface HistoryGapsTable {
  entity_type: string;
  entity_id: string;
  event_id: string;
  event_type: string | null;
  occurred_at: Ts;
  /** The tracked fields it may hide, comma-separated (`stage_id,status`). */
  fields: string;
  reason: string;
}

export interface QuarantineTable {
  entity_type: string;
  entity_id: string;
  reason: string;
  raw_json: Json;
  first_seen_at: Ts;
  last_seen_at: Ts;
}

export interface SyncRunsTable {
  id: Generated<number>;
  kind: string;
  started_at: Ts;
  finished_at: Ts | null;
  /** `running` until finished, then `success`, `failed` or `aborted`. */
  outcome: string | null;
  events_read: number | null;
  events_new: number | null;
  records_fetched: number | null;
  requests: number | null;
  retries: number | null;
  error: string | null;
  /** Cycles this row stands for: idle polls of continuous mode fold into one row (migration 1100). */
  cycles: Generated<number>;
}

export interface SyncStateTable {
  key: string;
  value_json: Json | null;
  updated_at: Ts | null;
}

export type DirtyTable = RowOf<typeof TABLES.dirty>;

/** The writer's inbox (migration 1600, src/store/writer-requests.ts): requests queued while another process writes. */
export interface WriterRequestsTable {
  id: Generated<number>;
  kind: string;
  params_json: string;
  requested_at: Ts;
  started_at: Ts | null;
  finished_at: Ts | null;
  /** Null until served, then `done` or `failed`. */
  outcome: string | null;
  result_json: string | null;
  error_code: string | null;
  error: string | null;
}

export interface MirrorDatabase {
  tickets: TicketsTable;
  ticket_messages: TicketMessagesTable;
  ticket_tags: TicketTagsTable;
  ticket_fields: TicketFieldsTable;
  users: UsersTable;
  contacts: ContactsTable;
  companies: CompaniesTable;
  pipelines: PipelinesTable;
  stages: StagesTable;
  deals: DealsTable;
  deal_contacts: DealContactsTable;
  deal_fields: DealFieldsTable;
  events: EventsTable;
  ticket_history: TicketHistoryTable;
  deal_history: DealHistoryTable;
  history_gaps: HistoryGapsTable;
  quarantine: QuarantineTable;
  sync_runs: SyncRunsTable;
  sync_state: SyncStateTable;
  dirty: DirtyTable;
  writer_requests: WriterRequestsTable;
}

/**
 * Tables counted by `Store.counts()`: each registered entity's record and child tables, the
 * people and pipelines they name, the change log, each entity's history, the dirty set and the
 * quarantine. The entities name their tables as text (src/entities sits below the store); every
 * built-in name is a table of the migrated schema (test/store/migrations.test.ts counts each).
 * Read from the registry when asked, so an entity registered after this module loaded is counted.
 */
export function countedTables(): readonly (keyof MirrorDatabase)[] {
  return [
    ...RECORD_ENTITIES.flatMap((e) => [e.table, ...e.childTables]),
    'users',
    'contacts',
    'companies',
    ...pipelines.tables,
    'events',
    ...RECORD_ENTITIES.map((e) => e.historyTable),
    'history_gaps',
    'quarantine',
    'dirty',
  ] as (keyof MirrorDatabase)[];
}

/** The columns every record table has: its id and the closing stamps of src/store/tables.ts (`recordStamps`). */
export interface RecordStampsRow {
  id: string;
  created_at: Ts | null;
  updated_at: Ts | null;
  deleted_at: Ts | null;
  synced_at: Ts | null;
  raw_json: Json | null;
}

/**
 * The record tables as the queries that take one from the registry (`entityOf(type).table`) see
 * them: a registered entity's table is not in MirrorDatabase, so they read only the columns every
 * record table shares; column names stay checked.
 */
export const recordTables = (db: Kysely<MirrorDatabase>) => db as unknown as Kysely<{ [table in RecordTable]: RecordStampsRow }>;
