import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import type { ReportDatabase, ReportTables } from './schema.js';
import type { Store } from '../store/index.js';
import { databaseOf } from '../store/internal.js';
import { capabilitiesOf } from '../store/dialect.js';
import { captureBefore } from './aggregate-facts.js';
import { applyAggregateDeltas } from './aggregates-incremental.js';
import { dealClockStatement, refreshDealRows } from './deals.js';
import { refreshSalesAggregates } from './sales.js';
import { refreshSyncHealth, syncHealthInOneStatement } from './sync-health.js';
import { sqlDialect } from './dialect.js';
import { DEAL_SCOPE, freshTemp, runAll, TICKET_SCOPE, type ReportedType } from './sql-util.js';
import { refreshSupportAggregates } from './support.js';
import { refreshTicketRows, ticketClockStatements } from './tickets.js';
import { refreshCustomFields, type CustomFieldChanges } from './custom-fields.js';
import { DEFAULT_DAILY_WINDOW_DAYS, refreshDaily } from './daily.js';
import { refreshVersions } from './versions.js';

/** What a sync cycle changed: ids re-read (including deleted ones), or 'all' for a full rebuild. */
export interface ReportingChanges {
  tickets: ReadonlySet<string> | 'all';
  deals: ReadonlySet<string> | 'all';
}

export interface RefreshOptions {
  /** The clock for age, SLA-due and sync-lag columns. Default: the wall clock. Tests pass the simulator's. */
  now?: Date;
  /** Days of rpt_ticket_daily / rpt_deal_daily, today included (config `dailyWindowDays`). Default 90. */
  dailyWindowDays?: number;
  /** Rewrite rpt_sync_health too. Default true; false when the caller rewrites it right after (src/sync/runs.ts). */
  syncHealth?: boolean;
}

export interface RefreshResult {
  durationMs: number;
  /** Milliseconds per step, for the benchmark and debug logs. */
  steps: Record<string, number>;
  /** Custom field columns this refresh added or widened to text (the sync logs them). */
  customFields: CustomFieldChanges;
}

export const RPT_TABLE_NAMES = [
  'rpt_tickets',
  'rpt_ticket_status_intervals',
  'rpt_support_daily',
  'rpt_agent_daily',
  'rpt_deals',
  'rpt_deal_stage_intervals',
  'rpt_pipeline_stages',
  'rpt_sales_monthly',
  'rpt_sync_health',
  'rpt_ticket_custom_fields',
  'rpt_deal_custom_fields',
  'rpt_ticket_versions',
  'rpt_deal_versions',
  'rpt_ticket_daily',
  'rpt_deal_daily',
] as const satisfies readonly (keyof ReportTables)[];

const isEmpty = (s: ReadonlySet<string> | 'all') => s !== 'all' && s.size === 0;

/** Fills a scope table; `first` are statements to run before it in the same call (the refresh's setup). */
async function fillScope(
  db: Kysely<ReportDatabase>,
  name: string,
  source: string,
  ids: ReadonlySet<string> | 'all',
  first: readonly string[] = [],
): Promise<void> {
  const d = sqlDialect(db);
  const fill = ids === 'all' ? `INSERT INTO ${d.temp(name)} (id) SELECT id FROM ${source}` : null;
  await runAll(d, db, [...first, ...freshTemp(d, name, 'id TEXT PRIMARY KEY'), fill]);
  // A bound list of ids (text[] on PostgreSQL) is one parameter: no statement of runAll's takes one.
  if (ids !== 'all' && ids.size > 0) await d.insertIds(d.temp(name), [...ids]).execute(db);
  // Gathered with the next step's statements would save a call, but the step's timing would then hold it.
  await runAll(d, db, [d.analyzeTemp(d.temp(name))]);
}

/**
 * The memory a full rebuild's sorts may take in wsmirror's own process (SQLite, as
 * src/store/deferred-indexes.ts bounds an index build's): unbounded, the full build at the end of
 * an L backfill added 8-13 MB to the peak RSS. It costs the rebuild time, as the whole mirror is
 * read through the smaller page cache: 3.5 → 4.0 s at 50,000 tickets (bench/README.md, "Seventeenth pass").
 */
const FULL_REBUILD_SORT_KIB = 4096;

/**
 * Refreshes the rpt_ tables at the end of a sync cycle, in one transaction (readers see the old or
 * the new figures, never a mix). Per-record tables are rebuilt for the changed ids only; the daily
 * aggregates move by the changed tickets' delta (a full rebuild on 'all'), the sales ones are
 * recomputed from the per-record tables (cheap at 10,000 deals); clock-driven columns (ages, SLA targets
 * passing their due time, days open) are advanced on the untouched rows. With no changes at all
 * only rpt_sync_health is refreshed, so callers can run it after every cycle. Both dialects run the
 * same statements (dialect.ts renders the few fragments that differ) and give the same figures.
 */
