import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { toDbTimestamp } from '../util/time.js';
import { StoreError } from './errors.js';
import { pollForLock, type AcquireLockOptions, type WriterLock } from './lock.js';
import type { MirrorDatabase } from './schema.js';
import { buildStore, type Store } from './store.js';
import { StagingClient } from './postgres-copy.js';

const OID = { int8: 20, numeric: 1700, json: 114, date: 1082, timestamp: 1114, timestamptz: 1184, jsonb: 3802 } as const;

/**
 * Values come back in the same shapes as from SQLite, so callers and readers never branch on the
 * dialect: timestamps as the stored 23-char UTC text (`YYYY-MM-DD HH:MM:SS.SSS`, docs/schema.md), dates as 'yyyy-mm-dd', JSON as its text, bigint
 * (counts, ids, amount_cents) as a number, numeric (amounts) as a number like SQLite's REAL: the
 * exact figure is the integer cents column beside every amount.
 */
/** pg-types declares its parsers as returning any. */
type Parser = (value: string) => unknown;

export const typeParsers: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (format === 'binary') return pg.types.getTypeParser(oid, 'binary') as Parser;
    switch (oid) {
      case OID.timestamp:
      case OID.timestamptz: {
        const toDate = pg.types.getTypeParser(oid, 'text') as (v: string) => Date;
        return (v: string) => toDbTimestamp(toDate(v));
      }
      case OID.date:
      case OID.json:
      case OID.jsonb:
        return (v: string) => v;
      case OID.int8:
      case OID.numeric:
        return (v: string) => Number(v);
      default:
        return pg.types.getTypeParser(oid, 'text') as Parser;
    }
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** host:port/database, never the password. */
export function describe(url: string): string {
  try {
    const u = new URL(url);
    return `postgres://${u.hostname || 'localhost'}${u.port ? `:${u.port}` : ''}${u.pathname}`;
  } catch {
    return 'the configured PostgreSQL database';
  }
}

/** How errors name a mirror: host:port/database, and its schema unless it is `public`. */
export function storeLabel(url: string, schema: string): string {
  return schema === 'public' ? describe(url) : `${describe(url)} (schema ${schema})`;
}

/** Options of openPostgres. */
export interface PostgresOptions {
  /** The schema that holds this mirror; several mirrors share one database this way. Default 'public'. */
  schema?: string;
}

/**
 * The session settings go in the startup `options`, after any the URL carries: node-postgres lets a
 * URL's `?options=` replace the pool config's, so they are merged here, ours last (the server
 * applies `-c` settings in order). The schema name is validated by the config (letters, digits, _).
 */
export function sessionConfig(url: string, schema: string, readonly: boolean): { connectionString: string; options: string } {
  // The store writes zone-less UTC text (the form SQLite stores), which timestamptz reads in the
  // session time zone: pin it to UTC.
  const ours = [`-c search_path=${schema}`, '-c TimeZone=UTC'];
  // Readers must never write, whatever they run or the URL says: the server enforces it.
  if (readonly) ours.push('-c default_transaction_read_only=on');
  let connectionString = url;
  let fromUrl = '';
  try {
    const u = new URL(url);
    fromUrl = u.searchParams.get('options') ?? '';
    u.searchParams.delete('options');
    connectionString = u.toString();
  } catch {
    // Not parseable as a URL: node-postgres reports it when connecting.
  }
  return { connectionString, options: [fromUrl, ...ours].filter((o) => o.length > 0).join(' ') };
}

export async function openPostgres(url: string, readonly: boolean, options: PostgresOptions = {}): Promise<Store> {
  const schema = options.schema ?? 'public';
  const label = storeLabel(url, schema);
  const config: pg.PoolConfig = { ...sessionConfig(url, schema, readonly), types: typeParsers, application_name: 'wsmirror' };
  const pool = await connectedPool({ ...config, max: 10 }, label);
  const db = new Kysely<MirrorDatabase>({ dialect: new PostgresDialect({ pool }) });
  return postgresStore(db, pool, { readonly, label, schema, acquireLock: (opts) => acquireAdvisoryLock(config, label, schema, opts) });
}

/**
 * A pool of the store's clients (COPY-capable), checked with one query so a wrong URL fails at
 * open with what to check, not at the first cycle.
 */
export async function connectedPool(config: pg.PoolConfig, label: string): Promise<pg.Pool> {
  const pool = storePool(config);
  await checkConnects(pool, label);
  return pool;
}

