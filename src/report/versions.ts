import type { Kysely } from 'kysely';
import type { ReportDatabase } from './schema.js';
import { sqlDialect, type SqlDialect } from './dialect.js';
import { historyComplete, historyIncompleteReason } from './history-complete.js';
import { DEAL_SCOPE, nowed, runAll, TICKET_SCOPE, type ReportedType } from './sql-util.js';

/**
 * `rpt_ticket_versions` / `rpt_deal_versions` (docs/schema.md, "Versions"): every version of a
 * record's tracked fields, from its creation to now or its deletion, as an SCD2 table. A version
 * starts at the record's creation and at each instant the history tables hold a change of a
 * tracked field; each field holds, at a version's start, the value of its last change at or before
 * that instant, else the first change's `from`, else the current copy's (the rule rpt_ticket_status_intervals
 * follows). `complete` and `incomplete_reason` are the record's (history-complete.ts).
 */

/** A tracked column: its history field, the current value and the cast of its text. */
interface VersionField {
  column: string;
  history: string;
  current: (r: string) => string;
  cast?: (d: SqlDialect, text: string) => string;
}

/** One entity's versions and daily tables (daily.ts reads the same description). */
export interface VersionTarget {
  kind: ReportedType;
  versions: string;
  daily: string;
  idColumn: string;
  records: 'tickets' | 'deals';
  history: 'ticket_history' | 'deal_history';
  owner: string;
  scope: string;
  fields: readonly VersionField[];
}

const plain = (column: string): VersionField => ({ column, history: column, current: (r) => `${r}.${column}` });

export const VERSION_TARGETS: Record<ReportedType, VersionTarget> = {
  ticket: {
    kind: 'ticket',
    versions: 'rpt_ticket_versions',
    daily: 'rpt_ticket_daily',
    idColumn: 'ticket_id',
    records: 'tickets',
    history: 'ticket_history',
    owner: 'ticket_id',
    scope: TICKET_SCOPE,
    fields: [plain('status'), plain('priority'), plain('assignee_id'), plain('team_id')],
  },
  deal: {
    kind: 'deal',
    versions: 'rpt_deal_versions',
    daily: 'rpt_deal_daily',
    idColumn: 'deal_id',
    records: 'deals',
    history: 'deal_history',
    owner: 'deal_id',
    scope: DEAL_SCOPE,
    fields: [
      plain('stage_id'),
      plain('status'),
      { column: 'amount', history: 'amount', current: (r) => `CAST(${r}.amount AS TEXT)`, cast: (d, v) => d.decimalOf(v) },
      plain('currency'),
      plain('owner_id'),
      { column: 'close_date', history: 'close_date', current: (r) => `CAST(${r}.close_date AS TEXT)`, cast: (d, v) => d.dateOf(v) },
    ],
  },
};

/**
 * A field's value at `at` for the record `id`, as text. Each probe returns '=' + value ('=' alone
 * for NULL), so a found NULL is told apart from "no row" with one index probe per case.
 */
function valueAt(t: VersionTarget, f: VersionField, id: string, at: string, r: string): string {
  const h = `${t.history} a WHERE a.${t.owner} = ${id} AND a.field = '${f.history}'`;
  return `nullif(substr(coalesce(
    (SELECT '=' || coalesce(a.to_value, '') FROM ${h} AND a.changed_at <= ${at} ORDER BY a.changed_at DESC, a.id DESC LIMIT 1),
    (SELECT '=' || coalesce(a.from_value, '') FROM ${h} ORDER BY a.changed_at, a.id LIMIT 1),
    '=' || coalesce(${f.current(r)}, '')), 2), '')`;
}

const INSERT_VERSIONS = (d: SqlDialect, t: VersionTarget) => {
  const tracked = t.fields.map((f) => `'${f.history}'`);
  const values = t.fields.map((f) => {
    const text = valueAt(t, f, 'iv.rid', 'iv.at', 'r');
    return f.cast ? f.cast(d, text) : text;
  });
  return `
INSERT INTO ${t.versions}
  (${t.idColumn}, valid_from, valid_to, ${t.fields.map((f) => f.column).join(', ')}, source, complete, incomplete_reason)
WITH scope AS (
  SELECT r.id, r.created_at, r.deleted_at FROM ${d.temp(t.scope)} sc CROSS JOIN ${t.records} r WHERE r.id = sc.id
),
-- A version starts at the creation and at each instant a tracked field changed while the record lived.
starts AS (
  SELECT s.id AS rid, s.created_at AS at, 'created' AS source FROM scope s
  UNION ALL
  SELECT h.${t.owner}, h.changed_at, min(h.source) FROM scope s CROSS JOIN ${t.history} h
  WHERE h.${t.owner} = s.id AND h.field IN (${tracked.join(', ')}) AND h.changed_at > s.created_at
    AND (s.deleted_at IS NULL OR h.changed_at < s.deleted_at)
  GROUP BY h.${t.owner}, h.changed_at
),
iv AS (
  SELECT rid, at, source, lead(at) OVER (PARTITION BY rid ORDER BY at) AS next_at FROM starts
)
SELECT iv.rid, iv.at, coalesce(iv.next_at, r.deleted_at),
  ${values.join(',\n  ')},
  iv.source, ${historyComplete(t.kind, 'iv.rid')}, ${historyIncompleteReason(t.kind, 'iv.rid')}
FROM iv CROSS JOIN ${t.records} r WHERE r.id = iv.rid`;
};

/** Rebuilds the versions of the records in scope, deleted ones included (every record when `all`). */
export async function refreshVersions(db: Kysely<ReportDatabase>, kind: ReportedType, all: boolean, now: string): Promise<void> {
  const d = sqlDialect(db);
  const t = VERSION_TARGETS[kind];
  const where = all ? '' : ` WHERE ${t.idColumn} IN (SELECT id FROM ${d.temp(t.scope)})`;
  await runAll(d, db, [nowed(d, `DELETE FROM ${t.versions}${where}`, now), nowed(d, INSERT_VERSIONS(d, t), now)]);
}
