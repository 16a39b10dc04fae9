import type pg from 'pg';
import { FLEET_SCHEMA } from './config.js';

/** One workspace's line of `fleet status` and the fleet page. */
export interface WorkspaceStatus {
  id: string;
  schema: string;
  /** paused, new, backfilling, current, behind, failing, key_rejected, key_unavailable. */
  state: string;
  /** How far the mirror trailed the newest upstream event at its last sync (null: unknown). */
  lagSeconds: number | null;
  /** The upstream instant the mirror is known to be complete up to (docs/sync.md). */
  currentAsOf: string | null;
  lastSuccessAt: string | null;
  /** Seconds since the last successful slice (null: never): what the page sorts by. */
  stalenessSeconds: number | null;
  lastError: { code: string | null; message: string; at: string | null } | null;
  backfillPhase: string | null;
  nextAt: string | null;
  requestsPerMinute: number;
  requestsTotal: number;
}

/** The cross-workspace views (wsmirror_all): whether they hold every migrated schema yet. */
export interface ViewsStatus {
  /** False while a schema created or migrated since the last rebuild waits for the next (≤ 10 s). */
  current: boolean;
  builtAt: string | null;
  /** The last rebuild's failure, kept until one succeeds. */
  error: { message: string; at: string | null } | null;
}

export interface FleetStatus {
  at: string;
  workers: number;
  views: ViewsStatus;
  workspaces: WorkspaceStatus[];
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

/** Every declared workspace, stalest first (never synced counts as stalest). */
export async function readFleetStatus(pool: pg.Pool): Promise<FleetStatus> {
  const { rows } = await pool.query<{
    id: string;
    schema_name: string;
    state: string;
    paused: boolean;
    lag_seconds: number | null;
    current_as_of: Date | null;
    last_success_at: Date | null;
    staleness: number | null;
    last_error: string | null;
    last_error_code: string | null;
    last_error_at: Date | null;
    consecutive_failures: number;
    backfill_phase: string | null;
    next_at: Date | null;
    rpm: number;
    requests_total: string;
  }>(
    `select w.*, w.paused_in_file or w.paused_manually as paused,
            extract(epoch from now() - w.last_success_at)::float8 as staleness,
            coalesce(m.requests, 0)::int as rpm
       from ${FLEET_SCHEMA}.workspaces w
       left join (select workspace_id, sum(requests) as requests from ${FLEET_SCHEMA}.slices
                   where ended_at > now() - interval '1 minute' group by workspace_id) m on m.workspace_id = w.id
      order by w.last_success_at asc nulls first, w.id`,
  );
  const { rows: workers } = await pool.query<{ n: number }>(
    `select count(*)::int as n from ${FLEET_SCHEMA}.workers where seen_at > now() - interval '30 seconds'`,
  );
  const { rows: views } = await pool.query<{
    wanted: string;
    built: string;
    built_at: Date | null;
    error: string | null;
    error_at: Date | null;
  }>(`select wanted, built, built_at, error, error_at from ${FLEET_SCHEMA}.views_state`);
  const v = views[0];
  return {
    at: new Date().toISOString(),
    workers: workers[0]?.n ?? 0,
    views: {
      current: v === undefined || v.wanted === v.built,
      builtAt: iso(v?.built_at ?? null),
      error: v?.error ? { message: v.error, at: iso(v.error_at) } : null,
    },
    workspaces: rows.map((r) => ({
      id: r.id,
      schema: r.schema_name,
      state: r.paused ? 'paused' : r.state,
      lagSeconds: r.lag_seconds,
      currentAsOf: iso(r.current_as_of),
      lastSuccessAt: iso(r.last_success_at),
      stalenessSeconds: r.staleness,
      // The last error stays visible until a slice succeeds after it.
      lastError:
        r.last_error !== null && r.consecutive_failures > 0
          ? { code: r.last_error_code, message: r.last_error, at: iso(r.last_error_at) }
          : null,
      backfillPhase: r.backfill_phase,
      nextAt: iso(r.next_at),
      requestsPerMinute: r.rpm,
      requestsTotal: Number(r.requests_total),
    })),
  };
}
