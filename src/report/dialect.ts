import { sql, type RawBuilder } from 'kysely';
import { dialectOf, type DialectName } from '../store/dialect.js';
import { toDbTimestamp } from '../util/time.js';

/**
 * The few SQL fragments where SQLite and PostgreSQL differ, so each refresh statement is written
 * once. SQLite stores timestamps as 23-char UTC text `YYYY-MM-DD HH:MM:SS.SSS` (docs/schema.md)
 * and days as 'yyyy-mm-dd' text;
 * PostgreSQL has timestamptz and date columns. Every day boundary is taken in UTC explicitly, never
 * through the session time zone, so both give the same days.
 */
export interface SqlDialect {
  name: DialectName;
  /** Boolean literals: 0/1 in SQLite (its booleans are integers), TRUE/FALSE in PostgreSQL. */
  T: string;
  F: string;
  /** Column type of a UTC day key in temp tables. */
  dayType: string;
  /** An 8-byte float cast target (REAL is 4 bytes in PostgreSQL). */
  real: string;
  /** A temp table's qualified name. */
  temp(name: string): string;
  /** The refresh clock as a typed literal. */
  now(iso: string): string;
  /** Whole milliseconds from a to b (timestamps). */
  msBetween(a: string, b: string): string;
  /** UTC day of a timestamp: text in SQLite, date in PostgreSQL. */
  day(ts: string): string;
  /** The first instant of a day key, comparable with timestamp columns. */
  dayStart(day: string): string;
  nextDay(day: string): string;
  /** UTC month of a timestamp (group key) and that key as the month's first day. */
  month(ts: string): string;
  monthDate(month: string): string;
  /** 24 hours before a timestamp. */
  dayBefore(ts: string): string;
  greatest(a: string, b: string): string;
  /**
   * A timestamp column holds a value, in a form that can use an index on it. SQLite plans
   * `IS NOT NULL` as a scan of the whole table (at L, `tickets` whole for its few deleted rows);
   * as stored text a set value is above ''.
   */
  isSet(ts: string): string;
  /** A boolean expression as 0/1. */
  int(cond: string): string;
  /** Rows where cond holds (NULL counts as not holding). */
  countIf(cond: string): string;
  /** True when any row's boolean is true. */
  boolOr(expr: string): string;
  /** Integer part of a non-negative number (PostgreSQL's CAST to integer rounds). */
  trunc(x: string): string;
  /** `INSERT ... ` that skips rows violating a key; close with `ignoreTail`. */
  insertIgnore(table: string): string;
  ignoreTail: string;
  /** The sync watermark (JSON string in sync_state.value_json) as a timestamp. */
  watermark: string;
  /** The as-of of a `current_as_of` sync_state value (a JSON object, src/sync/state.ts) as a timestamp. */
  asOf: string;
  /** Inserts the ids into a one-column temp table. */
  insertIds(table: string, ids: readonly string[]): RawBuilder<unknown>;
  /** Statements run first in the refresh transaction (settings scoped to it). */
  refreshSetup: readonly string[];
  /**
   * A WITH entry that empties `table` within the statement that fills it again (PostgreSQL's
   * data-modifying WITH: one atomic statement, no transaction of its own), or null where a WITH
   * cannot modify (SQLite: a DELETE first, in the same transaction).
   */
  emptiedInWith(table: string): string | null;
  /** Gathers planner statistics on a just-filled temp table, or null when the dialect needs none. */
  analyzeTemp(table: string): string | null;
  /** An ISO 8601 instant with offset (text) as a stored timestamp, in UTC. */
  timestampOf(text: string): string;
  /** A `yyyy-mm-dd` text as a stored date. */
  dateOf(text: string): string;
  /** A decimal text (`1234.50`) as a stored amount (rpt_deals.amount's type). */
  decimalOf(text: string): string;
  /** The day before a day key. */
  prevDay(day: string): string;
  /** A day key as a literal (`yyyy-mm-dd`, checked). */
  dayLiteral(day: string): string;
  /** Creates (once per connection) an index on a temp table. */
  tempIndex(name: string, table: string, columns: readonly string[]): string;
  /**
   * Several statements can go in one call, run in order within the caller's transaction:
   * PostgreSQL's simple query protocol takes a `;`-separated string (each statement is parsed,
   * planned and run after the one before it ran, with a snapshot of its own). SQLite's prepare
   * takes one statement.
   */
  severalPerCall: boolean;
}

