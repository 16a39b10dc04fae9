/**
 * The names of the mirrored record types: the one place their unions are spelled. Everything else
 * names a type through `RecordType` and reaches its behaviour through `entityOf`
 * (src/entities/index.ts). A leaf module, so any layer can name a type without importing the
 * registry, and a new entity adds its names here once.
 */
export type RecordType = 'ticket' | 'deal';
/** A type's list and record table (`tickets`, `deals`). */
export type RecordTable = 'tickets' | 'deals';
/** A type's history table, and its column naming the record. */
export type HistoryTable = 'ticket_history' | 'deal_history';
export type HistoryOwner = 'ticket_id' | 'deal_id';
