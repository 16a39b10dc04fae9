import { sql, type Kysely } from 'kysely';
import type { ReportDatabase } from './schema.js';
import { sqlDialect, type SqlDialect } from './dialect.js';
import { freshTemp, nowed, runAll, type ReportedType } from './sql-util.js';
import { VERSION_TARGETS, type VersionTarget } from './versions.js';

/**
 * `rpt_ticket_daily` / `rpt_deal_daily` (docs/schema.md, "Daily state"): one row per record per
 * UTC day of the window, from the day it was created to today or the day it was deleted, with the
 * tracked fields as the versions table has them at the end of that day (today: as of the refresh).
 * A refresh rewrites the rows of the records in scope; when the day turned since the last refresh
 * it carries every other live record's last row forward to the new days (nothing changed them,
 * or they would be in scope) and drops the days that left the window. A window of another size
 * than the table was built for rebuilds it whole.
 */

/** The default window, in days (config `dailyWindowDays`). */
export const DEFAULT_DAILY_WINDOW_DAYS = 90;

const DAYS = 'rpt_days';
const DAY_MS = 86_400_000;
const dayKey = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The window's days, oldest first, ending today (UTC). */
export function windowDays(now: string, size: number): string[] {
  const today = Date.parse(`${now.slice(0, 10)}T00:00:00.000Z`);
  return Array.from({ length: size }, (_, i) => dayKey(today - (size - 1 - i) * DAY_MS));
}

/** The statements that fill the window's days table (500 days a statement). */
function fillDays(d: SqlDialect, days: readonly string[]): string[] {
  const inserts: string[] = [];
  for (let i = 0; i < days.length; i += 500) {
    const chunk = days.slice(i, i + 500).map((day) => `(${d.dayLiteral(day)})`);
    inserts.push(`INSERT INTO ${d.temp(DAYS)} (day) VALUES ${chunk.join(', ')}`);
  }
  return [...freshTemp(d, DAYS, `day ${d.dayType} PRIMARY KEY`), ...inserts];
}

const columns = (t: VersionTarget) => t.fields.map((f) => f.column);

/** Each version stands at the end of the days from its start's day to the day before its end's (deletion: the deletion day too). */
const INSERT_DAILY = (d: SqlDialect, t: VersionTarget, all: boolean, today: string, into = t.daily) => `
INSERT INTO ${into} (${t.idColumn}, day, ${columns(t).join(', ')}, history_complete)
SELECT v.${t.idColumn}, dd.day, ${columns(t)
  .map((c) => `v.${c}`)
  .join(', ')}, v.complete
FROM ${all ? '' : `${d.temp(t.scope)} sc CROSS JOIN `}${t.records} r CROSS JOIN ${t.versions} v CROSS JOIN ${d.temp(DAYS)} dd
WHERE ${all ? '' : 'r.id = sc.id AND '}v.${t.idColumn} = r.id AND dd.day >= ${d.day('v.valid_from')}
  AND dd.day < CASE WHEN v.valid_to IS NULL THEN ${d.nextDay(d.dayLiteral(today))}
    WHEN v.valid_to = r.deleted_at THEN ${d.nextDay(d.day('v.valid_to'))} ELSE ${d.day('v.valid_to')} END`;

/** Live records outside the scope keep their last row's state on the days since. */
const CARRY_FORWARD = (d: SqlDialect, t: VersionTarget, lastDay: string, scoped: boolean) => `
INSERT INTO ${t.daily} (${t.idColumn}, day, ${columns(t).join(', ')}, history_complete)
SELECT p.${t.idColumn}, dd.day, ${columns(t)
  .map((c) => `p.${c}`)
  .join(', ')}, p.history_complete
FROM ${t.daily} p CROSS JOIN ${t.records} r CROSS JOIN ${d.temp(DAYS)} dd
WHERE p.day = ${d.dayLiteral(lastDay)} AND r.id = p.${t.idColumn} AND r.deleted_at IS NULL AND dd.day > p.day
  ${scoped ? `AND p.${t.idColumn} NOT IN (SELECT id FROM ${d.temp(t.scope)})` : ''}`;

/**
 * The scope's rows as they should be, written where they differ: a changed record's rows mostly
 * stay as they were (a change today moves today's row), and a row rewritten in place leaves the
 * day index alone, where deleting and inserting every row of 100 tickets touched 9,000 pages of
 * it at 50,000 tickets (a second on SQLite; bench/README.md, "Daily state").
 */