/** Whole ms via julianday: ~40 µs precision at today's dates, so rounding gives the exact millisecond. */
const sqliteMs = (a: string, b: string) => `CAST(round((julianday(${b}) - julianday(${a})) * 86400000.0) AS INTEGER)`;
/** extract(epoch) is exact numeric (microseconds) in PostgreSQL 14+; the difference times 1000 is whole. */
const pgMs = (a: string, b: string) => `CAST(round((extract(epoch FROM ${b}) - extract(epoch FROM ${a})) * 1000) AS bigint)`;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
function checked(iso: string): string {
  if (!ISO.test(iso)) throw new RangeError(`reporting clock must be a 24-char UTC timestamp, got ${iso}`);
  return `'${iso}'`;
}
const DAY_KEY = /^\d{4}-\d{2}-\d{2}$/;
function checkedDay(day: string): string {
  if (!DAY_KEY.test(day)) throw new RangeError(`a reporting day must be yyyy-mm-dd, got ${day}`);
  return `'${day}'`;
}
/** The clock in the stored form, so it compares as text with stored timestamps. */
const sqliteNow = (iso: string) => `'${toDbTimestamp(checked(iso).slice(1, -1))}'`;
/** SQLite's strftime pattern of the stored form. */
const STORED = `'%Y-%m-%d %H:%M:%f'`;

const SQLITE: SqlDialect = {
  name: 'sqlite',
  T: '1',
  F: '0',
  dayType: 'TEXT',
  real: 'REAL',
  temp: (name) => `temp.${name}`,
  now: sqliteNow,
  msBetween: sqliteMs,
  // Stored timestamps are the fixed 23-char form, so substr is their UTC day at a fraction of date()'s cost.
  day: (ts) => `substr(${ts}, 1, 10)`,
  dayStart: (day) => day,
  nextDay: (day) => `date(${day}, '+1 day')`,
  month: (ts) => `substr(${ts}, 1, 7)`,
  monthDate: (month) => `${month} || '-01'`,
  dayBefore: (ts) => `strftime(${STORED}, ${ts}, '-1 day')`,
  greatest: (a, b) => `max(${a}, ${b})`,
  isSet: (ts) => `${ts} > ''`,
  int: (cond) => `(${cond})`,
  countIf: (cond) => `sum(${cond})`,
  boolOr: (expr) => `max(${expr})`,
  trunc: (x) => `CAST(${x} AS INTEGER)`,
  insertIgnore: (table) => `INSERT OR IGNORE INTO ${table}`,
  ignoreTail: '',
  watermark: `strftime(${STORED}, json_extract(value_json, '$'))`,
  asOf: `strftime(${STORED}, json_extract(value_json, '$.asOf'))`,
  // One JSON parameter instead of a bound list: no driver limit on the number of ids.
  insertIds: (table, ids) => sql`INSERT OR IGNORE INTO ${sql.raw(table)} (id) SELECT value FROM json_each(${JSON.stringify(ids)})`,
  refreshSetup: [],
  emptiedInWith: () => null,
  analyzeTemp: () => null,
  timestampOf: (text) => `strftime(${STORED}, ${text})`,
  dateOf: (text) => text,
  decimalOf: (text) => `CAST(${text} AS REAL)`,
  prevDay: (day) => `date(${day}, '-1 day')`,
  dayLiteral: (day) => checkedDay(day),
  tempIndex: (name, table, columns) => `CREATE INDEX IF NOT EXISTS temp.${name} ON ${table} (${columns.join(', ')})`,
  severalPerCall: false,
};