export async function refreshRptTables(store: Store, changes: ReportingChanges, options: RefreshOptions = {}): Promise<RefreshResult> {
  const started = performance.now();
  const steps: Record<string, number> = {};
  const now = (options.now ?? new Date()).toISOString();
  const step = async (name: string, fn: () => Promise<void>) => {
    const t = performance.now();
    await fn();
    steps[name] = Math.round((performance.now() - t) * 10) / 10;
  };
  const nothing = isEmpty(changes.tickets) && isEmpty(changes.deals);

  const customFields: CustomFieldChanges = { added: [], widened: [] };
  const perRecord = async (trx: Kysely<ReportDatabase>, kind: ReportedType, ids: ReadonlySet<string> | 'all') => {
    await step(`${kind}_custom_fields`, () => refreshCustomFields(trx, kind, ids === 'all', now, customFields));
    await step(`${kind}_versions`, () => refreshVersions(trx, kind, ids === 'all', now));
  };
  // Timed only when it wrote: with nothing changed it costs one small read until the day turns.
  const daily = async (trx: Kysely<ReportDatabase>, kind: ReportedType, ids: ReadonlySet<string> | 'all') => {
    const t = performance.now();
    const wrote = await refreshDaily(trx, {
      kind,
      scope: ids === 'all' ? 'all' : ids.size === 0 ? 'none' : 'scope',
      now,
      windowDays: options.dailyWindowDays ?? DEFAULT_DAILY_WINDOW_DAYS,
    });
    if (wrote) steps[`${kind}_daily`] = Math.round((performance.now() - t) * 10) / 10;
  };

  // Incremental aggregates need the changed tickets' contribution before their rows are rebuilt.
  const incremental = !nothing && changes.tickets !== 'all';
  let messagesLeft = false;

  async function refreshIn(trx: Kysely<ReportDatabase>): Promise<void> {
    // Also with no ticket changed (the aggregate capture reads the scope, which must not hold a
    // previous cycle's ids), first with the planner settings for the rebuild's joins.
    if (!nothing) await step('ticket_scope', () => fillScope(trx, TICKET_SCOPE, 'tickets', changes.tickets, sqlDialect(trx).refreshSetup));
    if (incremental)
      await step('aggregate_capture', async () => {
        ({ messagesLeft } = await captureBefore(trx, now));
      });
    if (!isEmpty(changes.tickets)) {
      await step('tickets', () => refreshTicketRows(trx, changes.tickets === 'all', now));
      await perRecord(trx, 'ticket', changes.tickets);
    }
    if (!isEmpty(changes.deals)) {
      await step('deal_scope', () => fillScope(trx, DEAL_SCOPE, 'deals', changes.deals));
      await step('deals', () => refreshDealRows(trx, changes.deals === 'all', now));
      await perRecord(trx, 'deal', changes.deals);
    }
    // Also with no change: the day may have turned, which moves every record's rows.
    await daily(trx, 'ticket', changes.tickets);
    await daily(trx, 'deal', changes.deals);
    if (!nothing) {
      await step('clock', async () => {
        const d = sqlDialect(trx);
        await runAll(d, trx, [...ticketClockStatements(d, now), dealClockStatement(d, now)]);
      });
      await step('support_aggregates', () =>
        incremental ? applyAggregateDeltas(trx, now, messagesLeft) : refreshSupportAggregates(trx, now),
      );
      await step('sales_aggregates', () => refreshSalesAggregates(trx, now));
    }
    if (options.syncHealth !== false) await step('sync_health', () => refreshSyncHealth(trx, now));
  }

  const full = changes.tickets === 'all' || changes.deals === 'all';
  await databaseOf(store)
    .withTables<ReportTables>()
    .transaction()
    .execute(async (trx) => {
      // A full rebuild sorts every record's rows; its sorts' memory is bounded as an index build's is.
      if (full) await capabilitiesOf(trx).boundSortMemory(trx, FULL_REBUILD_SORT_KIB, () => refreshIn(trx));
      else await refreshIn(trx);
    });

  return { durationMs: Math.round((performance.now() - started) * 10) / 10, steps, customFields };
}

/**
 * Rewrites rpt_sync_health alone (one small statement). The sync calls it after a run is recorded
 * as finished, so the table describes that run, not the one that was still refreshing.
 */
export async function refreshSyncHealthOnly(store: Store, options: RefreshOptions = {}): Promise<void> {
  const now = (options.now ?? new Date()).toISOString();
  const db = databaseOf(store).withTables<ReportTables>();
  // After every cycle: one statement where the dialect can make it one, no transaction around it.
  if (syncHealthInOneStatement(db)) await refreshSyncHealth(db, now);
  else await db.transaction().execute((trx) => refreshSyncHealth(trx, now));
}
