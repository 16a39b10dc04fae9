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
import { StoreError } from './errors.js';
import { pollForLock, type AcquireLockOptions, type WriterLock } from './lock.js';
import { describe, LOCK_KEY, postgresStore, sessionConfig, typeParsers } from './postgres.js';
import { StagingClient } from './postgres-copy.js';
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
  const pool = new pg.Pool({ ...config, max, maxUses: MAX_USES, idleTimeoutMillis: 60_000, Client: StagingClient });
  pool.on('error', () => undefined);
  // A connection that dies while lent fails its query (the slice fails and is retried); without a
  // listener the client's 'error' event would end the process.
  pool.on('connect', (client) => client.on('error', () => undefined));
  try {
    await pool.query('select 1');
  } catch (cause) {
    await pool.end().catch(() => {});
    throw new StoreError(
      'OPEN_FAILED',
      `Cannot connect to ${describe(url)} (${(cause as Error).message}); check the database URL and that the server is up.`,
      { cause },
    );
  }
  const shared: Shared = { url, pool, end: () => pool.end() };
  return shared;
}

/** The store of `schema` over the shared connections: as openPostgres, without a pool of its own. */
export function openOnShared(connections: SharedPostgres, schema: string, readonly: boolean): Store {
  const shared = connections as Shared;
  const label = schema === 'public' ? describe(shared.url) : `${describe(shared.url)} (schema ${schema})`;
  const db = new Kysely<MirrorDatabase>({ dialect: new PostgresDialect({ pool: schemaPool(shared.pool, schema, readonly) }) });
  return postgresStore(db, shared.pool, { readonly, label, schema, acquireLock: (opts) => lockOnShared(shared.pool, label, schema, opts) });
}

/**
 * Lends the shared pool's connections with the search_path on `schema`. Temporary staging tables
 * (postgres-copy.ts) are dropped on a switch: one made for another schema's table has its columns.
 */
function schemaPool(pool: pg.Pool, schema: string, readonly: boolean): PostgresPool {
  const setting = `set search_path to "${schema}"; set default_transaction_read_only = ${readonly ? 'on' : 'off'}; discard temp`;
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
  const lost = new AbortController();
  let released = false;
  const onGone = (err?: Error) => {
    if (!released) lost.abort(err ?? new Error('the writer lock connection closed'));
  };
  client.on('error', onGone);
  client.on('end', onGone);
  const giveBack = (err?: Error) => {
    client.removeListener('error', onGone);
    client.removeListener('end', onGone);
    client.release(err);
  };
  try {
    await pollForLock(
      async () =>
        (await client.query<{ ok: boolean }>(`select pg_try_advisory_lock(${LOCK_KEY}) as ok`, [schema])).rows[0]?.ok ? true : null,
      opts,
      { name: label, holder: 'it holds the writer lock' },
    );
  } catch (err) {
    giveBack();
    throw err;
  }
  return {
    lost: lost.signal,
    async release() {
      if (released) return;
      released = true;
      let failed: Error | undefined;
      try {
        const ok = (await client.query<{ ok: boolean }>(`select pg_advisory_unlock(${LOCK_KEY}) as ok`, [schema])).rows[0]?.ok;
        if (!ok) failed = new Error('the writer lock was not held at release');
      } catch (err) {
        failed = err as Error;
      }
      giveBack(failed);
    },
  };
}
