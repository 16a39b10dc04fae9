import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { ReportDatabase } from './schema.js';
import type { BuiltInTable, BuiltInType } from '../entities/index.js';
import type { SqlDialect } from './dialect.js';

/**
 * SQL fragments shared by the refresh statements of both dialects (dialect.ts holds the ones that
 * differ). Kept as text so each statement reads as one piece of SQL; only values we generate
 * ourselves (validated timestamps) are inlined.
 */

/**
 * The record types the reports cover: per type by nature (docs/design.md §7), so a built-in type
 * gains reports when one is written for it, and until then the reports name none of it.
 */
export type ReportedType = Extract<BuiltInType, 'ticket' | 'deal'>;
export type ReportedTable = Extract<BuiltInTable, 'tickets' | 'deals'>;

/** Ticket statuses in the "resolved" category; every other status (open, pending, on_hold, unknown ones) is unresolved. */
export const RESOLVED_STATUSES = ['solved', 'closed'] as const;

/** SQL boolean: the status expression is in the resolved category. */
export function isResolved(expr: string): string {
  return `(lower(coalesce(${expr}, '')) IN (${RESOLVED_STATUSES.map((s) => `'${s}'`).join(', ')}))`;
}

/** Raw SQL with the dialect's clock literal substituted for every `:now`. */
export function withNow(d: SqlDialect, text: string, now: string): RawBuilder<unknown> {
  return sql.raw(text.replaceAll(':now', d.now(now)));
}

/** `id IN scope` for per-record statements: temp tables holding the ids being refreshed (name via d.temp). */
export const TICKET_SCOPE = 'rpt_scope_tickets';
export const DEAL_SCOPE = 'rpt_scope_deals';

/**
 * The live records in scope, as a FROM clause binding `alias`, driven by the scope table: one
 * primary key probe per id. Written as `alias.id IN (SELECT id FROM scope)`, SQLite without
 * statistics chose to walk every live record through the (deleted_at, …) indexes and test each
 * against the scope: at 50,000 tickets, 600 ms to rebuild 1,300 of them. A CROSS JOIN keeps
 * SQLite's join order as written; PostgreSQL plans it as any inner join.
 */
export function scopedLive(d: SqlDialect, scope: string, table: ReportedTable, alias: string): string {
  return `${d.temp(scope)} sc CROSS JOIN ${table} ${alias} WHERE ${alias}.id = sc.id AND ${alias}.deleted_at IS NULL`;
}

/** Creates (once per connection) and empties a temp table; a pooled PostgreSQL connection may still hold it. */
export async function freshTemp(d: SqlDialect, db: Kysely<ReportDatabase>, name: string, columns: string): Promise<void> {
  await sql.raw(`CREATE TEMP TABLE IF NOT EXISTS ${name} (${columns})`).execute(db);
  await sql.raw(`DELETE FROM ${d.temp(name)}`).execute(db);
}
