import type { Kysely } from 'kysely';
import { pipelines, RECORD_ENTITIES, type RecordTable } from '../entities/index.js';
import type { RowOf } from '../entities/table-decl.js';
import { TABLES } from './tables.js';
import { SUPPORT_TABLES } from './tables-sync.js';

/**
 * Row types of the mirror (docs/schema.md). Timestamps are 23-char UTC text `YYYY-MM-DD HH:MM:SS.SSS`
 * in both dialects (the PostgreSQL store's type parsers give the same form); booleans are
 * 0/1 in SQLite and true/false in PostgreSQL (SqlBool); JSON columns hold JSON text.
 */
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

export type UsersTable = RowOf<typeof SUPPORT_TABLES.users>;

export type ContactsTable = RowOf<typeof SUPPORT_TABLES.contacts>;

export type CompaniesTable = RowOf<typeof SUPPORT_TABLES.companies>;

export type PipelinesTable = RowOf<typeof SUPPORT_TABLES.pipelines>;

/** Keyed by (pipeline_id, id) since 0700_owner_keyed_children. */
export type StagesTable = RowOf<typeof SUPPORT_TABLES.stages>;

export type DealsTable = RowOf<typeof TABLES.deals>;

export type DealContactsTable = RowOf<typeof TABLES.deal_contacts>;

export type EventsTable = RowOf<typeof TABLES.events>;

export type HistorySource = TicketHistoryTable['source'];

export type TicketHistoryTable = RowOf<typeof TABLES.ticket_history>;

export type DealHistoryTable = RowOf<typeof TABLES.deal_history>;

/** Events that may hide a tracked change (migration 0900_history_gaps; docs/schema.md, history_gaps). */
export type HistoryGapsTable = RowOf<typeof SUPPORT_TABLES.history_gaps>;

export type QuarantineTable = RowOf<typeof SUPPORT_TABLES.quarantine>;

export type SyncRunsTable = RowOf<typeof SUPPORT_TABLES.sync_runs>;

export type SyncStateTable = RowOf<typeof SUPPORT_TABLES.sync_state>;

export type DirtyTable = RowOf<typeof TABLES.dirty>;

/** The writer's inbox (migration 1600, src/store/writer-requests.ts): requests queued while another process writes. */
export type WriterRequestsTable = RowOf<typeof SUPPORT_TABLES.writer_requests>;

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

/** The columns every record table has: its id and the closing stamps of src/entities/table-decl.ts (`recordStamps`). */
export interface RecordStampsRow {
  id: string;
  created_at: string | null;
  updated_at: string | null;
  deleted_at: string | null;
  synced_at: string | null;
  raw_json: Json | null;
}

/**
 * The record tables as the queries that take one from the registry (`entityOf(type).table`) see
 * them: a registered entity's table is not in MirrorDatabase, so they read only the columns every
 * record table shares; column names stay checked.
 */
export const recordTables = (db: Kysely<MirrorDatabase>) => db as unknown as Kysely<{ [table in RecordTable]: RecordStampsRow }>;
