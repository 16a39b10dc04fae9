import type { SqlBool } from 'kysely';
import type { MirrorDatabase } from '../store/index.js';

/**
 * Row types of the `rpt_` tables (migration 0100_reporting, plus rpt_sync_health.running_since
 * from 0200; docs/schema.md, "Reporting tables"). Read back as the store reads every table: text
 * timestamps `YYYY-MM-DD HH:MM:SS.SSS`, dates `yyyy-mm-dd`, bigint and numeric as numbers, flags 0/1
 * (SQLite) or true/false (PostgreSQL). Key columns are NOT NULL; every other column may be NULL.
 */
type Ts = string;
type Day = string;

export interface RptTicketsTable {
  ticket_id: string;
  number: number | null;
  key: string | null;
  subject: string | null;
  status: string | null;
  is_resolved: SqlBool | null;
  priority: string | null;
  team_id: string | null;
  team_name: string | null;
  assignee_id: string | null;
  assignee_name: string | null;
  assignee_email: string | null;
  requester_id: string | null;
  requester_name: string | null;
  requester_email: string | null;
  tags: string | null;
  created_at: Ts | null;
  updated_at: Ts | null;
  first_agent_reply_at: Ts | null;
  first_resolved_at: Ts | null;
  full_resolved_at: Ts | null;
  resolved_from_history: SqlBool | null;
  first_reply_minutes: number | null;
  first_resolution_minutes: number | null;
  full_resolution_minutes: number | null;
  reopen_count: number | null;
  public_agent_replies: number | null;
  internal_notes: number | null;
  customer_messages: number | null;
  is_one_touch: SqlBool | null;
  first_reply_due_at: Ts | null;
  first_reply_sla: string | null;
  first_reply_sla_at: Ts | null;
  resolve_due_at: Ts | null;
  resolve_sla: string | null;
  resolve_sla_at: Ts | null;
  age_minutes: number | null;
  history_complete: SqlBool | null;
  /** Why history_complete is 0 (migration 0900_history_gaps); null when it is 1. */
  history_incomplete_reason: string | null;
  refreshed_at: Ts | null;
}

export interface RptTicketStatusIntervalsTable {
  ticket_id: string;
  seq: number;
  status: string | null;
  is_resolved: SqlBool | null;
  valid_from: Ts | null;
  valid_to: Ts | null;
  minutes: number | null;
  is_resolution: SqlBool | null;
  is_reopen: SqlBool | null;
  assignee_id: string | null;
  source: string | null;
  history_complete: SqlBool | null;
}

export interface RptSupportDailyTable {
  day: Day;
  created: number | null;
  solved: number | null;
  reopened: number | null;
  backlog: number | null;
  first_replies: number | null;
  first_reply_median_minutes: number | null;
  first_reply_p90_minutes: number | null;
  first_reply_sla_achieved: number | null;
  first_reply_sla_breached: number | null;
  resolve_sla_achieved: number | null;
  resolve_sla_breached: number | null;
  sla_achieved: number | null;
  sla_breached: number | null;
}

export interface RptAgentDailyTable {
  agent_id: string;
  agent_name: string | null;
  agent_email: string | null;
  day: Day;
  public_replies: number | null;
  internal_notes: number | null;
  tickets_touched: number | null;
  tickets_solved: number | null;
  one_touch_solves: number | null;
}

export interface RptDealsTable {
  deal_id: string;
  name: string | null;
  pipeline_id: string | null;
  pipeline_name: string | null;
  stage_id: string | null;
  stage_name: string | null;
  stage_position: number | null;
  status: string | null;
  amount: number | null;
  amount_cents: number | null;
  currency: string | null;
  owner_id: string | null;
  owner_name: string | null;
  owner_email: string | null;
  company_id: string | null;
  company_name: string | null;
  primary_contact_id: string | null;
  primary_contact_name: string | null;
  primary_contact_email: string | null;
  created_at: Ts | null;
  updated_at: Ts | null;
  close_date: Day | null;
  stage_entered_at: Ts | null;
  won_at: Ts | null;
  lost_at: Ts | null;
  closed_at: Ts | null;
  days_open: number | null;
  days_to_close: number | null;
  history_complete: SqlBool | null;
  /** Why history_complete is 0 (migration 0900_history_gaps); null when it is 1. */
  history_incomplete_reason: string | null;
  refreshed_at: Ts | null;
}

export interface RptDealStageIntervalsTable {
  deal_id: string;
  seq: number;
  pipeline_id: string | null;
  stage_id: string | null;
  stage_name: string | null;
  stage_position: number | null;
  is_won: SqlBool | null;
  is_lost: SqlBool | null;
  entered_at: Ts | null;
  exited_at: Ts | null;
  minutes: number | null;
  direction: string | null;
  source: string | null;
  history_complete: SqlBool | null;
}

