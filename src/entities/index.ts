import { deal } from './deal.js';
import type { RecordEntity } from './entity.js';
import { ticket } from './ticket.js';

export type {
  HeldCopies,
  HeldUnlisted,
  ListedRecord,
  ListTaken,
  MarkSeen,
  MirroredRecord,
  RecordEntity,
  TrackedField,
  ValueKind,
} from './entity.js';
export { pipelines } from './pipeline.js';

/*
 * The names of the mirrored record types: the one place their unions are spelled, beside the
 * registry that must hold an entity of each. Everything else names a type through `RecordType`
 * and reaches its behaviour through `entityOf`; entity.ts imports these as types only, so the
 * registry is not a runtime cycle.
 */
export type RecordType = 'ticket' | 'deal';
/** A type's list and record table (`tickets`, `deals`). */
export type RecordTable = 'tickets' | 'deals';
/** A type's history table, and its column naming the record. */
export type HistoryTable = 'ticket_history' | 'deal_history';
export type HistoryOwner = 'ticket_id' | 'deal_id';

/** The entity of each record type: typed per type, so a type named above fails to compile until it has one. */
export const DECLARED = { ticket, deal } as const;
// Typed per type: a type named above fails to compile until it has an entity here.
DECLARED satisfies { readonly [K in RecordType]: RecordEntity<unknown, unknown> };

/** Every mirrored record type, in the order a drain, a verify and the metrics take them. */
export const RECORD_ENTITIES: readonly RecordEntity[] = Object.values(DECLARED);

/**
 * The order the backfill copies the record lists in (docs/design.md §4.6): deals first, whose list
 * pages are whole records, so the mirror shows records early and the stages are known; tickets,
 * read one by one for their messages, after. Holds every registered entity once (checked here).
 */
export const BACKFILL_ORDER: readonly RecordEntity[] = [deal, ticket];
if (BACKFILL_ORDER.length !== RECORD_ENTITIES.length || RECORD_ENTITIES.some((e) => !BACKFILL_ORDER.includes(e))) {
  throw new Error('BACKFILL_ORDER must hold every entity of RECORD_ENTITIES once (src/entities/index.ts)');
}

const BY_TYPE = new Map<string, RecordEntity>(RECORD_ENTITIES.map((e) => [e.type, e]));

/** True for an entityType the mirror keeps records of (the change log names more: contacts, tasks, …). */
export function isRecordType(type: unknown): type is RecordType {
  return typeof type === 'string' && BY_TYPE.has(type);
}

export function entityOf(type: RecordType): RecordEntity {
  const entity = BY_TYPE.get(type);
  if (!entity) throw new Error(`no entity is registered for ${String(type)}`);
  return entity;
}

/** Ids of records per list (`tickets`, `deals`): what a run changed, for the reports' refresh. */
export type RecordSets = Record<RecordEntity['plural'], Set<string>>;

export function emptyRecordSets(): RecordSets {
  return Object.fromEntries(RECORD_ENTITIES.map((e) => [e.plural, new Set<string>()])) as RecordSets;
}

/** The record types, as the database's entity_type values. */
export const RECORD_TYPES: readonly RecordType[] = RECORD_ENTITIES.map((e) => e.type);
