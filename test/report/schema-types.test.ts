import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReportTables } from '../../src/report/schema.js';
import { dialects } from '../helpers/dialects.js';
import { reportStore } from './stores.js';
import { databaseOf } from '../../src/store/internal.js';

/**
 * Every column of every rpt_ table's row type, listed once. The mapped type makes the compiler
 * reject a list missing a column of the type or naming one it lacks, so the list is the type's
 * key set; the test then compares it with the columns the migrations actually create.
 */
// prettier-ignore
const TYPED: { [T in keyof ReportTables]: Record<keyof ReportTables[T], true> } = {
  rpt_tickets: {
    ticket_id: true, number: true, key: true, subject: true, status: true, is_resolved: true, priority: true, team_id: true,
    team_name: true, assignee_id: true, assignee_name: true, assignee_email: true, requester_id: true, requester_name: true,
    requester_email: true, tags: true, created_at: true, updated_at: true, first_agent_reply_at: true, first_resolved_at: true,
    full_resolved_at: true, resolved_from_history: true, first_reply_minutes: true, first_resolution_minutes: true,
    full_resolution_minutes: true, reopen_count: true, public_agent_replies: true, internal_notes: true, customer_messages: true,
    is_one_touch: true, first_reply_due_at: true, first_reply_sla: true, first_reply_sla_at: true, resolve_due_at: true,
    resolve_sla: true, resolve_sla_at: true, age_minutes: true, history_complete: true, history_incomplete_reason: true,
    refreshed_at: true,
  },
  rpt_ticket_status_intervals: {
    ticket_id: true, seq: true, status: true, is_resolved: true, valid_from: true, valid_to: true, minutes: true,
    is_resolution: true, is_reopen: true, assignee_id: true, source: true, history_complete: true,
  },
  rpt_support_daily: {
    day: true, created: true, solved: true, reopened: true, backlog: true, first_replies: true, first_reply_median_minutes: true,
    first_reply_p90_minutes: true, first_reply_sla_achieved: true, first_reply_sla_breached: true, resolve_sla_achieved: true,
    resolve_sla_breached: true, sla_achieved: true, sla_breached: true,
  },
  rpt_agent_daily: {
    agent_id: true, agent_name: true, agent_email: true, day: true, public_replies: true, internal_notes: true,
    tickets_touched: true, tickets_solved: true, one_touch_solves: true,
  },
  rpt_deals: {
    deal_id: true, name: true, pipeline_id: true, pipeline_name: true, stage_id: true, stage_name: true, stage_position: true,
    status: true, amount: true, amount_cents: true, currency: true, owner_id: true, owner_name: true, owner_email: true,
    company_id: true, company_name: true, primary_contact_id: true, primary_contact_name: true, primary_contact_email: true,
    created_at: true, updated_at: true, close_date: true, stage_entered_at: true, won_at: true, lost_at: true, closed_at: true,
    days_open: true, days_to_close: true, history_complete: true, history_incomplete_reason: true, refreshed_at: true,
  },
  rpt_deal_stage_intervals: {
    deal_id: true, seq: true, pipeline_id: true, stage_id: true, stage_name: true, stage_position: true, is_won: true,
    is_lost: true, entered_at: true, exited_at: true, minutes: true, direction: true, source: true, history_complete: true,
  },
  rpt_pipeline_stages: {
    pipeline_id: true, pipeline_name: true, pipeline_position: true, stage_id: true, stage_name: true, stage_position: true,
    currency: true, open_deals: true, total_amount: true, total_amount_cents: true, avg_days_in_stage: true, refreshed_at: true,
  },
  rpt_sales_monthly: {
    month: true, pipeline_id: true, pipeline_name: true, owner_id: true, owner_name: true, currency: true, deals_created: true,
    won_count: true, won_amount: true, won_amount_cents: true, lost_count: true, lost_amount: true, lost_amount_cents: true,
    win_rate_count: true, win_rate_value: true, avg_won_amount: true, avg_days_to_close: true,
  },
  rpt_sync_health: {
    refreshed_at: true, watermark: true, last_success_at: true, last_run_outcome: true, lag_seconds: true,
    watermark_age_seconds: true, runs_24h: true, failed_runs_24h: true, dirty_records: true, quarantined_records: true,
    running_since: true, current_as_of: true, current_as_of_age_seconds: true,
  },
  rpt_custom_field_columns: {
    entity_type: true, key: true, column_name: true, type: true, first_seen_at: true, widened_at: true, widened_from: true,
    widened_value: true,
  },
  // Before the first refresh: the id only (a column per custom field key is added as keys appear).
  rpt_ticket_custom_fields: { ticket_id: true },
  rpt_deal_custom_fields: { deal_id: true },
  rpt_ticket_versions: {
    ticket_id: true, valid_from: true, valid_to: true, status: true, priority: true, assignee_id: true, team_id: true,
    source: true, complete: true, incomplete_reason: true,
  },
  rpt_deal_versions: {
    deal_id: true, valid_from: true, valid_to: true, stage_id: true, status: true, amount: true, currency: true, owner_id: true,
    close_date: true, source: true, complete: true, incomplete_reason: true,
  },
  rpt_ticket_daily: { ticket_id: true, day: true, status: true, priority: true, assignee_id: true, team_id: true, history_complete: true },
  rpt_deal_daily: {
    deal_id: true, day: true, stage_id: true, status: true, amount: true, currency: true, owner_id: true, close_date: true,
    history_complete: true,
  },
  rpt_daily_windows: { entity_type: true, window_days: true, last_day: true },
};

for (const dialect of dialects)
  describe(`rpt_ row types (${dialect.name})`, () => {
    let opened: Awaited<ReturnType<typeof reportStore>> | null = null;
    afterEach(async () => {
      await opened?.close();
      opened = null;
    });

    it('name exactly the columns the migrations create', async () => {
      opened = await reportStore(dialect);
      const catalog =
        dialect.name === 'sqlite'
          ? sql<{ table_name: string; column_name: string }>`
            SELECT m.name AS table_name, p.name AS column_name
            FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name LIKE 'rpt\\_%' ESCAPE '\\'`
          : sql<{ table_name: string; column_name: string }>`
            SELECT table_name, column_name FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name LIKE 'rpt\\_%'`;
      const actual: Record<string, string[]> = {};
      for (const r of (await catalog.execute(databaseOf(opened.store))).rows) (actual[r.table_name] ??= []).push(r.column_name);
      const typed = Object.fromEntries(Object.entries(TYPED).map(([table, cols]) => [table, Object.keys(cols).sort()]));
      for (const cols of Object.values(actual)) cols.sort();
      expect(actual).toEqual(typed);
    });
  });
