import { deal } from './deal.js';
import type { RecordEntity } from './entity.js';
import { ticket } from './ticket.js';
import type { TableDecl } from './table-decl.js';

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

/**
 * The built-in record types, each declared whole in its module (docs/design.md §7), in the order
 * a drain, a verify, the metrics and the counts take them: the one list of them, from which the
 * built-in unions, their tables and the registry derive. Registered entities follow, in their
 * order of registration.
 */
const BUILT_IN = [ticket, deal] as const;

/** One built-in entity, with its names as literals. */
export type BuiltIn = (typeof BUILT_IN)[number];
/** The types built in: the store's per-type map (src/store/record-stores.ts) has an entry for each. */
export type BuiltInType = BuiltIn['type'];
export type BuiltInTable = BuiltIn['table'];

type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
/** Every built-in type's tables, as each declares them (src/store/tables.ts adds the sync's own to them). */
export const BUILT_IN_TABLES = Object.assign({}, ...BUILT_IN.map((e) => e.tables)) as Intersection<BuiltIn['tables']>;
BUILT_IN_TABLES satisfies Record<string, TableDecl>;

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
 * The names of the mirrored record types: the built-in ones are read off their declarations, and
 * any other comes through `registerEntity`. Everything else names a type through `RecordType` and
 * reaches its behaviour through `entityOf`; entity.ts imports these as types only, so the registry
 * is not a runtime cycle.
 */
export type RecordType = BuiltInType | RegisteredName;
/** A type's list and record table (`tickets`, `deals`). */
export type RecordTable = BuiltInTable | RegisteredName;
/** A type's history table, and its column naming the record. */
export type HistoryTable = BuiltIn['historyTable'] | RegisteredName;
export type HistoryOwner = BuiltIn['historyOwner'] | RegisteredName;

/*
 * The registry. This array is live: `registerEntity` appends to it, so every loop over it (the
 * drain, verify, the backfill's phases, the counts) takes a registered entity in its turn.
 */
const entities: RecordEntity[] = [];
const order: RecordEntity[] = [deal];
const types: RecordType[] = [];

/** Every mirrored record type, in the order a drain, a verify and the metrics take them. */
export const RECORD_ENTITIES: readonly RecordEntity[] = entities;

/**
 * The order the backfill copies the record lists in (docs/design.md §4.6): deals first, whose list
 * pages are whole records, so the mirror shows records early and the stages are known; every other
 * type after, in the registry's order (tickets, read one by one for their messages, then any other
 * built-in one, then the registered ones). Holds every registered entity once.
 */
export const BACKFILL_ORDER: readonly RecordEntity[] = order;

/** The record types, as the database's entity_type values. */
export const RECORD_TYPES: readonly RecordType[] = types;

const BY_TYPE = new Map<string, RecordEntity>();

/**
 * Adds a record type to the registry: from then on the engine mirrors it like a built-in one
 * (docs/design.md §7). Its store half is registered beside it (`registerRecordType` in
 * src/store/record-stores.ts calls this); its tables must exist in the mirror, which the
 * migrations only ensure for the built-in ones. Meant for process start (a test's fixture entity
 * registers before its first store opens); a name, list or table already taken throws.
 */
export function registerEntity(entity: RecordEntity<never, never>): void {
  const e = entity as unknown as RecordEntity;
  const own = [e.table, ...e.childTables, e.historyTable];
  const taken = entities.find((o) => o.type === e.type || o.plural === e.plural || own.some((t) => t in o.tables));
  if (taken) throw new Error(`entity ${e.type}: its type, list or a table is already taken by ${taken.type}`);
  const undeclared = own.filter((t) => !(t in e.tables));
  if (undeclared.length > 0) throw new Error(`entity ${e.type}: ${undeclared.join(', ')} not declared in its tables`);
  entities.push(e);
  if (!order.includes(e)) order.push(e);
  types.push(e.type);
  BY_TYPE.set(e.type, e);
}

for (const e of BUILT_IN) registerEntity(e as unknown as RecordEntity<never, never>);

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
