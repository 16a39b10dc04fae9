import type { Kysely } from 'kysely';
import type { Deal, Ticket, TicketWithMessages } from '../api/index.js';
import type { HeldUnlisted, ListedRecord, MirroredRecord, RecordType } from '../entities/index.js';
import { ticketMessagesHeld } from './drain-reads.js';
import type { BulkWriter } from './bulk.js';
import { dealDifferences, ticketDifferences, type ContentDifference } from './content-check.js';
import { prepareDeal, writeDeals, type PreparedDeal } from './deals.js';
import type { MirrorDatabase } from './schema.js';
import { prepareTicket, writeTickets, type PreparedTicket } from './tickets.js';

/** How the store keeps one record type: the store's half of an entity (docs/design.md §7, "Adding an entity"). */
export interface RecordStore {
  /** How a copy is converted and written (src/store/bulk.ts). */
  readonly writer: BulkWriter<MirroredRecord, unknown>;
  /** What verify compares: the mirror's rows of these records against their list items, keyed by id. */
  differences(db: Kysely<MirrorDatabase>, items: readonly ListedRecord[], at: string): Promise<Map<string, ContentDifference[]>>;
  /** What the stored copies hold beyond a list item (HeldCopies.heldUnlisted): empty for a type whose list items are whole. */
  heldUnlisted(db: Kysely<MirrorDatabase>, ids: readonly string[]): Promise<Map<string, HeldUnlisted>>;
}

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

/**
 * Each record type's store, in one map typed per type: a new entity fails to compile until it has
 * its entry here, and nothing else in the store names a type.
 */
export const RECORD_STORES: { readonly [K in RecordType]: RecordStore } = {
  ticket: {
    writer: TICKET_WRITER,
    differences: (db, items, at) => ticketDifferences(db, items as readonly Ticket[], at),
    heldUnlisted: ticketMessagesHeld,
  },
  deal: {
    writer: DEAL_WRITER,
    differences: (db, items, at) => dealDifferences(db, items as readonly Deal[], at),
    heldUnlisted: () => Promise.resolve(new Map()),
  },
};
