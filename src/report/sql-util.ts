import { sql, type RawBuilder } from 'kysely';

/**
 * SQL fragments shared by the refresh statements (SQLite dialect). Kept as text so each statement
 * reads as one piece of SQL; only values we generate ourselves (validated timestamps) are inlined.
 */

/** Ticket statuses in the "resolved" category; every other status (open, pending, on_hold, unknown ones) is unresolved. */
export const RESOLVED_STATUSES = ['solved', 'closed'] as const;

/** SQL boolean (0/1): the status expression is in the resolved category. */
export function isResolved(expr: string): string {
  return `(lower(coalesce(${expr}, '')) IN (${RESOLVED_STATUSES.map((s) => `'${s}'`).join(', ')}))`;
}

/**
 * Whole milliseconds from a to b, both 24-char UTC text. julianday keeps ~40 µs precision at
 * today's dates, so rounding gives the exact millisecond; minutes and days are then one division,
 * which lets tests reproduce every figure exactly.
 */
export function msBetween(a: string, b: string): string {
  return `CAST(round((julianday(${b}) - julianday(${a})) * 86400000.0) AS INTEGER)`;
}

export const minutesBetween = (a: string, b: string): string => `(${msBetween(a, b)} / 60000.0)`;
export const daysBetween = (a: string, b: string): string => `(${msBetween(a, b)} / 86400000.0)`;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The refresh clock as a SQL literal; the strict format makes inlining safe. */
export function nowLiteral(now: string): string {
  if (!ISO.test(now)) throw new RangeError(`reporting clock must be a 24-char UTC timestamp, got ${now}`);
  return `'${now}'`;
}

/** Raw SQL with a clock literal substituted for every `:now`. */
export function withNow(text: string, now: string): RawBuilder<unknown> {
  return sql.raw(text.replaceAll(':now', nowLiteral(now)));
}

/** `id IN scope` for per-record statements: a temp table holding the ids being refreshed. */
export const TICKET_SCOPE = 'temp.rpt_scope_tickets';
export const DEAL_SCOPE = 'temp.rpt_scope_deals';
