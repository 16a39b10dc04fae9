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

/** The types built in, which the reports (src/report, per type by nature) and the bench name. */
export type BuiltInType = 'ticket' | 'deal';
export type BuiltInTable = 'tickets' | 'deals';

declare const registered: unique symbol;
/**
 * A name of an entity registered at run time (`registerEntity`: a test's fixture entity), which
 * the compiler cannot list. Branded, so that a plain string is never taken for one: a name becomes
 * a record type only through `registeredName` in a declaration, or `isRecordType`, which asks the
 * registry. A map typed per record type (`Record<RecordTable, number>`) then still requires every
 * built-in entry and reads a registered one as possibly absent.
 */
export type RegisteredName = string & { readonly [registered]: true };
/** Brands the names of a declaration that `registerEntity` adds (its type, list, tables). */
export const registeredName = <N extends string>(name: N): N & RegisteredName => name as N & RegisteredName;

/*
 * The names of the mirrored record types: the built-in ones are spelled here, beside the registry
 * that must hold an entity of each, and any other comes through `registerEntity`. Everything else
 * names a type through `RecordType` and reaches its behaviour through `entityOf`; entity.ts
 * imports these as types only, so the registry is not a runtime cycle.
 */
export type RecordType = BuiltInType | RegisteredName;
/** A type's list and record table (`tickets`, `deals`). */
export type RecordTable = BuiltInTable | RegisteredName;
/** A type's history table, and its column naming the record. */
export type HistoryTable = 'ticket_history' | 'deal_history' | RegisteredName;
export type HistoryOwner = 'ticket_id' | 'deal_id' | RegisteredName;

/** The entity of each built-in record type: typed per type, so a built-in type fails to compile until it has one. */
export const DECLARED = { ticket, deal } as const;
DECLARED satisfies { readonly [K in BuiltInType]: RecordEntity<unknown, unknown> };

/*
 * The registry. These arrays are live: `registerEntity` appends to them, so every loop over them
 * (the drain, verify, the backfill's phases, the counts) takes a registered entity in its turn.
 */
const entities: RecordEntity[] = Object.values(DECLARED);
const order: RecordEntity[] = [deal, ticket];
const types: RecordType[] = entities.map((e) => e.type);

/** Every mirrored record type, in the order a drain, a verify and the metrics take them. */
export const RECORD_ENTITIES: readonly RecordEntity[] = entities;

/**
 * The order the backfill copies the record lists in (docs/design.md §4.6): deals first, whose list
 * pages are whole records, so the mirror shows records early and the stages are known; tickets,
 * read one by one for their messages, after; registered entities last, in their order of
 * registration. Holds every registered entity once (checked here).
 */
export const BACKFILL_ORDER: readonly RecordEntity[] = order;
if (BACKFILL_ORDER.length !== RECORD_ENTITIES.length || RECORD_ENTITIES.some((e) => !BACKFILL_ORDER.includes(e))) {
  throw new Error('BACKFILL_ORDER must hold every entity of RECORD_ENTITIES once (src/entities/index.ts)');
}

/** The record types, as the database's entity_type values. */
export const RECORD_TYPES: readonly RecordType[] = types;

const BY_TYPE = new Map<string, RecordEntity>(RECORD_ENTITIES.map((e) => [e.type, e]));

/**
 * Adds a record type to the registry: from then on the engine mirrors it like a built-in one
 * (docs/design.md §7). Its store half is registered beside it (`registerRecordType` in
 * src/store/record-stores.ts calls this); its tables must exist in the mirror, which the
 * migrations only ensure for the built-in ones. Meant for process start (a test's fixture entity
 * registers before its first store opens); a name, list or table already taken throws.
 */
export function registerEntity(entity: RecordEntity<never, never>): void {
  const e = entity as unknown as RecordEntity;
  const taken = entities.find(
    (o) => o.type === e.type || o.plural === e.plural || o.table === e.table || o.historyTable === e.historyTable,
  );
  if (taken) throw new Error(`entity ${e.type}: its type, list or a table is already taken by ${taken.type}`);
  entities.push(e);
  order.push(e);
  types.push(e.type);
  BY_TYPE.set(e.type, e);
}

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

/** The set of one list in `sets`, made on first use: sets made before an entity registered lack its list. */
export function recordSet(sets: RecordSets, list: RecordTable): Set<string> {
  return (sets[list] ??= new Set<string>());
}
