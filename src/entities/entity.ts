import type { ApiClient, CallOptions, Deal, Page, Ticket, TicketWithMessages } from '../api/index.js';
import type { ContentDifference, DirtyEntry, Store, StoreTx, UpsertResult } from '../store/index.js';
import type { TrackedField } from '../store/tracked-fields.js';
import type { RecordType } from './record-type.js';

/** A copy as read by id: what the mirror writes. */
export type MirroredRecord = TicketWithMessages | Deal;
/** A list item: the whole record for a deal, a ticket without its messages. */
export type ListedRecord = Ticket | Deal;

/** What one drain round does with the list items it found (docs/sync.md, "Drain"). */
export interface ListTaken {
  /** Items that are whole copies, ready to write. */
  copies: { id: string; record: MirroredRecord }[];
  /** Items the list cannot stand in for: read by id instead. */
  readById: string[];
}

/**
 * One mirrored record type, declared once (docs/design.md, "Adding an entity"): sync, store,
 * verify, metrics and status iterate over these and hold no branch of their own on the type.
 */
export interface RecordEntity {
  /** The change log's entityType, the dirty set's and quarantine's entity_type, the metric label. */
  readonly type: RecordType;
  /** The list's name: its backfill phase, its page hook, the reports' change set. */
  readonly plural: 'tickets' | 'deals';
  /** The upstream list (docs/upstream.md, "Lists"). */
  readonly listPath: string;
  /** The record table; `childTables` hold rows that belong to one record and go with it. */
  readonly table: 'tickets' | 'deals';
  readonly childTables: readonly string[];
  /** ticket_history / deal_history, and its column naming the record. */
  readonly historyTable: 'ticket_history' | 'deal_history';
  readonly historyOwner: 'ticket_id' | 'deal_id';
  /**
   * The fields whose changes the mirror keeps as history (docs/schema.md, "History semantics"),
   * with the event spellings that tell them: the observed diff of two reads, the change-log
   * reader and the reports all take their list from here.
   */
  readonly tracked: readonly TrackedField[];
  /** The label of this type's series (wsmirror_records_total{entity_type}). */
  readonly metricLabel: string;
  /**
   * Whether an event of this type may change what the list item does not carry (a ticket's
   * messages): its mark is then read by id (`readMessages`). Unknown event types answer true.
   */
  touchesUnlisted(eventType: string | null): boolean;
  /** Whether a drain plan may take this mark from the list (docs/sync.md, "Drain"): else it is read by id. */
  listable(entry: DirtyEntry): boolean;

  /** One list page, newest-updated first. */
  page(client: ApiClient, q: { cursor?: string | null; limit: number }, opts?: CallOptions): Promise<Page<ListedRecord>>;
  /** Every page of the list (verify). */
  iterate(client: ApiClient, q: { limit: number }): AsyncIterable<Page<ListedRecord>>;
  /** The single read: the whole copy (404: deleted). */
  read(client: ApiClient, id: string, opts?: CallOptions): Promise<MirroredRecord>;
  /** List items found by a drain, as copies to write or ids to read (a ticket whose messages moved). */
  fromList(store: Store, items: readonly ListedRecord[]): Promise<ListTaken>;
  /** What a copy names that the mirror must hold first (a deal's stage), as a key `known` is checked against. */
  requires?(record: MirroredRecord): string;

  /** Writes copies in one batch, with the outcome of writing them one after another (store/record-upsert.ts). */
  write(tx: StoreTx, records: readonly MirroredRecord[], syncedAt: string): Promise<UpsertResult[]>;
  /** What verify compares: every stored column and child table against a list item of the same version. */
  differences(store: Store, items: readonly ListedRecord[]): Promise<Map<string, ContentDifference[]>>;
}
