import { sql, type RawBuilder } from 'kysely';
import type { Store } from '../store/index.js';
import { databaseOf } from '../store/internal.js';
import { fromDbTimestamp } from '../util/time.js';
import { sqlDialect } from './dialect.js';
import { percentileCont } from './support.js';

/** The figures `wsmirror report` prints, all read from the rpt_ tables. */
export interface Headlines {
  /** The clock the windows below are relative to. */
  asOf: string;
  /** When the rpt_ tables were last refreshed (null: never; run a sync first). */
  refreshedAt: string | null;
  /** Unresolved tickets now. */
  backlog: number;
  /** The last 7 UTC days including today. */
  last7Days: {
    from: string;
    to: string;
    created: number;
    solved: number;
    firstReplies: number;
    firstReplyMedianMinutes: number | null;
    firstReplyP90Minutes: number | null;
    slaAchieved: number;
    slaBreached: number;
    /** achieved / (achieved + breached), both SLA targets together; null when none completed. */
    slaAchievementRate: number | null;
  };
  /** Open deals per currency (never summed across currencies); amount as exact decimal text. */
  openPipeline: { currency: string | null; deals: number; amount: string; amountCents: number }[];
  /** Deals won and lost in the current calendar quarter (UTC). */
  quarter: { label: string; from: string; to: string; won: number; lost: number; winRate: number | null };
  sync: { watermark: string | null; lastSuccessAt: string | null; lagSeconds: number | null; dirty: number; quarantined: number } | null;
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/** Cents → exact decimal text ("-12.05"), no floating point. */
export function centsToDecimal(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Deals won and lost in the calendar quarter (UTC) of `now`, from rpt_sales_monthly. */
async function readQuarter(store: Store, now: Date): Promise<Headlines['quarter']> {
  const qStartMonth = Math.floor(now.getUTCMonth() / 3) * 3;
  const qFrom = new Date(Date.UTC(now.getUTCFullYear(), qStartMonth, 1));
  const qTo = new Date(Date.UTC(now.getUTCFullYear(), qStartMonth + 3, 0));
  const { rows } = await sql<{ won: number | null; lost: number | null }>`
    SELECT sum(won_count) AS won, sum(lost_count) AS lost FROM rpt_sales_monthly WHERE month BETWEEN ${day(qFrom)} AND ${day(qTo)}`.execute(
    databaseOf(store),
  );
  const won = Number(rows[0]?.won ?? 0);
  const lost = Number(rows[0]?.lost ?? 0);
  return {
    label: `${now.getUTCFullYear()}-Q${qStartMonth / 3 + 1}`,
    from: day(qFrom),
    to: day(qTo),
    won,
    lost,
    winRate: won + lost > 0 ? won / (won + lost) : null,
  };
}

export async function readHeadlines(store: Store, now: Date = new Date()): Promise<Headlines> {
  const db = databaseOf(store);
  const d = sqlDialect(db);
  const to = day(now);
  const from = day(new Date(now.getTime() - 6 * 86_400_000));
  const q = async <R>(query: RawBuilder<R>) => (await query.execute(db)).rows;
  // The stored form (docs/schema.md), so the comparison is right as text in SQLite too.
  const fromTs = `${from} 00:00:00.000`;
  const untilTs = `${day(new Date(now.getTime() + 86_400_000))} 00:00:00.000`;

  const [meta] = await q(sql<{ refreshed: string | null; backlog: number }>`
    SELECT max(refreshed_at) AS refreshed, coalesce(${sql.raw(d.countIf(`is_resolved = ${d.F}`))}, 0) AS backlog FROM rpt_tickets`);
  const [week] = await q(sql<Record<string, number | null>>`
    SELECT coalesce(sum(created), 0) AS created, coalesce(sum(solved), 0) AS solved,
      coalesce(sum(sla_achieved), 0) AS achieved, coalesce(sum(sla_breached), 0) AS breached
    FROM rpt_support_daily WHERE day BETWEEN ${from} AND ${to}`);
  // Percentiles over the whole week (daily percentiles cannot be combined), same method as the daily table.
  const [fr] = await q(sql<{ n: number | null; p50: number | null; p90: number | null }>`
    WITH fr AS (
      SELECT first_reply_minutes AS v, row_number() OVER (ORDER BY first_reply_minutes) AS rn, count(*) OVER () AS n
      FROM rpt_tickets
      WHERE first_agent_reply_at >= ${fromTs} AND first_agent_reply_at < ${untilTs} AND first_reply_minutes IS NOT NULL
    )
    SELECT max(n) AS n, ${sql.raw(percentileCont(d, 0.5))} AS p50, ${sql.raw(percentileCont(d, 0.9))} AS p90 FROM fr`);
  const pipeline = await q(sql<{ currency: string | null; deals: number; cents: number | null }>`
    SELECT currency, sum(open_deals) AS deals, sum(total_amount_cents) AS cents FROM rpt_pipeline_stages
    GROUP BY currency ORDER BY currency`);

  const quarter = await readQuarter(store, now);
  const [health] = await q(sql<Record<string, string | number | null>>`SELECT * FROM rpt_sync_health`);

  const achieved = Number(week?.achieved ?? 0);
  const breached = Number(week?.breached ?? 0);
  return {
    asOf: now.toISOString(),
    // rpt_sync_health is rewritten by every refresh; a rpt_tickets row only when its figures move.
    refreshedAt: fromDbTimestamp(health ? String(health.refreshed_at) : (meta?.refreshed ?? null)),
    backlog: Number(meta?.backlog ?? 0),
    last7Days: {
      from,
      to,
      created: Number(week?.created ?? 0),
      solved: Number(week?.solved ?? 0),
      firstReplies: Number(fr?.n ?? 0),
      firstReplyMedianMinutes: fr?.p50 ?? null,
      firstReplyP90Minutes: fr?.p90 ?? null,
      slaAchieved: achieved,
      slaBreached: breached,
      slaAchievementRate: achieved + breached > 0 ? achieved / (achieved + breached) : null,
    },
    openPipeline: pipeline.map((p) => ({
      currency: p.currency,
      deals: Number(p.deals),
      amountCents: Number(p.cents ?? 0),
      amount: centsToDecimal(Number(p.cents ?? 0)),
    })),
    quarter,
    sync: health
      ? {
          watermark: fromDbTimestamp(health.watermark as string | null),
          lastSuccessAt: fromDbTimestamp(health.last_success_at as string | null),
          lagSeconds: health.lag_seconds === null ? null : Number(health.lag_seconds),
          dirty: Number(health.dirty_records ?? 0),
          quarantined: Number(health.quarantined_records ?? 0),
        }
      : null,
  };
}
