import type { REPORT_TABLES } from './tables.js';
import type { MirrorDatabase, RowOf } from '../store/index.js';

/**
 * Row types of the `rpt_` tables (docs/schema.md, "Reporting tables"), each derived from its
 * declaration (src/report/tables.ts). Read back as the store reads every table: text timestamps
 * `YYYY-MM-DD HH:MM:SS.SSS`, dates `yyyy-mm-dd`, bigint as numbers, amounts as numbers (SQLite
 * REAL, PostgreSQL numeric parsed by the store), flags 0/1 (SQLite) or true/false (PostgreSQL).
 */
export type RptTicketsTable = RowOf<typeof REPORT_TABLES.rpt_tickets>;
export type RptTicketStatusIntervalsTable = RowOf<typeof REPORT_TABLES.rpt_ticket_status_intervals>;
export type RptSupportDailyTable = RowOf<typeof REPORT_TABLES.rpt_support_daily>;
export type RptAgentDailyTable = RowOf<typeof REPORT_TABLES.rpt_agent_daily>;
export type RptDealsTable = RowOf<typeof REPORT_TABLES.rpt_deals>;
export type RptDealStageIntervalsTable = RowOf<typeof REPORT_TABLES.rpt_deal_stage_intervals>;
export type RptPipelineStagesTable = RowOf<typeof REPORT_TABLES.rpt_pipeline_stages>;
export type RptSalesMonthlyTable = RowOf<typeof REPORT_TABLES.rpt_sales_monthly>;
export type RptSyncHealthTable = RowOf<typeof REPORT_TABLES.rpt_sync_health>;
export type RptCustomFieldColumnsTable = RowOf<typeof REPORT_TABLES.rpt_custom_field_columns>;
export type RptTicketVersionsTable = RowOf<typeof REPORT_TABLES.rpt_ticket_versions>;
export type RptDealVersionsTable = RowOf<typeof REPORT_TABLES.rpt_deal_versions>;
export type RptTicketDailyTable = RowOf<typeof REPORT_TABLES.rpt_ticket_daily>;
export type RptDealDailyTable = RowOf<typeof REPORT_TABLES.rpt_deal_daily>;
export type RptDailyWindowsTable = RowOf<typeof REPORT_TABLES.rpt_daily_windows>;

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
  rpt_daily_windows: RptDailyWindowsTable;
};

/** The mirror's tables and the reporting ones: what the refresh statements read and write. */
export type ReportDatabase = MirrorDatabase & ReportTables;
