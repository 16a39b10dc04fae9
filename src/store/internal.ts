import type { Kysely } from 'kysely';
import { databaseHandle } from './handles.js';
import type { MirrorDatabase } from './schema.js';
import type { Store } from './store.js';

/**
 * The store's query builder, for src/report, which builds the rpt_ tables in SQL over the whole
 * mirror, and for tests; everything else asks the store a named question (docs/design.md §5.1).
 * eslint.config.js makes importing this module an error anywhere else in src.
 */
export function databaseOf(store: Store): Kysely<MirrorDatabase> {
  return databaseHandle(store);
}
