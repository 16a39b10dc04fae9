import type { Kysely } from 'kysely';
import type { Deal, Ticket, TicketWithMessages } from '../api/index.js';
import {
  registerEntity,
  type BuiltInType,
  type HeldUnlisted,
  type ListedRecord,
  type MirroredRecord,
  type RecordEntity,
  type RecordType,
} from '../entities/index.js';
import { ticketMessagesHeld } from './drain-reads.js';
import type { BulkWriter } from './bulk.js';
import { DEAL_COMPARED, recordDifferences, TICKET_COMPARED, type ContentDifference } from './content-check.js';
import { prepareDeal, writeDeals, type PreparedDeal } from './deals.js';
import type { MirrorDatabase } from './schema.js';
import { prepareTicket, writeTickets, type PreparedTicket } from './tickets.js';

/** How the store keeps one record type: the store's half of an entity (docs/design.md §7, "Adding an entity"). */
export interface RecordStore<C = MirroredRecord, L = ListedRecord> {
  /** How a copy is converted and written (src/store/bulk.ts). */
  readonly writer: BulkWriter<C, unknown>;
  /** What verify compares: the mirror's rows of these records against their list items, keyed by id. */
  differences(db: Kysely<MirrorDatabase>, items: readonly L[], at: string): Promise<Map<string, ContentDifference[]>>;
  /** What the stored copies hold beyond a list item (HeldCopies.heldUnlisted): empty for a type whose list items are whole. */
  heldUnlisted(db: Kysely<MirrorDatabase>, ids: readonly string[]): Promise<Map<string, HeldUnlisted>>;
}

/** For a type whose list items are whole copies: the stored copies hold nothing more. */
export const NOTHING_UNLISTED = (): Promise<Map<string, HeldUnlisted>> => Promise.resolve(new Map<string, HeldUnlisted>());

export const TICKET_WRITER: BulkWriter<TicketWithMessages, PreparedTicket> = {
  entityType: 'ticket',
  prepare: prepareTicket,
  idOf: (p) => p.row.id,
  write: writeTickets,
};
export const DEAL_WRITER: BulkWriter<Deal, PreparedDeal> = {
  entityType: 'deal',
  prepare: prepareDeal,
  idOf: (p) => p.row.id,
  write: writeDeals,
};

/** The built-in types' stores, typed per type: a built-in entity fails to compile until it has its entry here. */
const BUILT_IN: { readonly [K in BuiltInType]: RecordStore } = {
  ticket: {
    writer: TICKET_WRITER,
    differences: (db, items, at) => recordDifferences(db, TICKET_COMPARED, items as readonly Ticket[], at),
    heldUnlisted: ticketMessagesHeld,
  },
  deal: {
    writer: DEAL_WRITER,
    differences: (db, items, at) => recordDifferences(db, DEAL_COMPARED, items as readonly Deal[], at),
    heldUnlisted: NOTHING_UNLISTED,
  },
};

const stores = new Map<RecordType, RecordStore>(Object.entries(BUILT_IN) as [RecordType, RecordStore][]);

/** The store of a registered record type; nothing else in the store names a type. */
export function recordStoreOf(type: RecordType): RecordStore {
  const store = stores.get(type);
  if (!store) throw new Error(`no record store is registered for ${String(type)}`);
  return store;
}

/**
 * Registers a record type, its entity and its store together (docs/design.md §7): from then on the
 * engine backfills, syncs and verifies it like a built-in one. Its tables must exist in the
 * mirror (the migrations create only the built-in ones). The entity's copies and list items are
 * its own types, which the engine hands back to this entity and store only: the one place they
 * are widened to the registry's record unions.
 */
export function registerRecordType<C extends { id: string }, L extends { id: string }>(
  entity: RecordEntity<C, L>,
  store: RecordStore<C, L>,
): void {
  if (store.writer.entityType !== entity.type) throw new Error(`the store of ${entity.type} writes ${store.writer.entityType}`);
  registerEntity(entity as unknown as RecordEntity<never, never>);
  stores.set(entity.type, store as unknown as RecordStore);
}
