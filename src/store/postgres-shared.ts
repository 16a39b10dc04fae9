/**
 * One pool of PostgreSQL connections shared by the mirrors of many schemas in one process: a
 * fleet worker runs thousands of short slices over hundreds of workspaces, and opening a pool and
 * a lock connection per slice made each one start two server processes, whose cold catalog caches
 * then planned every statement afresh (docs/fleet.md, "Sizing"). Here a connection is lent to a
 * schema's store with its search_path set to that schema, and the writer lock is held on a lent
 * connection for as long as the slice holds it.
 */
import type pg from 'pg';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import { HomedPool } from './homed-pool.js';
import type { AcquireLockOptions, WriterLock } from './lock.js';
import { checkConnects, describe, holdAdvisoryLock, postgresStore, sessionConfig, storeLabel, storePool, typeParsers } from './postgres.js';
import type { MirrorDatabase } from './schema.js';
import type { SharedPostgres, Store } from './store.js';

interface Shared extends SharedPostgres {
  readonly pool: HomedPool;
}

/**
 * A connection serves this many checkouts, then is replaced. With homes a backend serves about
 * `schemas ÷ size` schemas, and a slice holding the writer lock runs its statements on the lock's
 * connection (one checkout), so this bounds a backend's life, not its catalog's growth.
 */
const MAX_USES = 2000;

/** Which schema a lent connection's search_path names now (set once per switch, not per checkout). */
const SCHEMA_OF = new WeakMap<pg.ClientBase, string>();

export async function openSharedPostgres(url: string, max: number): Promise<SharedPostgres> {
  const config: pg.PoolConfig = { ...sessionConfig(url, 'public', false), types: typeParsers, application_name: 'wsmirror' };
  const pool = new HomedPool(max, () => storePool({ ...config, max: 1, maxUses: MAX_USES, idleTimeoutMillis: 60_000 }));
  await checkConnects(pool, describe(url));
  const shared: Shared = { url, pool, end: () => pool.end() };
  return shared;
}

/** The store of `schema` over the shared connections: as openPostgres, without a pool of its own. */
export function openOnShared(connections: SharedPostgres, schema: string, readonly: boolean): Store {
  const shared = connections as Shared;
  const label = storeLabel(shared.url, schema);
  const lender = new SchemaLender(shared.pool, schema, readonly);
  const db = new Kysely<MirrorDatabase>({ dialect: new PostgresDialect({ pool: lender }) });
  return postgresStore(db, shared.pool, { readonly, label, schema, acquireLock: (opts) => lender.lock(label, opts) });
}

/**
 * Lends the shared connections with the search_path on one schema: while the store holds the
 * writer lock, the lock's connection first (a slice's statements then take one checkout and at
 * most one switch in all), else the schema's home (homed-pool.ts).
 *
 * Temporary tables stay across a switch: the reporting refresh's scratch tables have fixed
 * columns, and a staging table (postgres-copy.ts) copies a mirror table, whose columns are the
 * same in every schema a worker writes (it migrates each to its own build before writing; a stage
 * of another shape fails its INSERT loudly, never silently). Dropping them on every switch made a
 * busy slice create ten tables again (a third of its reporting refresh at 1,000 workspaces:
 * bench/README.md, "Fleet, third pass").
 */
class SchemaLender implements PostgresPool {
  private readonly mode: string;
  private readonly setting: string;
  /** The writer lock's connection while the lock is held, and whether a statement has it now. */
  private held: { client: pg.PoolClient; lent: boolean; done: boolean } | null = null;

  constructor(
    private readonly pool: HomedPool,
    private readonly schema: string,
    readonly: boolean,
  ) {
    this.mode = `${schema}:${readonly ? 'r' : 'w'}`;
    this.setting = `set search_path to "${schema}"; set default_transaction_read_only = ${readonly ? 'on' : 'off'}`;
  }

  async connect(): Promise<PostgresPoolClient> {
    const held = this.held;
    if (held && !held.lent && !held.done) {
      held.lent = true;
      return held.client;
    }
    return this.checkout();
  }

  // The pool is the process's: a store's close leaves it open (its lock is released before).
  end(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * The writer lock (the same advisory key as openPostgres's) on a lent connection, kept while
   * held and lent to this store's statements between them. A failed unlock destroys the
   * connection, which ends its session and the lock with it.
   */
  async lock(label: string, opts: AcquireLockOptions): Promise<WriterLock> {
    const client = await this.checkout();
    const giveBack = client.release.bind(client);
    let given = false;
    const finish = (err?: Error) => {
      if (given) return;
      given = true;
      giveBack(err);
    };
    const held = { client, lent: false, done: false };
    // A statement's release hands the connection back to the lock, not to the pool.
    client.release = (err?: Error | boolean) => {
      held.lent = false;
      if (err instanceof Error) {
        // A broken connection: no statement gets it again, and its lock ends with its session.
        held.done = true;
        if (this.held === held) this.held = null;
        finish(err);
      } else if (held.done) finish();
    };
    this.held = held;
    return holdAdvisoryLock(client, label, this.schema, opts, (failed) => {
      if (this.held === held) this.held = null;
      held.done = true;
      // A statement still running on it gives the connection back when it ends.
      if (failed || !held.lent) finish(failed);
      return Promise.resolve();
    });
  }

  private async checkout(): Promise<pg.PoolClient> {
    const client = await this.pool.connect(this.mode);
    if (SCHEMA_OF.get(client) !== this.mode) {
      try {
        await client.query(this.setting);
      } catch (err) {
        client.release(err as Error);
        throw err;
      }
      SCHEMA_OF.set(client, this.mode);
    }
    return client;
  }
}
