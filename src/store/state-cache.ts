import type { Kysely } from 'kysely';
import type { MirrorDatabase } from './schema.js';
import { json } from './values.js';
import { toDbTimestamp } from '../util/time.js';

/**
 * The writer's copy of `sync_state` (docs/design.md §5.1, "The sync state's cache"). A cycle asks
 * the state a key at a time (two dozen reads in an idle cycle: each key with the state version
 * beside it), and only the writer-lock holder writes it, so while this store holds the lock the
 * whole table is read once and then served from memory; a write whose value is already stored is
 * no statement at all. Without the lock (readers, standbys, a store between two fleet slices) every
 * read goes to the database, since another process may be writing.
 *
 * Each value is kept as the JSON text stored, and parsed on every read, so no caller shares an
 * object with the cache. A transaction's writes are its own until it commits: they reach the cache
 * only then, so a rollback (or a deadlock retry) leaves it as the database is.
 */
export class StateCache {
  private values: Map<string, string> | null = null;
  private active = false;

  /** The writer lock was taken (true) or released (false) through this store. */
  setActive(active: boolean): void {
    this.active = active;
    this.values = null;
  }

  /** Something wrote the table without the cache (a migration, the deferred indexes): read it afresh. */
  invalidate(): void {
    this.values = null;
  }

  /** A view of the state for one transaction (or, with no `tx`, for reads outside any). */
  view(db: Kysely<MirrorDatabase>): StateView {
    return new StateView(this, db);
  }

  /** @internal The loaded values, when this store may serve from them. */
  loaded(): Map<string, string> | null {
    return this.active ? this.values : null;
  }

  /** @internal */
  canCache(): boolean {
    return this.active;
  }

  /** @internal */
  fill(values: Map<string, string>): void {
    if (this.active) this.values = values;
  }

  /** A committed transaction's writes (null: deleted). */
  commit(writes: ReadonlyMap<string, string | null>): void {
    const values = this.loaded();
    if (!values) return;
    for (const [key, value] of writes) {
      if (value === null) values.delete(key);
      else values.set(key, value);
    }
  }
}

/** One transaction's (or one read's) door to the state: its own writes first, then the cache, then the table. */
export class StateView {
  /** What this transaction wrote (null: deleted), applied to the cache when it commits. */
  readonly writes = new Map<string, string | null>();

  constructor(
    private readonly cache: StateCache,
    private readonly db: Kysely<MirrorDatabase>,
  ) {}

  async get(key: string): Promise<unknown> {
    const text = this.writes.has(key) ? this.writes.get(key)! : await this.stored(key);
    return text === null || text === undefined ? undefined : (JSON.parse(text) as unknown);
  }

  async set(key: string, value: unknown): Promise<void> {
    const text = value === undefined || value === null ? null : json(value);
    const values = await this.values();
    if (values) {
      const current = this.writes.has(key) ? this.writes.get(key)! : (values.get(key) ?? null);
      if (current === text) return;
    }
    if (text === null) await this.db.deleteFrom('sync_state').where('key', '=', key).execute();
    else {
      const row = { key, value_json: text, updated_at: toDbTimestamp(new Date()) };
      await this.db
        .insertInto('sync_state')
        .values(row)
        .onConflict((oc) => oc.column('key').doUpdateSet({ value_json: row.value_json, updated_at: row.updated_at }))
        .execute();
    }
    this.writes.set(key, text);
  }

  private async stored(key: string): Promise<string | null | undefined> {
    const values = await this.values();
    if (values) return values.get(key) ?? null;
    const row = await this.db.selectFrom('sync_state').select('value_json').where('key', '=', key).executeTakeFirst();
    return row?.value_json ?? null;
  }

  /**
   * The cached values, read whole on first use. Not from inside a transaction that has written:
   * the table would show its uncommitted values, which a rollback must not leave in the cache.
   */
  private async values(): Promise<Map<string, string> | null> {
    const loaded = this.cache.loaded();
    if (loaded || !this.cache.canCache() || this.writes.size > 0) return loaded;
    const rows = await this.db.selectFrom('sync_state').select(['key', 'value_json']).execute();
    const values = new Map<string, string>();
    for (const r of rows) if (r.value_json !== null) values.set(r.key, r.value_json);
    this.cache.fill(values);
    return this.cache.loaded();
  }
}