const POSTGRES: SqlDialect = {
  name: 'postgres',
  T: 'TRUE',
  F: 'FALSE',
  dayType: 'date',
  real: 'double precision',
  temp: (name) => `pg_temp.${name}`,
  now: (iso) => `CAST(${checked(iso)} AS timestamptz)`,
  msBetween: pgMs,
  day: (ts) => `CAST((${ts}) AT TIME ZONE 'UTC' AS date)`,
  dayStart: (day) => `(CAST(${day} AS timestamp) AT TIME ZONE 'UTC')`,
  nextDay: (day) => `(${day} + 1)`,
  month: (ts) => `CAST(date_trunc('month', (${ts}) AT TIME ZONE 'UTC') AS date)`,
  monthDate: (month) => month,
  // 24 hours, not '1 day': interval days follow the session time zone's DST rules.
  dayBefore: (ts) => `(${ts} - interval '24 hours')`,
  greatest: (a, b) => `greatest(${a}, ${b})`,
  isSet: (ts) => `${ts} IS NOT NULL`,
  int: (cond) => `CAST((${cond}) AS integer)`,
  countIf: (cond) => `count(*) FILTER (WHERE ${cond})`,
  boolOr: (expr) => `bool_or(${expr})`,
  trunc: (x) => `CAST(trunc(${x}) AS bigint)`,
  insertIgnore: (table) => `INSERT INTO ${table}`,
  ignoreTail: ' ON CONFLICT DO NOTHING',
  watermark: `CAST(CAST(value_json AS jsonb) #>> '{}' AS timestamptz)`,
  asOf: `CAST(CAST(value_json AS jsonb) #>> '{asOf}' AS timestamptz)`,
  // One text[] parameter: no limit on the number of ids.
  insertIds: (table, ids) => sql`INSERT INTO ${sql.raw(table)} (id) SELECT unnest(CAST(${[...ids]} AS text[])) ON CONFLICT DO NOTHING`,
  // The refresh statements are large plans over small row counts (temp scope tables): JIT
  // compilation (default on above cost 100,000) took ~1 s per statement for a 100-ticket cycle.
  // At the default random_page_cost (4, a disk's seek) a tick's scope of 1,461 tickets out of
  // 50,000 was hashed against whole scans of rpt_tickets, seven of them in one statement, instead
  // of probing the primary key; the tables a refresh reads were written moments before and sit in
  // cache, where a probe costs about what a sequential read does. 1.1 cut an L tick's refresh from
  // 1,191 to 1,056 ms and left the full rebuild as it was (bench/README.md, "Sixteenth pass").
  refreshSetup: ['SET LOCAL jit = off', 'SET LOCAL random_page_cost = 1.1'],
  emptiedInWith: (table) => `emptied AS (DELETE FROM ${table} RETURNING 1)`,
  // Autovacuum never analyses temp tables; without statistics the planner assumes ~1,360 ids in a
  // scope table and scans rpt_ticket_status_intervals whole instead of probing its primary key.
  analyzeTemp: (table) => `ANALYZE ${table}`,
  timestampOf: (text) => `CAST(${text} AS timestamptz)`,
  dateOf: (text) => `CAST(${text} AS date)`,
  decimalOf: (text) => `CAST(${text} AS numeric)`,
  prevDay: (day) => `(${day} - 1)`,
  dayLiteral: (day) => `CAST(${checkedDay(day)} AS date)`,
  tempIndex: (name, table, columns) => `CREATE INDEX IF NOT EXISTS ${name} ON pg_temp.${table} (${columns.join(', ')})`,
  severalPerCall: true,
};

/** The fragments for the dialect behind a Kysely or transaction (only its adapter is read). */
export function sqlDialect(db: Parameters<typeof dialectOf>[0]): SqlDialect {
  return dialectOf(db) === 'postgres' ? POSTGRES : SQLITE;
}

export const minutesBetween = (d: SqlDialect, a: string, b: string): string => `(CAST(${d.msBetween(a, b)} AS ${d.real}) / 60000)`;
/**
 * Whole minutes from a to b, truncated toward zero (integer division in both dialects). Ages are
 * kept in whole minutes so that a refresh rewrites only the rows whose age moved (tickets.ts).
 */
export const wholeMinutesBetween = (d: SqlDialect, a: string, b: string): string => `CAST(${d.msBetween(a, b)} / 60000 AS ${d.real})`;
export const daysBetween = (d: SqlDialect, a: string, b: string): string => `(CAST(${d.msBetween(a, b)} AS ${d.real}) / 86400000)`;
/**
 * Whole minutes from a to b, truncated toward zero, in days: a clock-driven figure that moves once
 * a minute, so a refresh rewrites only the rows whose value moved (deals.ts, `days_open`).
 */
export const wholeMinuteDaysBetween = (d: SqlDialect, a: string, b: string): string => `(${wholeMinutesBetween(d, a, b)} / 1440)`;
