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

/** SQL text with the dialect's clock literal substituted for every `:now`. */
export function nowed(d: SqlDialect, text: string, now: string): string {
  return text.replaceAll(':now', d.now(now));
}

/** Raw SQL with the dialect's clock literal substituted for every `:now`. */
export function withNow(d: SqlDialect, text: string, now: string): RawBuilder<unknown> {
  return sql.raw(nowed(d, text, now));
}

/**
 * Runs statements that return nothing, in order, in the caller's transaction: in one call where
 * the dialect takes several (PostgreSQL), one by one where it does not (SQLite, in process, where
 * a call costs no round trip). A false or null entry is skipped. Why: a refresh of one changed
 * ticket ran ~75 statements, one round trip each, and at 1,000 fleet workspaces on two cores each
 * round trip's wake-ups of the worker and its backend are part of what a write costs
 * (docs/fleet.md, "Sizing").
 */
export async function runAll(d: SqlDialect, db: Kysely<ReportDatabase>, statements: readonly (string | null | false)[]): Promise<void> {
  const texts = statements.filter((s): s is string => typeof s === 'string' && s !== '');
  if (texts.length === 0) return;
  if (d.severalPerCall) await sql.raw(texts.join(';\n')).execute(db);
  else for (const text of texts) await sql.raw(text).execute(db);
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

/**
 * The statements that create (once per connection) and empty a temp table; a pooled PostgreSQL
 * connection may still hold it. For runAll.
 */
export function freshTemp(d: SqlDialect, name: string, columns: string): string[] {
  return [`CREATE TEMP TABLE IF NOT EXISTS ${name} (${columns})`, `DELETE FROM ${d.temp(name)}`];
}
