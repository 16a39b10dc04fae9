import type { ListSource, RecordSource } from '../api/index.js';
import type { BuiltIn, HistoryOwner, HistoryTable, RecordTable, RecordType } from './index.js';
import type { TableDecl } from './table-decl.js';

/** A copy as read by id, what the mirror writes: the built-in entities' copies (each one's `single`). */
export type MirroredRecord = BuiltIn extends { single: RecordSource<infer C> } ? C : never;
/** A list item, the built-in entities' (each one's `list`): the whole record for a deal, a ticket without its messages. */
export type ListedRecord = BuiltIn extends { list: ListSource<infer L> } ? L : never;

/** How a change's from/to values are read into the text history rows hold. */
export type ValueKind = 'id' | 'text' | 'amount' | 'date';

/**
 * A field whose changes the mirror keeps in ticket_history / deal_history (docs/schema.md,
 * "History semantics"). Each entity module declares its own; src/store/tracked-fields.ts reads them.
 */
export interface TrackedField {
  /** The history field, which is also the mirror column compared on a re-read. */
  readonly field: string;
  /**
   * The field's API name. A change-log payload may spell it in any common way: as is or as the
   * column, camelCase or snake_case, with or without `Id`, in any letter case (`stage`,
   * `stageId`, `stage_id`, `StageID`); `spelledAs` decides.
   */
  readonly name: string;
  readonly value: ValueKind;
  /** Event verbs that tell this field's change, beyond `<any spelling>_changed` (`ticket.assigned`). */
  readonly verbs?: readonly string[];
  /**
   * Names of other fields whose change implies one of this field (a deal moved to another
   * pipeline moves stage): a payload naming one without a readable change of this field may hide one.
   */
  readonly implied?: readonly string[];
  /**
   * The field this one follows upstream (a deal's status follows its stage): a change of that
   * field the mirror cannot read may hide one of this field too.
   */
  readonly follows?: string;
}

/** A dirty mark as a drain plan sees it (the store's DirtyEntry). */
export interface MarkSeen {
  /** What the list item does not carry (a ticket's messages) may have changed: only the single read shows it. */
  readUnlisted: boolean;
}

/** What the mirror holds of one record beyond its list item (a ticket's messages): their count and the parts themselves. */
export interface HeldUnlisted {
  count: number | null;
  /** As received in the stored copy; null when the copy holds none. */
  parts: unknown[] | null;
}

/**
 * What the mirror holds of listed records, as a drain asks it (the store answers), to tell
 * whether a list item can stand in for a read by id.
 */
export interface HeldCopies {
  /** The unlisted parts of the stored copies of these records (absent: not mirrored, or the type has none). */
  heldUnlisted(type: RecordType, ids: readonly string[]): Promise<Map<string, HeldUnlisted>>;
}

/** What one drain round does with the list items it found (docs/sync.md, "Drain"). */
export interface ListTaken<C = MirroredRecord> {
  /** Items that are whole copies, ready to write. */
  copies: { id: string; record: C }[];
  /** Items the list cannot stand in for: read by id instead. */
  readById: string[];
}

/**
 * One mirrored record type, declared once (docs/design.md, "Adding an entity"): sync, store,
 * verify, metrics and status iterate over these and hold no branch of their own on the type.
 */
export interface RecordEntity<C = MirroredRecord, L = ListedRecord> {
  /** The change log's entityType, the dirty set's and quarantine's entity_type, the metric label. */
  readonly type: RecordType;
  /** The list's name: its backfill phase, its page hook, the reports' change set. */
  readonly plural: RecordTable;
  /** The upstream list, newest-updated first, and how its items are checked (docs/upstream.md, "Endpoints read"). */
  readonly list: ListSource<L>;
  /** The single read: the whole copy (404: deleted). */
  readonly single: RecordSource<C>;
  /** The record table; `childTables` hold rows that belong to one record and go with it. */
  readonly table: RecordTable;
  readonly childTables: readonly string[];
  /** ticket_history / deal_history, and its column naming the record. */
  readonly historyTable: HistoryTable;
  readonly historyOwner: HistoryOwner;
  /**
   * Its tables, declared beside it: the record table, each child table and the history table
   * (checked when the registry takes it). A built-in type's migration creates them, and
   * test/store/declared-schema.test.ts holds the two together; a registered type's are created
   * from these declarations (test/helpers/ddl.ts).
   */
  readonly tables: Readonly<Record<string, TableDecl>>;
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
   * messages): its mark is then read by id (`readUnlisted`). Unknown event types answer true.
   */
  touchesUnlisted(eventType: string | null): boolean;
  /** Whether a drain plan may take this mark from the list (docs/sync.md, "Drain"): else it is read by id. */
  listable(mark: MarkSeen): boolean;

  /** List items found by a drain, as copies to write or ids to read (a ticket whose messages moved). */
  fromList(held: HeldCopies, items: readonly L[]): Promise<ListTaken<C>>;
  /** What a copy names that the mirror must hold first (a deal's stage), as a key `known` is checked against. */
  requires?(record: C): string;
}

/** The names a built-in entity declares as literals, its tables with them: src/entities/index.ts derives the built-in unions from these. */
export interface EntityNames {
  readonly type: string;
  readonly plural: string;
  readonly table: string;
  readonly historyTable: string;
  readonly historyOwner: string;
  readonly tables: Readonly<Record<string, TableDecl>>;
}

/**
 * A built-in entity's names as literals, by the mirror's convention: its list and record table
 * `plural`, its history table `<type>_history`, whose column naming the record is `<type>_id`
 * (as its child tables name it too); and its tables, which must declare those (the registry checks).
 */
export function entityNames<T extends string, P extends string, Tables extends Readonly<Record<string, TableDecl>>>(
  type: T,
  plural: P,
  tables: Tables,
) {
  return { type, plural, table: plural, historyTable: `${type}_history`, historyOwner: `${type}_id`, tables } as const;
}

/** A built-in entity: a `RecordEntity` whose names (`N`, declared `as const`) keep their literal types. */
export type BuiltInEntity<C, L, N extends EntityNames> = Omit<RecordEntity<C, L>, keyof EntityNames> & N;
