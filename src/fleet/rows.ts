import type pg from 'pg';
import { FLEET_SCHEMA, type WorkspaceSpec } from './config.js';

/** What a slice did: a bounded piece of the backfill, one sync cycle, or the nightly `verify --repair`. */
export type SliceKind = 'backfill' | 'sync' | 'reconcile';

/** One workspace's row as a slice needs it. */
export interface WorkspaceRow extends WorkspaceSpec {
  paused: boolean;
  migrated: boolean;
  lastSuccessAt: Date | null;
  consecutiveFailures: number;
  ratePerSecond: number | null;
  /** When its last reconcile (`verify --repair`) began; null: never. */
  lastReconcileAt: Date | null;
  addedAt: Date;
}

type RowColumns = {
  id: string;
  schema_name: string;
  base_url: string;
  key_file: string | null;
  key_env: string | null;
  settings: Record<string, unknown>;
  paused: boolean;
  migrated: boolean;
  last_success_at: Date | null;
  consecutive_failures: number;
  rate_per_second: number | null;
  last_reconcile_at: Date | null;
  added_at: Date;
};

const ROW_COLUMNS = `id, schema_name, base_url, key_file, key_env, settings, paused_in_file or paused_manually as paused, migrated,
            last_success_at, consecutive_failures, rate_per_second, last_reconcile_at, added_at`;

function workspaceRow(r: RowColumns): WorkspaceRow {
  return {
    id: r.id,
    schema: r.schema_name,
    baseUrl: r.base_url,
    keyFile: r.key_file,
    keyEnv: r.key_env,
    settings: r.settings,
    paused: r.paused,
    migrated: r.migrated,
    lastSuccessAt: r.last_success_at,
    consecutiveFailures: r.consecutive_failures,
    ratePerSecond: r.rate_per_second,
    lastReconcileAt: r.last_reconcile_at,
    addedAt: r.added_at,
  };
}

export async function readWorkspace(pool: pg.Pool, id: string): Promise<WorkspaceRow | null> {
  const { rows } = await pool.query<RowColumns>(`select ${ROW_COLUMNS} from ${FLEET_SCHEMA}.workspaces where id = $1`, [id]);
  return rows[0] ? workspaceRow(rows[0]) : null;
}

/** A slice's claim on its workspace: the row as it begins, and how long ago (database clock) the previous slice ended. */
export interface SliceClaim {
  row: WorkspaceRow;
  /** Milliseconds since the previous slice ended; null when none has. */
  sinceLastEndMs: number | null;
}

/**
 * Marks a slice begun and reads the row, in one statement; null when the workspace is paused or
 * no longer in the fleet (nothing is marked then). The previous slice's end is on the database's
 * clock, so the spacing of request starts holds across slices and workers whichever machine ran
 * it (firstRequestDelay).
 */
export async function claimSlice(pool: pg.Pool, id: string, workerId: string): Promise<SliceClaim | null> {
  const { rows } = await pool.query<RowColumns & { since_end_ms: number | null }>(
    `update ${FLEET_SCHEMA}.workspaces set last_slice_at = now(), worker_id = $2
      where id = $1 and not (paused_in_file or paused_manually)
      returning ${ROW_COLUMNS}, (extract(epoch from (now() - last_slice_end)) * 1000)::float8 as since_end_ms`,
    [id, workerId],
  );
  const r = rows[0];
  return r ? { row: workspaceRow(r), sinceLastEndMs: r.since_end_ms } : null;
}

/** How long a slice waits before its first request: one request interval after the previous slice's end. */
export function firstRequestDelay(claim: SliceClaim, ratePerSecond: number): number {
  return claim.sinceLastEndMs === null ? 0 : Math.max(0, 1000 / ratePerSecond - claim.sinceLastEndMs);
}

/** What a slice leaves on its workspace's row (never a key: errors are redacted before this). */
export interface SliceRecord {
  kind: SliceKind;
  ok: boolean;
  state: string;
  durationMs: number;
  requests: number;
  ratePerSecond: number | null;
  backfillPhase: string | null;
  lagSeconds: number | null;
  currentAsOf: string | null;
  error: { code: string; message: string } | null;
  nextAt: Date | null;
}

export async function recordSlice(pool: pg.Pool, id: string, r: SliceRecord): Promise<void> {
  await pool.query(
    `with w as (
       update ${FLEET_SCHEMA}.workspaces set
         state = $2, last_slice_end = now(), backfill_phase = $3, rate_per_second = coalesce($4, rate_per_second),
         requests_total = requests_total + $5, next_at = $6,
         last_success_at = case when $7 then now() else last_success_at end,
         consecutive_failures = case when $7 then 0 else consecutive_failures + 1 end,
         lag_seconds = case when $7 then $8 else lag_seconds end,
         current_as_of = coalesce($9::timestamptz, current_as_of),
         last_error = case when $7 then last_error else $10 end,
         last_error_code = case when $7 then last_error_code else $11 end,
         last_error_at = case when $7 then last_error_at else now() end
       where id = $1 returning id)
     insert into ${FLEET_SCHEMA}.slices (workspace_id, kind, ok, duration_ms, requests)
     select id, $12, $7, $13, $5 from w`,
    [
      id,
      r.state,
      r.backfillPhase,
      r.ratePerSecond,
      r.requests,
      r.nextAt,
      r.ok,
      r.lagSeconds,
      r.currentAsOf,
      r.error?.message ?? null,
      r.error?.code ?? null,
      r.kind,
      Math.round(r.durationMs),
    ],
  );
}

/** Slice log rows older than an hour are of no use to the page or the metrics. */
export async function pruneSlices(pool: pg.Pool): Promise<void> {
  await pool.query(`delete from ${FLEET_SCHEMA}.slices where ended_at < now() - interval '1 hour'`);
}

/**
 * A reconcile begins: counted as the tick's attempt whatever its end, so one that fails or
 * outlasts its slice waits for the next tick instead of taking every slice of the workspace.
 */
export async function markReconcileBegun(pool: pg.Pool, id: string): Promise<void> {
  await pool.query(`update ${FLEET_SCHEMA}.workspaces set last_reconcile_at = now() where id = $1`, [id]);
}
