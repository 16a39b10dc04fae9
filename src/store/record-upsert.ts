import type { Kysely } from 'kysely';
import type { MirrorDatabase } from './schema.js';
import { deleteQuarantined, selectByIds } from './key-sets.js';
import { plausibleAgainstLocal } from '../util/clock-bounds.js';
import { parseTimestamp } from '../util/time.js';
import type { RecordEntity, RecordType } from '../entities/index.js';

type Db = Kysely<MirrorDatabase>;

export interface UpsertResult {
  /** History rows written for this read. */
  history: number;
  /**
   * True when the mirror already held a newer copy, so nothing was written. Not a stale read (a
   * copy older than the event that marked it, the sync's concern): this one lost to the mirror.
   */
  superseded: boolean;
  /**
   * True when a value could not be stored (junk timestamp or amount): nothing was written for the
   * record and it was put in quarantine instead, like a record that failed validation.
   */
  quarantined: boolean;
}

/**
 * The record ids written since a first backfill found every record table empty (Store.startAppend,
 * docs/sync.md "Backfill"). Only writeRecords writes record rows and their children, and every
 * call through a transaction that carries the ledger claims its ids here first, so an id the
 * ledger has never seen has no row, no child and no stored copy: reading them would find nothing.
 * Claimed ids stay claimed even when their write rolls back (a refused batch, a deadlock retry):
 * they are then read like any other id, which finds nothing and costs only the read.
 */
export class AppendLedger {
  private readonly written = new Map<RecordType, Set<string>>();
  /**
   * The entity types whose quarantine may hold rows: those that held some when the ledger started,
   * and every type a write through the ledger's transactions has quarantined since (noteQuarantine),
   * committed or not. Only these need a good copy's quarantine rows deleted (docs/sync.md, "A first
   * backfill appends instead of reading stored copies").
   */
  private readonly quarantined: Set<string>;

  constructor(quarantinedAtStart: Iterable<string> = []) {
    this.quarantined = new Set(quarantinedAtStart);
  }

  /** A quarantine row of `type` is being written through one of the ledger's transactions. */
  noteQuarantine(type: string): void {
    this.quarantined.add(type);
  }

  /** False only when no quarantine row of `type` can exist: nothing to clear for a good copy. */
  mayHoldQuarantine(type: RecordType): boolean {
    return this.quarantined.has(type);
  }

  /** Which of `ids` the ledger has not seen; all of them count as written from now on. */
  claim(type: RecordType, ids: readonly string[]): ReadonlySet<string> {
    let seen = this.written.get(type);
    if (!seen) this.written.set(type, (seen = new Set()));
    const absent = new Set<string>();
    for (const id of ids) {
      if (!seen.has(id)) absent.add(id);
      seen.add(id);
    }
    return absent;
  }
}

const ledgers = new WeakMap<Db, AppendLedger>();

/** Record writes through `db` (one transaction) claim their ids in `ledger` (createTx). */
export function appendThrough(db: Db, ledger: AppendLedger): void {
  ledgers.set(db, ledger);
}

/** Every quarantine write calls this first (sync-tables.ts): the ledger of `db`, if any, notes the type. */
export function noteQuarantine(db: Db, type: string): void {
  ledgers.get(db)?.noteQuarantine(type);
}

const NONE: ReadonlySet<string> = new Set();

/** A prepared record: its row converted (every value checked) before anything is written. */
export interface PreparedRecord {
  /** `synced_at` is the local clock of the write, which bounds a stored updated_at (below). */
  row: { id: string; updated_at: string | null; synced_at: string | null };
}

/** A record the mirror holds, and its stored copy as the batch found it. */
export interface Known<P, Prev> {
  p: P;
  before: Prev;
}

/**
 * How one record type is converted and written (docs/design.md §7): what differs between types on
 * the one upsert path (`writeRecords`), which `upsertMany` (bulk.ts) runs in batches. R is a copy
 * as read, P the copy prepared for writing, Prev the stored columns a re-read compares.
 */
