import { key, type ColumnDecl, type IndexDecl, type LogicalType, type TableDecl } from '../store/index.js';

/**
 * The reporting tables, declared as the mirror's are (src/entities/table-decl.ts; docs/design.md §7):
 * their row types (src/report/schema.ts) derive from these, and test/store/declared-schema.test.ts
 * holds each to the migrated schema (0100_reporting and the migrations that add to it) on both
 * databases. Key columns are NOT NULL; every other column may be NULL, as the migrations create
 * them. Not here: rpt_ticket_custom_fields and rpt_deal_custom_fields, whose columns the refresh
 * adds at run time, one per custom field key (src/report/custom-fields.ts).
 */

type Nullable<S extends Record<string, LogicalType>> = { readonly [K in keyof S]: { readonly type: S[K]; readonly nullable: true } };

/** Columns that may hold NULL, named with their logical type: the reporting tables' usual column. */
function nullable<const S extends Record<string, LogicalType>>(spec: S): Nullable<S> {
  return Object.fromEntries(Object.entries(spec).map(([name, type]) => [name, { type, nullable: true }])) as Nullable<S>;
}

/** A reporting table: its key columns first (NOT NULL), then its nullable ones. */
function report<const K extends Record<string, ColumnDecl>, const N extends Record<string, LogicalType>>(
  keyColumns: K,
  values: N,
  indexes: readonly IndexDecl[] = [],
) {
  return { columns: { ...keyColumns, ...nullable(values) }, primaryKey: Object.keys(keyColumns), indexes };
}

const text = key('text');

// Packed by hand so each table reads as its schema (Prettier would put one column on a line).
// prettier-ignore
const rpt_tickets = report({ ticket_id: text }, {
  number: 'bigint', key: 'text', subject: 'text', status: 'text', is_resolved: 'boolean', priority: 'text', team_id: 'text',
  team_name: 'text', assignee_id: 'text', assignee_name: 'text', assignee_email: 'text', requester_id: 'text',
  requester_name: 'text', requester_email: 'text', tags: 'text', created_at: 'timestamp', updated_at: 'timestamp',
  first_agent_reply_at: 'timestamp', first_resolved_at: 'timestamp', full_resolved_at: 'timestamp',
  resolved_from_history: 'boolean', first_reply_minutes: 'real', first_resolution_minutes: 'real',
  full_resolution_minutes: 'real', reopen_count: 'bigint', public_agent_replies: 'bigint', internal_notes: 'bigint',
  customer_messages: 'bigint', is_one_touch: 'boolean', first_reply_due_at: 'timestamp', first_reply_sla: 'text',
  first_reply_sla_at: 'timestamp', resolve_due_at: 'timestamp', resolve_sla: 'text', resolve_sla_at: 'timestamp',
  age_minutes: 'real', history_complete: 'boolean',
  /** Why history_complete is 0 (migration 0900_history_gaps); null when it is 1. */
  history_incomplete_reason: 'text',
  refreshed_at: 'timestamp',
}, [
  { name: 'rpt_tickets_first_reply_sla_idx', columns: ['first_reply_sla', 'first_reply_due_at'], unique: false,
    why: 'the incremental refresh finds the rows whose first-reply target lapses with the clock' },
  { name: 'rpt_tickets_resolve_sla_idx', columns: ['resolve_sla', 'resolve_due_at'], unique: false,
    why: 'the incremental refresh finds the rows whose resolve target lapses with the clock' },
  { name: 'rpt_tickets_updated_idx', columns: ['updated_at'], unique: false,
    why: "the incremental refresh reads the daily range's end from it" },
]);

// prettier-ignore
const rpt_ticket_status_intervals = report({ ticket_id: text, seq: key('bigint') }, {
  status: 'text', is_resolved: 'boolean', valid_from: 'timestamp', valid_to: 'timestamp', minutes: 'real',
  is_resolution: 'boolean', is_reopen: 'boolean', assignee_id: 'text', source: 'text', history_complete: 'boolean',
});

// prettier-ignore
const rpt_support_daily = report({ day: key('date') }, {
  created: 'bigint', solved: 'bigint', reopened: 'bigint', backlog: 'bigint', first_replies: 'bigint',
  first_reply_median_minutes: 'real', first_reply_p90_minutes: 'real', first_reply_sla_achieved: 'bigint',
  first_reply_sla_breached: 'bigint', resolve_sla_achieved: 'bigint', resolve_sla_breached: 'bigint',
  sla_achieved: 'bigint', sla_breached: 'bigint',
});

// prettier-ignore
const rpt_agent_daily = report({ agent_id: text, day: key('date') }, {
  agent_name: 'text', agent_email: 'text', public_replies: 'bigint', internal_notes: 'bigint', tickets_touched: 'bigint',
  tickets_solved: 'bigint', one_touch_solves: 'bigint',
});

