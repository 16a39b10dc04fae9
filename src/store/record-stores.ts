import { registerEntity, type BuiltInType, type RecordEntity, type RecordType } from '../entities/index.js';
import { ticketMessagesHeld } from './drain-reads.js';
import { DEAL_COMPARED, TICKET_COMPARED } from './content-check.js';
import { DEAL_KIND } from './deals.js';
import { NOTHING_UNLISTED, type RecordStore } from './record-store.js';
import { TICKET_KIND } from './tickets.js';

export type { RecordStore };

/**
 * The built-in types' stores, typed per type: a type listed in BUILT_IN (src/entities/index.ts)
 * fails to compile until it has its entry here (for one that writes no references,
 * `declaredRecordStore` over its record table's declaration and the row a copy makes).
 */
const BUILT_IN: { readonly [K in BuiltInType]: RecordStore } = {
  ticket: { kind: TICKET_KIND, compared: TICKET_COMPARED, heldUnlisted: ticketMessagesHeld },
  deal: { kind: DEAL_KIND, compared: DEAL_COMPARED, heldUnlisted: NOTHING_UNLISTED },
};

const stores = new Map<RecordType, RecordStore>(Object.entries(BUILT_IN) as [RecordType, RecordStore][]);

/** The store of a registered record type; nothing else in the store names a type. */
export function recordStoreOf(type: RecordType): RecordStore {
  const store = stores.get(type);
  if (!store) throw new Error(`no record store is registered for ${String(type)}`);
  return store;
}

/**
 * One record type declared whole: its entity (src/entities) and its store half in one object, as a
 * type registered at run time is declared (test/entity-fixture/task.ts). The built-in types keep
 * the two halves apart, since src/entities sits below the store.
 */
export type RecordDeclaration<C, L> = RecordEntity<C, L> & RecordStore<C, L>;

/**
 * Registers a record type (docs/design.md §7): from then on the engine backfills, syncs and
 * verifies it like a built-in one. Its tables must exist in the mirror (the migrations create
 * only the built-in ones). The declaration's copies and list items are its own types, which the
 * engine hands back to this declaration only: the one place they are widened to the registry's
 * record unions.
 */
export function registerRecordType<C extends { id: string }, L extends { id: string }>(declaration: RecordDeclaration<C, L>): void {
  const { kind, compared, heldUnlisted, ...entity } = declaration;
  if (kind.entityType !== entity.type) throw new Error(`the store of ${entity.type} writes ${kind.entityType}`);
  registerEntity(entity as unknown as RecordEntity<never, never>);
  stores.set(entity.type, { kind, compared, heldUnlisted } as unknown as RecordStore);
}
