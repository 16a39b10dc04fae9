/** The reporting layer's public surface: refresh the rpt_ tables, read the headline figures. */
export {
  refreshRptTables,
  refreshSyncHealthOnly,
  RPT_TABLE_NAMES,
  type ReportingChanges,
  type RefreshOptions,
  type RefreshResult,
} from './refresh.js';
export { readHeadlines, type Headlines } from './headlines.js';
export { RESOLVED_STATUSES } from './sql-util.js';
export { readWidenedColumns, type WidenedColumnRow, type CustomFieldChanges } from './custom-fields.js';
export { DEFAULT_DAILY_WINDOW_DAYS } from './daily.js';