// prettier-ignore
const rpt_deals = report({ deal_id: text }, {
  name: 'text', pipeline_id: 'text', pipeline_name: 'text', stage_id: 'text', stage_name: 'text', stage_position: 'bigint',
  status: 'text', amount: 'numeric', amount_cents: 'bigint', currency: 'text', owner_id: 'text', owner_name: 'text',
  owner_email: 'text', company_id: 'text', company_name: 'text', primary_contact_id: 'text', primary_contact_name: 'text',
  primary_contact_email: 'text', created_at: 'timestamp', updated_at: 'timestamp', close_date: 'date',
  stage_entered_at: 'timestamp', won_at: 'timestamp', lost_at: 'timestamp', closed_at: 'timestamp', days_open: 'real',
  days_to_close: 'real', history_complete: 'boolean',
  /** Why history_complete is 0 (migration 0900_history_gaps); null when it is 1. */
  history_incomplete_reason: 'text',
  refreshed_at: 'timestamp',
});

// prettier-ignore
const rpt_deal_stage_intervals = report({ deal_id: text, seq: key('bigint') }, {
  pipeline_id: 'text', stage_id: 'text', stage_name: 'text', stage_position: 'bigint', is_won: 'boolean', is_lost: 'boolean',
  entered_at: 'timestamp', exited_at: 'timestamp', minutes: 'real', direction: 'text', source: 'text',
  history_complete: 'boolean',
});

// prettier-ignore
const rpt_pipeline_stages = report({}, {
  pipeline_id: 'text', pipeline_name: 'text', pipeline_position: 'bigint', stage_id: 'text', stage_name: 'text',
  stage_position: 'bigint', currency: 'text', open_deals: 'bigint', total_amount: 'numeric', total_amount_cents: 'bigint',
  avg_days_in_stage: 'real', refreshed_at: 'timestamp',
});

// prettier-ignore
const rpt_sales_monthly = report({}, {
  month: 'date', pipeline_id: 'text', pipeline_name: 'text', owner_id: 'text', owner_name: 'text', currency: 'text',
  deals_created: 'bigint', won_count: 'bigint', won_amount: 'numeric', won_amount_cents: 'bigint', lost_count: 'bigint',
  lost_amount: 'numeric', lost_amount_cents: 'bigint', win_rate_count: 'real', win_rate_value: 'real',
  avg_won_amount: 'real', avg_days_to_close: 'real',
});

// prettier-ignore
const rpt_sync_health = report({}, {
  refreshed_at: 'timestamp', watermark: 'timestamp', last_success_at: 'timestamp', last_run_outcome: 'text',
  lag_seconds: 'real', watermark_age_seconds: 'real', runs_24h: 'bigint', failed_runs_24h: 'bigint',
  dirty_records: 'bigint', quarantined_records: 'bigint',
  /** Added by 0200_bi_types. */
  running_since: 'timestamp',
  /** Added by 1000_current_as_of: the sync's "current as of" (src/sync/as-of.ts) and its age at the refresh. */
  current_as_of: 'timestamp', current_as_of_age_seconds: 'real',
});

/** Migration 1700: the custom field catalog (src/report/custom-fields.ts). */
// prettier-ignore
const rpt_custom_field_columns = report({ entity_type: text, key: text }, {
  column_name: 'text', type: 'text', first_seen_at: 'timestamp', widened_at: 'timestamp', widened_from: 'text',
  widened_value: 'text',
}, [
  { name: 'rpt_custom_field_columns_name_idx', columns: ['entity_type', 'column_name'], unique: true,
    why: 'two keys of one entity must never be given the same column' },
]);

/** Migration 1700: the versions tables (src/report/versions.ts). */
// prettier-ignore
const rpt_ticket_versions = report({ ticket_id: text, valid_from: key('timestamp') }, {
  valid_to: 'timestamp', status: 'text', priority: 'text', assignee_id: 'text', team_id: 'text', source: 'text',
  complete: 'boolean', incomplete_reason: 'text',
});

// prettier-ignore
const rpt_deal_versions = report({ deal_id: text, valid_from: key('timestamp') }, {
  valid_to: 'timestamp', stage_id: 'text', status: 'text', amount: 'numeric', currency: 'text', owner_id: 'text',
  close_date: 'date', source: 'text', complete: 'boolean', incomplete_reason: 'text',
});

/** Migration 1700: the daily tables (src/report/daily.ts): a version's state per day. */
// prettier-ignore
const rpt_ticket_daily = report({ ticket_id: text, day: key('date') }, {
  status: 'text', priority: 'text', assignee_id: 'text', team_id: 'text', history_complete: 'boolean',
});

// prettier-ignore
const rpt_deal_daily = report({ deal_id: text, day: key('date') }, {
  stage_id: 'text', status: 'text', amount: 'numeric', currency: 'text', owner_id: 'text', close_date: 'date',
  history_complete: 'boolean',
});

/** The window the daily tables were built for, per entity (src/report/daily.ts). */
const rpt_daily_windows = report({ entity_type: text }, { window_days: 'bigint', last_day: 'date' });

/** The declared reporting tables: every entry is checked against the migrated schema on both databases. */
export const REPORT_TABLES = {
  rpt_tickets,
  rpt_ticket_status_intervals,
  rpt_support_daily,
  rpt_agent_daily,
  rpt_deals,
  rpt_deal_stage_intervals,
  rpt_pipeline_stages,
  rpt_sales_monthly,
  rpt_sync_health,
  rpt_custom_field_columns,
  rpt_ticket_versions,
  rpt_deal_versions,
  rpt_ticket_daily,
  rpt_deal_daily,
  rpt_daily_windows,
} as const satisfies Record<string, TableDecl>;
