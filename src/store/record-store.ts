import type { Kysely } from 'kysely';
import type { HeldUnlisted, ListedRecord, MirroredRecord } from '../entities/index.js';
import type { Compared } from './content-check.js';
import type { PreparedRecord, RecordKind } from './record-upsert.js';
import type { MirrorDatabase } from './schema.js';

/**
 * How the store keeps one record type: the store's half of an entity (docs/design.md §7), as
 * declarations the store's one write path and verify's one comparison run.
 */
export interface RecordStore<C = MirroredRecord, L = ListedRecord> {
  /** How a copy is converted and written: the one upsert path's part of this type (record-upsert.ts). */
  readonly kind: RecordKind<C, PreparedRecord, { id: string; updated_at: string | null }>;
  /** What verify compares of a list item against the mirror's rows (content-check.ts). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the prepared form is the type's own, never seen outside its declaration
  readonly compared: Compared<L & { id: string }, any>;
  /** What the stored copies hold beyond a list item (HeldCopies.heldUnlisted): empty for a type whose list items are whole. */
  readonly heldUnlisted: (db: Kysely<MirrorDatabase>, ids: readonly string[]) => Promise<Map<string, HeldUnlisted>>;
}

/** For a type whose list items are whole copies: the stored copies hold nothing more. */
export const NOTHING_UNLISTED = (): Promise<Map<string, HeldUnlisted>> => Promise.resolve(new Map<string, HeldUnlisted>());