export interface RptPipelineStagesTable {
  pipeline_id: string | null;
  pipeline_name: string | null;
  pipeline_position: number | null;
  stage_id: string | null;
  stage_name: string | null;
  stage_position: number | null;
  currency: string | null;
  open_deals: number | null;
  total_amount: number | null;
  total_amount_cents: number | null;
  avg_days_in_stage: number | null;
  refreshed_at: Ts | null;
}

export interface RptSalesMonthlyTable {
  month: Day | null;
  pipeline_id: string | null;
  pipeline_name: string | null;
  owner_id: string | null;
  owner_name: string | null;
  currency: string | null;
  deals_created: number | null;
  won_count: number | null;
  won_amount: number | null;
  won_amount_cents: number | null;
  lost_count: number | null;
  lost_amount: number | null;
  lost_amount_cents: number | null;
  win_rate_count: number | null;
  win_rate_value: number | null;
  avg_won_amount: number | null;
  avg_days_to_close: number | null;
}

export interface RptSyncHealthTable {
  refreshed_at: Ts | null;
  watermark: Ts | null;
  last_success_at: Ts | null;
  last_run_outcome: string | null;
  lag_seconds: number | null;
  watermark_age_seconds: number | null;
  runs_24h: number | null;
  failed_runs_24h: number | null;
  dirty_records: number | null;
  quarantined_records: number | null;
  /** Added by 0200_bi_types. */
  running_since: Ts | null;
  /** Added by 1000_current_as_of: the sync's "current as of" (src/sync/as-of.ts) and its age at the refresh. */
  current_as_of: Ts | null;
  current_as_of_age_seconds: number | null;
}

/** Migration 1700: the custom field catalog (src/report/custom-fields.ts). */
export interface RptCustomFieldColumnsTable {
  entity_type: string;
  key: string;
  column_name: string | null;
  type: string | null;
  first_seen_at: Ts | null;
  widened_at: Ts | null;
  widened_from: string | null;
  widened_value: string | null;
}

/** Migration 1700: the versions tables (src/report/versions.ts). */
export interface RptTicketVersionsTable {
  ticket_id: string;
  valid_from: Ts;
  valid_to: Ts | null;
  status: string | null;
  priority: string | null;
  assignee_id: string | null;
  team_id: string | null;
  source: string | null;
  complete: SqlBool | null;
  incomplete_reason: string | null;
}

export interface RptDealVersionsTable {
  deal_id: string;
  valid_from: Ts;
  valid_to: Ts | null;
  stage_id: string | null;
  status: string | null;
  amount: number | null;
  currency: string | null;
  owner_id: string | null;
  close_date: Day | null;
  source: string | null;
  complete: SqlBool | null;
  incomplete_reason: string | null;
}

/** Columns of a version that are not the record's state (the daily tables hold the state only). */
type VersionOnly = 'valid_from' | 'valid_to' | 'source' | 'complete' | 'incomplete_reason';

/** Migration 1700: the daily tables (src/report/daily.ts): a version's state per day. */
export type RptTicketDailyTable = Omit<RptTicketVersionsTable, VersionOnly> & { day: Day; history_complete: SqlBool | null };
export type RptDealDailyTable = Omit<RptDealVersionsTable, VersionOnly> & { day: Day; history_complete: SqlBool | null };

/** The tables 0100_reporting adds to every mirror; `databaseOf(store).withTables<ReportTables>()` types them. */
// A type, not an interface: Kysely's withTables wants an index signature, which only a type literal has implicitly.
export type ReportTables = {
  rpt_tickets: RptTicketsTable;
  rpt_ticket_status_intervals: RptTicketStatusIntervalsTable;
  rpt_support_daily: RptSupportDailyTable;
  rpt_agent_daily: RptAgentDailyTable;
  rpt_deals: RptDealsTable;
  rpt_deal_stage_intervals: RptDealStageIntervalsTable;
  rpt_pipeline_stages: RptPipelineStagesTable;
  rpt_sales_monthly: RptSalesMonthlyTable;
  rpt_sync_health: RptSyncHealthTable;
  rpt_custom_field_columns: RptCustomFieldColumnsTable;
  /** One column per custom field key, added at run time: only the id is known here. */
  rpt_ticket_custom_fields: { ticket_id: string };
  rpt_deal_custom_fields: { deal_id: string };
  rpt_ticket_versions: RptTicketVersionsTable;
  rpt_deal_versions: RptDealVersionsTable;
  rpt_ticket_daily: RptTicketDailyTable;
  rpt_deal_daily: RptDealDailyTable;
  rpt_daily_windows: { entity_type: string; window_days: number | null; last_day: Day | null };
};

/** The mirror's tables and the reporting ones: what the refresh statements read and write. */
export type ReportDatabase = MirrorDatabase & ReportTables;
