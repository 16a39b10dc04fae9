/**
 * One pool of PostgreSQL connections shared by the mirrors of many schemas in one process: a
 * fleet worker runs thousands of short slices over hundreds of workspaces, and opening a pool and
 * a lock connection per slice made each one start two server processes, whose cold catalog caches
 * then planned every statement afresh (docs/fleet.md, "Sizing"). Here a connection is lent to a
 * schema's store with its search_path set to that schema, and the writer lock is held on a lent
 * connection for as long as the slice holds it.
 */
import pg from 'pg';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import type { AcquireLockOptions, WriterLock } from './lock.js';
import { connectedPool, describe, holdAdvisoryLock, postgresStore, sessionConfig, storeLabel, typeParsers } from './postgres.js';
import type { MirrorDatabase } from './schema.js';
import type { SharedPostgres, Store } from './store.js';

interface Shared extends SharedPostgres {
  readonly pool: pg.Pool;
}

/**
 * A connection serves this many checkouts, then is replaced: each backend caches the catalog of
 * every table it touched, in every schema, so a long-lived one would grow with the fleet.
 */
const MAX_USES = 2000;

/** Which schema a lent connection's search_path names now (set once per switch, not per checkout). */
const SCHEMA_OF = new WeakMap<pg.PoolClient, string>();

export async function openSharedPostgres(url: string, max: number): Promise<SharedPostgres> {
  const config: pg.PoolConfig = { ...sessionConfig(url, 'public', false), types: typeParsers, application_name: 'wsmirror' };
  const pool = await connectedPool({ ...config, max, maxUses: MAX_USES, idleTimeoutMillis: 60_000 }, describe(url));
  const shared: Shared = { url, pool, end: () => pool.end() };
  return shared;
}

/** The store of `schema` over the shared connections: as openPostgres, without a pool of its own. */
export function openOnShared(connections: SharedPostgres, schema: string, readonly: boolean): Store {
  const shared = connections as Shared;
  const label = storeLabel(shared.url, schema);
  const db = new Kysely<MirrorDatabase>({ dialect: new PostgresDialect({ pool: schemaPool(shared.pool, schema, readonly) }) });
  return postgresStore(db, shared.pool, { readonly, label, schema, acquireLock: (opts) => lockOnShared(shared.pool, label, schema, opts) });
}

/**
 * Lends the shared pool's connections with the search_path on `schema`. Temporary tables stay
 * across a switch: the reporting refresh's scratch tables have fixed columns, and a staging table
 * (postgres-copy.ts) copies a mirror table, whose columns are the same in every schema a worker
 * writes (it migrates each to its own build before writing; a stage of another shape fails its
 * INSERT loudly, never silently). Dropping them on every switch made a busy slice create ten
 * tables again (a third of its reporting refresh at 1,000 workspaces: bench/README.md, "Fleet,
 * third pass").
 */
function schemaPool(pool: pg.Pool, schema: string, readonly: boolean): PostgresPool {
  const setting = `set search_path to "${schema}"; set default_transaction_read_only = ${readonly ? 'on' : 'off'}`;
  const mode = `${schema}:${readonly ? 'r' : 'w'}`;
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      if (SCHEMA_OF.get(client) !== mode) {
        try {
          await client.query(setting);
        } catch (err) {
          client.release(err as Error);
          throw err;
        }
        SCHEMA_OF.set(client, mode);
      }
      return client;
    },
    // The pool is the process's: a store's close leaves it open.
    end: () => Promise.resolve(),
  };
}

/**
 * The writer lock (the same advisory key as openPostgres's) on a lent connection, kept lent while
 * held. A failed unlock destroys the connection, which ends its session and the lock with it.
 */
async function lockOnShared(pool: pg.Pool, label: string, schema: string, opts: AcquireLockOptions): Promise<WriterLock> {
  const client = await pool.connect();
  return holdAdvisoryLock(client, label, schema, opts, (failed) => {
    client.release(failed);
    return Promise.resolve();
  });
}
