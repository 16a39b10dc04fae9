import type pg from 'pg';
import { ident } from './views.js';

/**
 * Whether vacuum keeps up with the job queue's tables (docs/fleet.md, "Vacuum of the queue"), read
 * cheaply: the statistics functions called on pg-boss's job tables, looked up by name (2.4 ms at
 * 200 workspaces, where pg-boss's own check through `pg_stat_user_tables`, which computes every
 * workspace table's statistics, took 136 ms). pg-boss's check runs too, but its warnings are events
 * nobody logged, and its test for a pinned horizon fires on a busy healthy queue (below); this
 * one is what the worker logs, once a minute.
 */
export interface QueueTableGarbage {
  table: string;
  live: number;
  dead: number;
  /** `autovacuum_vacuum_threshold + autovacuum_vacuum_scale_factor × live` (the table's own settings first): where PostgreSQL itself would vacuum it. */
  budget: number;
  /** The later of the last autovacuum and the last manual vacuum; null if neither ever ran. */
  lastVacuumAt: Date | null;
}

const setting = (name: string) =>
  `coalesce((select option_value::float8 from pg_options_to_table(c.reloptions) where option_name = '${name}'),
            current_setting('${name}')::float8)`;

/**
 * The job tables of pg-boss's `schema` (its `job`, `job_common` and any queue's own partition), each
 * with its dead rows against its autovacuum budget. Looked up by name: pg_class has no index on the
 * schema alone, and a scan of it over a fleet's ~150 relations per workspace cost 87 ms at 1,000
 * workspaces (the same order as pg-boss's check).
 */
export async function readQueueGarbage(pool: pg.Pool, schema: string): Promise<QueueTableGarbage[]> {
  const { rows } = await pool.query<{ table: string; live: string; dead: string; budget: number; last_vacuum_at: Date | null }>(
    `select c.relname as table,
            pg_stat_get_live_tuples(c.oid) as live,
            pg_stat_get_dead_tuples(c.oid) as dead,
            ${setting('autovacuum_vacuum_threshold')}
              + ${setting('autovacuum_vacuum_scale_factor')} * pg_stat_get_live_tuples(c.oid) as budget,
            greatest(pg_stat_get_last_autovacuum_time(c.oid), pg_stat_get_last_vacuum_time(c.oid)) as last_vacuum_at
       from pg_class c
      where c.relname = any(array(select table_name from ${ident(schema)}.queue union select 'job' union select 'job_common'))
        and c.relnamespace = to_regnamespace($1) and c.relkind = 'r'
      order by 1`,
    [schema],
  );
  return rows.map((r) => ({
    table: r.table,
    live: Number(r.live),
    dead: Number(r.dead),
    budget: Number(r.budget),
    lastVacuumAt: r.last_vacuum_at,
  }));
}

/**
 * When the oldest snapshot that vacuum of this database's tables must respect was taken: the oldest
 * transaction in this database holding one (other than this session's), or its oldest prepared
 * transaction; a replication slot holding an xmin counts as holding since ever. Sessions of other
 * databases do not hold back a vacuum of this one's tables. Null: nothing holds one.
 */
export async function readOldestSnapshot(pool: pg.Pool): Promise<Date | null> {
  const { rows } = await pool.query<{ at: Date | null }>(
    `select least(
        (select min(xact_start) from pg_stat_activity
          where backend_xmin is not null and pid <> pg_backend_pid() and datname = current_database()),
        (select min(prepared) from pg_prepared_xacts where database = current_database()),
        (select 'epoch'::timestamptz from pg_replication_slots where xmin is not null or catalog_xmin is not null limit 1)
      ) as at`,
  );
  return rows[0]?.at ?? null;
}

/** A queue table whose dead rows stayed over its budget from one check to the next. */
export interface GarbageWarning {
  table: string;
  dead: number;
  budget: number;
  /**
   * `pinned`: a vacuum ran between the checks, and a snapshot older than that vacuum (and than
   * `pinnedAfterMs`) is still held, so what died after it could not be freed. `unvacuumed`: no
   * vacuum ran over `checks` checks in a row while the dead rows grew.
   */
  reason: 'pinned' | 'unvacuumed';
  lastVacuumAt: Date | null;
  /** The oldest snapshot held (pinned only). */
  heldSince?: Date;
}

export interface GarbageWatchOptions {
  /** Checks in a row over budget, with no vacuum and the dead rows growing, before `unvacuumed`. Default 3 (two minutes at the worker's minute). */
  checks?: number;
  /** A snapshot held at least this long counts as pinning; a slice's own transaction lasts a page. Default 60,000. */
  pinnedAfterMs?: number;
}

/**
 * pg-boss's two diagnoses, without its false alarm on a busy queue: a minute of slices makes more
 * dead rows than a vacuum just freed, so "a vacuum ran and the count did not fall" (its test, run
 * every 5 s) warned here on a healthy queue at 1,000 workspaces. Pinned is therefore read from the
 * holder itself, a snapshot older than the vacuum; unvacuumed needs `checks` checks with no vacuum.
 * One check over budget never warns (autovacuum may not have come round yet).
 */
export class QueueGarbageWatch {
  private history = new Map<string, QueueTableGarbage[]>();
  private readonly checks: number;
  private readonly pinnedAfterMs: number;

  constructor(options: GarbageWatchOptions = {}) {
    this.checks = options.checks ?? 3;
    this.pinnedAfterMs = options.pinnedAfterMs ?? 60_000;
  }

  observe(now: readonly QueueTableGarbage[], oldestSnapshot: Date | null, at = Date.now()): GarbageWarning[] {
    const warnings: GarbageWarning[] = [];
    const next = new Map<string, QueueTableGarbage[]>();
    for (const t of now) {
      const seen = [...(this.history.get(t.table) ?? []), t].slice(-this.checks);
      next.set(t.table, seen);
      const before = seen.at(-2);
      if (!before || t.dead <= t.budget || before.dead <= before.budget) continue;
      const vacuumedSinceBefore = vacuumMs(t) > vacuumMs(before);
      const holder = oldestSnapshot !== null && at - oldestSnapshot.getTime() >= this.pinnedAfterMs ? oldestSnapshot : null;
      if (vacuumedSinceBefore && holder !== null && holder.getTime() < vacuumMs(t)) {
        warnings.push({ ...pick(t), reason: 'pinned', heldSince: holder });
      } else if (seen.length === this.checks && unvacuumed(seen)) {
        warnings.push({ ...pick(t), reason: 'unvacuumed' });
      }
    }
    this.history = next;
    return warnings;
  }
}

const vacuumMs = (t: QueueTableGarbage) => t.lastVacuumAt?.getTime() ?? 0;

/** Over budget at every check, growing at each, and no vacuum since the first. */
function unvacuumed(seen: readonly QueueTableGarbage[]): boolean {
  return seen.every((g, i) => g.dead > g.budget && (i === 0 || g.dead > seen[i - 1]!.dead)) && vacuumMs(seen.at(-1)!) <= vacuumMs(seen[0]!);
}
const pick = (t: QueueTableGarbage) => ({ table: t.table, dead: t.dead, budget: t.budget, lastVacuumAt: t.lastVacuumAt });
