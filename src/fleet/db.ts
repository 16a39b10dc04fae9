import pg from 'pg';
import { FLEET_SCHEMA, type WorkspaceSpec } from './config.js';
import { ident, rebuildViews } from './views.js';

/**
 * The fleet's own tables, in their own schema beside the workspaces' (created here, idempotently,
 * under a transaction-scoped advisory lock so workers starting together never race). Keys are never
 * stored: a row names only where each worker reads its key.
 */
const DDL = `
create schema if not exists ${FLEET_SCHEMA};
create table if not exists ${FLEET_SCHEMA}.workspaces (
  id text primary key,
  schema_name text not null unique,
  base_url text not null,
  key_file text,
  key_env text,
  settings jsonb not null,
  paused_in_file boolean not null default false,
  paused_manually boolean not null default false,
  added_at timestamptz not null default now(),
  state text not null default 'new',
  backfill_phase text,
  last_slice_at timestamptz,
  last_slice_end timestamptz,
  last_success_at timestamptz,
  last_error text,
  last_error_code text,
  last_error_at timestamptz,
  consecutive_failures integer not null default 0,
  lag_seconds double precision,
  current_as_of timestamptz,
  rate_per_second double precision,
  next_at timestamptz,
  requests_total bigint not null default 0,
  migrated boolean not null default false,
  worker_id text
);
alter table ${FLEET_SCHEMA}.workspaces add column if not exists last_reconcile_at timestamptz;
create table if not exists ${FLEET_SCHEMA}.removed (
  id text primary key,
  schema_name text not null,
  removed_at timestamptz not null default now()
);
create table if not exists ${FLEET_SCHEMA}.slices (
  workspace_id text not null,
  ended_at timestamptz not null default now(),
  kind text not null,
  ok boolean not null,
  duration_ms integer not null,
  requests integer not null
);
create index if not exists slices_ended_at on ${FLEET_SCHEMA}.slices (ended_at);
create table if not exists ${FLEET_SCHEMA}.views_state (
  id integer primary key default 1 check (id = 1),
  wanted bigint not null default 0,
  built bigint not null default 0,
  built_at timestamptz,
  error text,
  error_at timestamptz
);
alter table ${FLEET_SCHEMA}.views_state add column if not exists build_ms integer;
insert into ${FLEET_SCHEMA}.views_state (id) values (1) on conflict (id) do nothing;
create table if not exists ${FLEET_SCHEMA}.workers (
  id text primary key,
  host text not null,
  pid integer not null,
  concurrency integer not null,
  started_at timestamptz not null default now(),
  seen_at timestamptz not null default now()
);
`;

/** Any lock key the fleet's schema changes (DDL, view rebuilds) serialise on. */
const FLEET_LOCK = `pg_advisory_xact_lock(hashtext('${FLEET_SCHEMA}'))`;

export function openFleetPool(database: string, max = 4): pg.Pool {
  const pool = new pg.Pool({ connectionString: database, max, application_name: 'wsmirror-fleet' });
  pool.on('error', () => undefined);
  return pool;
}

/** `work` in one transaction, under the fleet's lock unless `locked` is false (a change that alters no schema). */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, locked = true): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    if (locked) await client.query(`select ${FLEET_LOCK}`);
    const out = await work(client);
    await client.query('commit');
    return out;
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

export async function ensureFleetTables(pool: pg.Pool): Promise<void> {
  await inTransaction(pool, async (c) => {
    await c.query(DDL);
  });
}

export interface ApplyResult {
  added: string[];
  updated: string[];
  removed: string[];
}

/**
 * Makes the fleet table say what the file says: new workspaces added, changed ones updated,
 * undeclared ones removed (their schemas and data stay), the views rebuilt, all in one transaction.
 */
export async function applyFleet(pool: pg.Pool, specs: WorkspaceSpec[]): Promise<ApplyResult> {
  await ensureFleetTables(pool);
  return inTransaction(pool, async (c) => {
    const { rows } = await c.query<{ id: string; fingerprint: string }>(
      `select id, md5(row(schema_name, base_url, key_file, key_env, settings, paused_in_file)::text) as fingerprint from ${FLEET_SCHEMA}.workspaces`,
    );
    const before = new Map(rows.map((r) => [r.id, r.fingerprint]));
    const result: ApplyResult = { added: [], updated: [], removed: [] };
    for (const s of specs) {
      const { rows: after } = await c.query<{ fingerprint: string }>(
        `insert into ${FLEET_SCHEMA}.workspaces (id, schema_name, base_url, key_file, key_env, settings, paused_in_file)
         values ($1, $2, $3, $4, $5, $6, $7)
         on conflict (id) do update set schema_name = excluded.schema_name, base_url = excluded.base_url,
           key_file = excluded.key_file, key_env = excluded.key_env, settings = excluded.settings,
           paused_in_file = excluded.paused_in_file
         returning md5(row(schema_name, base_url, key_file, key_env, settings, paused_in_file)::text) as fingerprint`,
        [s.id, s.schema, s.baseUrl, s.keyFile, s.keyEnv, JSON.stringify(s.settings), s.paused],
      );
      const was = before.get(s.id);
      if (was === undefined) result.added.push(s.id);
      else if (was !== after[0]!.fingerprint) result.updated.push(s.id);
      before.delete(s.id);
    }
    result.removed = [...before.keys()];
    if (result.removed.length > 0) await forget(c, result.removed);
    await c.query(`delete from ${FLEET_SCHEMA}.removed where id = any($1)`, [specs.map((s) => s.id)]);
    if (result.added.length > 0 || result.removed.length > 0) await rebuildViews(c);
    return result;
  });
}