/** A pool of the store's clients (COPY-capable), unchecked (connectedPool checks one). */
export function storePool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({ ...config, Client: StagingClient });
  pool.on('error', () => {
    // An idle client died (server restart); the pool replaces it on the next query.
  });
  pool.on('connect', (client) => {
    // A connection that dies while checked out (pg_terminate_backend, a server restart) fails its
    // query, which fails the cycle; the next tick retries on a fresh one (the pool drops dead
    // clients on release). Without a listener the client's 'error' event would end the process.
    client.on('error', () => undefined);
  });
  return pool;
}

/** One query, so a wrong URL or a server that is down fails at open, naming what to check; the pool is ended then. */
export async function checkConnects(pool: { query(text: string): Promise<unknown>; end(): Promise<void> }, label: string): Promise<void> {
  try {
    await pool.query('select 1');
  } catch (cause) {
    await pool.end().catch(() => {});
    throw new StoreError(
      'OPEN_FAILED',
      `Cannot connect to ${label} (${(cause as Error).message}); check the database URL and that the server is up.`,
      { cause },
    );
  }
}

/** The store over a Kysely on PostgreSQL; `pool` answers the catalog questions that name no schema. */
export function postgresStore(
  db: Kysely<MirrorDatabase>,
  pool: { query<R extends pg.QueryResultRow>(text: string): Promise<pg.QueryResult<R>> },
  o: { readonly: boolean; label: string; schema: string; acquireLock: (opts: AcquireLockOptions) => Promise<WriterLock> },
): Store {
  return buildStore({
    dialect: 'postgres',
    db,
    readonly: o.readonly,
    label: o.label,
    schema: o.schema,
    acquireLock: o.acquireLock,
    mirrorSchemas: async () =>
      (
        await pool.query<{ s: string }>(
          "select table_schema as s from information_schema.tables where table_name = 'kysely_migration' order by 1",
        )
      ).rows.map((r) => r.s),
    isRetryable: (err) => RETRYABLE_SQLSTATES.has(sqlState(err)),
  });
}

/** deadlock_detected and serialization_failure: the transaction was rolled back whole. */
const RETRYABLE_SQLSTATES = new Set(['40P01', '40001']);

function sqlState(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

// Session-level advisory lock on a dedicated connection: it lasts exactly as long as that
// connection, so a crashed or killed writer frees it as soon as the server notices. One key per
// database and schema, so mirrors in sibling schemas each have their own writer.
const LOCK_KEY = `hashtext('wsmirror.writer:' || current_database() || ':' || $1::text)`;

async function acquireAdvisoryLock(config: pg.ClientConfig, label: string, schema: string, opts: AcquireLockOptions): Promise<WriterLock> {
  const client = new pg.Client({ ...config, keepAlive: true });
  try {
    await client.connect();
  } catch (cause) {
    throw new StoreError('OPEN_FAILED', `Cannot connect to ${label} to take the writer lock (${(cause as Error).message}).`, { cause });
  }
  return holdAdvisoryLock(client, label, schema, opts, async () => {
    // An error after the end must not reach an unheard 'error' event (which ends the process).
    client.on('error', () => undefined);
    await client.end().catch(() => {});
  });
}

/**
 * The writer lock on `client`'s session: taken (or waited for), then held until `release`, which
 * unlocks and hands the connection to `giveBack` (with the unlock's failure, if any: closing the
 * session then frees the lock). `lost` aborts if the connection fails or ends while held.
 */
export async function holdAdvisoryLock(
  client: pg.ClientBase,
  label: string,
  schema: string,
  opts: AcquireLockOptions,
  giveBack: (failed?: Error) => Promise<void>,
): Promise<WriterLock> {
  const lost = new AbortController();
  let released = false;
  const onGone = (err?: Error) => {
    if (!released) lost.abort(err ?? new Error('the writer lock connection closed'));
  };
  client.on('error', onGone);
  client.on('end', onGone);
  const done = async (failed?: Error) => {
    client.removeListener('error', onGone);
    client.removeListener('end', onGone);
    await giveBack(failed);
  };
  try {
    await pollForLock(
      async () =>
        (await client.query<{ ok: boolean }>(`select pg_try_advisory_lock(${LOCK_KEY}) as ok`, [schema])).rows[0]?.ok ? true : null,
      opts,
      { name: label, holder: 'it holds the writer lock' },
    );
  } catch (err) {
    await done();
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
      await done(failed);
    },
  };
}
