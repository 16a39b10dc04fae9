/**
 * A fixed set of PostgreSQL connections where each schema has a home: the fleet's shared pool
 * (postgres-shared.ts). A backend caches the catalog of every relation it has opened, and a
 * mirror schema has ~150 of them (tables, indexes, TOAST): lent at random, every connection of a
 * 1,000-workspace worker serves every schema in turn, each busy slice finds its relations cold
 * and re-reads them from the catalog, and nearly every checkout first switches the search_path.
 * Here a schema goes to its home connection (a stable hash of its name), or when that one is busy
 * to the next free one after it, so each backend serves about `schemas ÷ size` of them and keeps
 * them warm (docs/fleet.md, "Connections and locks").
 *
 * Each slot is a pg.Pool of one connection, so connecting, replacing a dead or worn-out
 * connection (`maxUses`) and closing an idle one stay pg's; this module only chooses the slot.
 */
import pg from 'pg';

interface Slot {
  readonly pool: pg.Pool;
  busy: boolean;
}

/** FNV-1a: a stable, well-spread home for a schema name (the same in every worker process). */
function hash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export class HomedPool {
  private readonly slots: Slot[];
  /** Checkouts waiting for any slot, first come first served. */
  private readonly waiting: Array<(slot: Slot) => void> = [];

  /** `newPool` makes one slot's pool; it is called with `max: 1` already in the config. */
  constructor(size: number, newPool: () => pg.Pool) {
    this.slots = Array.from({ length: Math.max(1, size) }, () => ({ pool: newPool(), busy: false }));
  }

  /** A connection for `key`'s work, released with `client.release(err?)` as a pg.Pool's. */
  async connect(key: string): Promise<pg.PoolClient> {
    const slot = this.take(key) ?? (await new Promise<Slot>((resolve) => this.waiting.push(resolve)));
    let client: pg.PoolClient;
    try {
      client = await slot.pool.connect();
    } catch (err) {
      this.free(slot);
      throw err;
    }
    const release = client.release.bind(client);
    client.release = (err?: Error | boolean) => {
      release(err);
      this.free(slot);
    };
    return client;
  }

  /** One statement on any connection (catalog questions that name no schema). */
  async query<R extends pg.QueryResultRow>(text: string): Promise<pg.QueryResult<R>> {
    const client = await this.connect('');
    try {
      const result = await client.query<R>(text);
      client.release();
      return result;
    } catch (err) {
      client.release(err as Error);
      throw err;
    }
  }

  async end(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.pool.end()));
  }

  /** The key's home if free, else the next free slot after it (a stable second home), else none. */
  private take(key: string): Slot | undefined {
    const n = this.slots.length;
    const home = hash(key) % n;
    for (let i = 0; i < n; i++) {
      const slot = this.slots[(home + i) % n]!;
      if (!slot.busy) {
        slot.busy = true;
        return slot;
      }
    }
    return undefined;
  }

  private free(slot: Slot): void {
    const next = this.waiting.shift();
    if (next) next(slot);
    else slot.busy = false;
  }
}