export interface RecordKind<R, P extends PreparedRecord, Prev extends { id: string; updated_at: string | null }> {
  entityType: RecordType;
  table: RecordEntity['table'];
  /** The copy converted, every value checked; throws StoreError('INVALID_VALUE') for a value the store cannot hold. */
  prepare(record: R, syncedAt: string): P;
  /** Keys of child rows that are unique across parents: a batch holds each once (none since 0700_owner_keyed_children). */
  childKeysOf?(prepared: P): readonly string[];
  /** Columns of the stored copy that the superseded check and observed history compare. */
  previousColumns: readonly string[];
  /** The rows the batch's records point at (people, companies, stubs), written first. */
  writeRefs(db: Db, live: readonly P[]): Promise<void>;
  /**
   * Records the mirror does not hold: their rows and children in a few multi-row statements.
   * `childless`: no child row can sit under their ids (AppendLedger), so none is looked for.
   */
  insertNew(db: Db, added: readonly P[], childless: boolean): Promise<void>;
  /**
   * Records the mirror holds, with their stored copies: only what differs is written, with a few
   * statements for the whole batch. Returns the history rows derived, per record in order.
   */
  updateKnown(db: Db, known: readonly Known<P, Prev>[]): Promise<number[]>;
}

/** Any type's kind, as the registry holds it (record-stores.ts): each is called with its own copies only. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the registry's kinds are of every type; see above
export type AnyRecordKind = RecordKind<any, PreparedRecord, { id: string; updated_at: string | null }>;

/**
 * A stored updated_at decides that a copy is superseded only while it is plausible against the
 * local clock (src/util/clock-bounds.ts): a copy once served with an updatedAt in 2100 must not
 * make every later, real copy look older and freeze the record (docs/sync.md, "Hostile upstream").
 * The local clock is the later of the write's synced_at (the sync's clock) and this machine's.
 */
function believable(stored: unknown, syncedAt: string | null): boolean {
  const local = Math.max(Date.now(), syncedAt === null ? 0 : parseTimestamp(syncedAt));
  return plausibleAgainstLocal(parseTimestamp(String(stored)), local);
}

/**
 * The one upsert path of every record type: the batch's quarantine rows go (a good copy arrived;
 * none can exist when the ledger says no quarantine row of the type was there or written since),
 * a record older than the mirror's copy is superseded and writes nothing, the references go first,
 * then new records in bulk, then known ones in bulk with their observed history. The ids of
 * `batch` are distinct (bulk.ts), so the outcome is that of upserting the records one after
 * another. Results are in batch order.
 */
export async function writeRecords<R, P extends PreparedRecord, Prev extends { id: string; updated_at: string | null }>(
  db: Db,
  kind: RecordKind<R, P, Prev>,
  batch: readonly P[],
): Promise<UpsertResult[]> {
  const ids = batch.map((p) => p.row.id);
  const ledger = ledgers.get(db);
  if (ledger?.mayHoldQuarantine(kind.entityType) !== false) await deleteQuarantined(db, kind.entityType, ids);
  // A first backfill into empty tables reads only the ids it wrote before (a list that shifted).
  const absent = ledger?.claim(kind.entityType, ids) ?? NONE;
  const toRead = absent.size === 0 ? ids : ids.filter((id) => !absent.has(id));
  const previous = toRead.length === 0 ? new Map<string, Prev>() : await selectByIds<Prev>(db, kind.previousColumns, kind.table, toRead);

  const results: UpsertResult[] = [];
  const live: { p: P; previous: Prev | undefined; result: UpsertResult }[] = [];
  for (const p of batch) {
    const before = previous.get(p.row.id);
    const superseded =
      !!before?.updated_at && String(before.updated_at) > p.row.updated_at! && believable(before.updated_at, p.row.synced_at);
    const result = { history: 0, superseded, quarantined: false };
    results.push(result);
    if (!superseded) live.push({ p, previous: before, result });
  }
  if (live.length === 0) return results;

  await kind.writeRefs(
    db,
    live.map((l) => l.p),
  );
  const added = live.filter((l) => l.previous === undefined).map((l) => l.p);
  if (added.length > 0)
    await kind.insertNew(
      db,
      added,
      added.every((p) => absent.has(p.row.id)),
    );
  const known = live.filter((l) => l.previous !== undefined);
  if (known.length > 0) {
    const history = await kind.updateKnown(
      db,
      known.map((l) => ({ p: l.p, before: l.previous! })),
    );
    known.forEach((l, i) => (l.result.history = history[i]!));
  }
  return results;
}