function rewriteScope(d: SqlDialect, t: VersionTarget, today: string, now: string): (string | null)[] {
  const fresh = `rpt_daily_fresh_${t.kind}`;
  const key = (a: string, b: string) => `${a}.${t.idColumn} = ${b}.${t.idColumn} AND ${a}.day = ${b}.day`;
  const cols = [...columns(t), 'history_complete'];
  // Every statement walks the scope's rows by the primary key and probes the fresh rows by their key.
  const inScope = `${t.daily}.${t.idColumn} IN (SELECT id FROM ${d.temp(t.scope)})`;
  const match = `FROM ${d.temp(fresh)} n WHERE ${key('n', t.daily)}`;
  const differs = cols.map((c) => `${t.daily}.${c} IS DISTINCT FROM n.${c}`).join(' OR ');
  return [
    `CREATE TEMP TABLE IF NOT EXISTS ${fresh} AS SELECT * FROM ${t.daily} WHERE 1 = 0`,
    d.tempIndex(`${fresh}_key`, fresh, [t.idColumn, 'day']),
    `DELETE FROM ${d.temp(fresh)}`,
    nowed(d, INSERT_DAILY(d, t, false, today, d.temp(fresh)), now),
    d.analyzeTemp(d.temp(fresh)),
    `DELETE FROM ${t.daily} WHERE ${inScope} AND NOT EXISTS (SELECT 1 ${match})`,
    `UPDATE ${t.daily} SET (${cols.join(', ')}) = (SELECT ${cols.map((c) => `n.${c}`).join(', ')} ${match})
       WHERE ${inScope} AND EXISTS (SELECT 1 ${match} AND (${differs}))`,
    `INSERT INTO ${t.daily} (${t.idColumn}, day, ${cols.join(', ')})
       SELECT n.${t.idColumn}, n.day, ${cols.map((c) => `n.${c}`).join(', ')} FROM ${d.temp(fresh)} n
       WHERE NOT EXISTS (SELECT 1 FROM ${t.daily} x WHERE ${key('x', 'n')})`,
  ];
}

async function windowState(db: Kysely<ReportDatabase>, kind: ReportedType): Promise<{ windowDays: number; lastDay: string } | null> {
  const rows = await sql<{ window_days: number | string; last_day: unknown }>`
    SELECT window_days, last_day FROM rpt_daily_windows WHERE entity_type = ${kind}`.execute(db);
  const row = rows.rows[0];
  if (!row) return null;
  const last = row.last_day instanceof Date ? row.last_day.toISOString().slice(0, 10) : String(row.last_day);
  return { windowDays: Number(row.window_days), lastDay: last };
}

/** What to do to one entity's daily table this refresh. */
export interface DailyRefresh {
  kind: ReportedType;
  /** The records whose rows to rewrite: those in the scope table, every record, or none. */
  scope: 'scope' | 'all' | 'none';
  now: string;
  windowDays: number;
}

/**
 * Refreshes one entity's daily rows: the scope's rows are rebuilt from the versions table (which
 * the caller refreshed first), the other records' rows move to a new day when the day turned.
 */
export async function refreshDaily(db: Kysely<ReportDatabase>, r: DailyRefresh): Promise<boolean> {
  const d = sqlDialect(db);
  const t = VERSION_TARGETS[r.kind];
  const days = windowDays(r.now, r.windowDays);
  const today = days.at(-1) as string;
  const state = await windowState(db, r.kind);
  const full = r.scope === 'all' || !state || state.windowDays !== r.windowDays || state.lastDay > today;
  if (!full && r.scope === 'none' && state.lastDay === today) return false;
  const statements: (string | null)[] = fillDays(d, days);
  if (full) {
    statements.push(`DELETE FROM ${t.daily}`, nowed(d, INSERT_DAILY(d, t, true, today), r.now));
  } else {
    if (state.lastDay < today) {
      statements.push(
        CARRY_FORWARD(d, t, state.lastDay, r.scope === 'scope'),
        `DELETE FROM ${t.daily} WHERE day < ${d.dayLiteral(days[0] as string)}`,
      );
    }
    if (r.scope === 'scope') statements.push(...rewriteScope(d, t, today, r.now));
  }
  statements.push(
    `INSERT INTO rpt_daily_windows (entity_type, window_days, last_day) VALUES ('${r.kind}', ${r.windowDays}, ${d.dayLiteral(today)})
       ON CONFLICT (entity_type) DO UPDATE SET window_days = excluded.window_days, last_day = excluded.last_day`,
  );
  await runAll(d, db, statements);
  return true;
}