/** Out of the table (so out of the queue and the views); remembered with its schema for `fleet remove --drop`. */
async function forget(c: pg.PoolClient, ids: string[]): Promise<void> {
  await c.query(
    `with gone as (delete from ${FLEET_SCHEMA}.workspaces where id = any($1) returning id, schema_name)
     insert into ${FLEET_SCHEMA}.removed (id, schema_name) select id, schema_name from gone
     on conflict (id) do update set schema_name = excluded.schema_name, removed_at = now()`,
    [ids],
  );
}

/**
 * `fleet remove <id> [--drop]`: out of the table and the views at once (a workspace already
 * removed by `apply` too); its schema is dropped only with `drop`. Null: no such workspace.
 */
export async function removeWorkspace(pool: pg.Pool, id: string, drop: boolean): Promise<string | null> {
  await ensureFleetTables(pool);
  return inTransaction(pool, async (c) => {
    await forget(c, [id]);
    await rebuildViews(c);
    const { rows } = await c.query<{ schema_name: string }>(`select schema_name from ${FLEET_SCHEMA}.removed where id = $1`, [id]);
    const schema = rows[0]?.schema_name ?? null;
    if (schema !== null && drop) {
      await c.query(`drop schema if exists ${ident(schema)} cascade`);
      await c.query(`delete from ${FLEET_SCHEMA}.removed where id = $1`, [id]);
    }
    return schema;
  });
}

export async function setPaused(pool: pg.Pool, id: string, paused: boolean): Promise<boolean> {
  const { rowCount } = await pool.query(`update ${FLEET_SCHEMA}.workspaces set paused_manually = $2 where id = $1`, [id, paused]);
  return (rowCount ?? 0) > 0;
}

/**
 * A workspace's schema was just created or migrated: the views must take it in. Not rebuilt
 * here: a rebuild locks every contract table of every schema, so one per new workspace made a
 * fleet's start O(workspaces²) and its lock count grow past the server's lock table. The
 * supervisor's next pass rebuilds once for every change since the last (refreshViews).
 */
export async function markMigrated(pool: pg.Pool, id: string, schemaChanged: boolean): Promise<void> {
  await inTransaction(
    pool,
    async (c) => {
      const { rowCount } = await c.query(`update ${FLEET_SCHEMA}.workspaces set migrated = true where id = $1 and not migrated`, [id]);
      if ((rowCount ?? 0) > 0 || schemaChanged) await c.query(`update ${FLEET_SCHEMA}.views_state set wanted = wanted + 1`);
    },
    false,
  );
}

/**
 * A rebuild locks every contract table of every schema while it runs (a few seconds at a thousand
 * workspaces): the next waits at least this many times as long as the last took, so rebuilds hold
 * those locks at most a tenth of the time while a fleet's new workspaces keep arriving.
 */
const REBUILD_SHARE_INVERSE = 10;

/**
 * Rebuilds the views when a schema was created or migrated since the last rebuild, in one
 * transaction under the fleet's lock. The state row is locked first, so a workspace marked
 * migrated meanwhile waits and counts for the next rebuild: none is ever left out. A failure is
 * kept on the row (`fleet status` shows it) and the next pass tries again; slices go on.
 */
export async function refreshViews(pool: pg.Pool): Promise<{ rebuilt: boolean; error: string | null }> {
  try {
    const rebuilt = await inTransaction(pool, async (c) => {
      const { rows } = await c.query<{ wanted: string; built: string; resting: boolean }>(
        `select wanted, built, coalesce(now() - built_at < make_interval(secs => build_ms * ${REBUILD_SHARE_INVERSE} / 1000.0), false) as resting
           from ${FLEET_SCHEMA}.views_state for update`,
      );
      const state = rows[0];
      if (!state || state.wanted === state.built || state.resting) return false;
      const began = Date.now();
      await rebuildViews(c);
      await c.query(`update ${FLEET_SCHEMA}.views_state set built = $1, built_at = now(), build_ms = $2, error = null, error_at = null`, [
        state.wanted,
        Date.now() - began,
      ]);
      return true;
    });
    return { rebuilt, error: null };
  } catch (err) {
    // PostgreSQL's hint names the fix (out of shared memory: max_locks_per_transaction, docs/fleet.md).
    const hint = (err as { hint?: unknown }).hint;
    const error = `${err instanceof Error ? err.message : String(err)}${typeof hint === 'string' ? ` (${hint})` : ''}`;
    await pool.query(`update ${FLEET_SCHEMA}.views_state set error = $1, error_at = now()`, [error]).catch(() => undefined);
    return { rebuilt: false, error };
  }
}
