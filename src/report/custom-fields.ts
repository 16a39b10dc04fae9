import { sql, type Kysely } from 'kysely';
import { capabilitiesOf } from '../store/dialect.js';
import { fromDbTimestamp } from '../util/time.js';
import type { Store } from '../store/index.js';
import { databaseOf } from '../store/internal.js';
import type { ReportDatabase } from './schema.js';
import { sqlDialect, type SqlDialect } from './dialect.js';
import { columnNameFor, joinTypes, typeOfValue, type CustomFieldType } from './custom-field-types.js';
import { DEAL_SCOPE, nowed, runAll, TICKET_SCOPE, type ReportedType } from './sql-util.js';

/**
 * `rpt_ticket_custom_fields` / `rpt_deal_custom_fields`: one row per live record, one typed column
 * per custom field key (docs/schema.md, "Custom fields as columns"). The catalog
 * `rpt_custom_field_columns` keeps each key's column and type across runs. A refresh types the
 * values of the records it rebuilds, adds the column of a key seen for the first time, and widens
 * to text, once, the column of a key whose new value does not fit its type; after either, the
 * whole table is rebuilt so every row holds its value in the column's new type.
 */

interface Target {
  kind: ReportedType;
  table: string;
  idColumn: string;
  records: 'tickets' | 'deals';
  fields: 'ticket_fields' | 'deal_fields';
  parent: string;
  scope: string;
}

const TARGETS: Record<ReportedType, Target> = {
  ticket: {
    kind: 'ticket',
    table: 'rpt_ticket_custom_fields',
    idColumn: 'ticket_id',
    records: 'tickets',
    fields: 'ticket_fields',
    parent: 'ticket_id',
    scope: TICKET_SCOPE,
  },
  deal: {
    kind: 'deal',
    table: 'rpt_deal_custom_fields',
    idColumn: 'deal_id',
    records: 'deals',
    fields: 'deal_fields',
    parent: 'deal_id',
    scope: DEAL_SCOPE,
  },
};

/** A catalog row: a key, its column and its type (null: every value so far null, no column yet). */
interface Column {
  key: string;
  column: string;
  type: CustomFieldType | null;
}

/** A column widened to text by this refresh: the sync logs it, `status` lists every widened column. */
export interface WidenedColumn {
  entityType: ReportedType;
  key: string;
  column: string;
  from: CustomFieldType;
  /** The first value that did not fit, as stored text (cut to 200 characters). */
  value: string;
}

/** What a refresh did to the custom field tables' columns. */
export interface CustomFieldChanges {
  added: { entityType: ReportedType; key: string; column: string; type: CustomFieldType }[];
  widened: WidenedColumn[];
}

/** SQL text literal of an upstream string (keys are upstream text). */
const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;
const quoted = (name: string) => `"${name}"`;

/** The type each key's values in scope fit, with the first value of each type seen. */
async function observedTypes(db: Kysely<ReportDatabase>, d: SqlDialect, t: Target) {
  const rows = await sql
    .raw<{ key: string; value_text: string | null; j: string | null }>(
      `SELECT DISTINCT f.key, f.value_text, CAST(f.value_json AS TEXT) AS j
       FROM ${d.temp(t.scope)} sc CROSS JOIN ${t.records} r CROSS JOIN ${t.fields} f
       WHERE r.id = sc.id AND r.deleted_at IS NULL AND f.${t.parent} = r.id`,
    )
    .execute(db);
  const out = new Map<string, { type: CustomFieldType | null; samples: Map<CustomFieldType, string> }>();
  for (const r of rows.rows) {
    const type = typeOfValue(r.value_text, r.j);
    const seen = out.get(r.key) ?? { type: null, samples: new Map<CustomFieldType, string>() };
    seen.type = joinTypes(seen.type, type);
    if (type !== null && !seen.samples.has(type)) seen.samples.set(type, (r.value_text ?? r.j ?? '').slice(0, 200));
    out.set(r.key, seen);
  }
  return out;
}

async function catalog(db: Kysely<ReportDatabase>, kind: ReportedType): Promise<Column[]> {
  const rows = await sql<{ key: string; column_name: string; type: string | null }>`
    SELECT key, column_name, type FROM rpt_custom_field_columns WHERE entity_type = ${kind} ORDER BY key`.execute(db);
  return rows.rows.map((r) => ({ key: r.key, column: r.column_name, type: r.type as CustomFieldType | null }));
}

/** The value of one key for the record `r`, in its column's type. */
function valueExpr(d: SqlDialect, t: Target, c: Column): string {
  const v = 'f.value_text';
  const expr = {
    number: `CAST(${v} AS ${d.real})`,
    boolean: `CASE ${v} WHEN 'true' THEN ${d.T} WHEN 'false' THEN ${d.F} END`,
    timestamp: d.timestampOf(v),
    date: d.dateOf(v),
    text: `coalesce(${v}, CAST(f.value_json AS TEXT))`,
  }[c.type ?? 'text'];
  return `(SELECT ${expr} FROM ${t.fields} f WHERE f.${t.parent} = r.id AND f.key = ${lit(c.key)})`;
}

/**
 * Brings the catalog and the table's columns up to date with the values in scope. `altered`: a
 * column was added or widened; otherwise `columns` is the catalog as it stands (a key first seen
 * with no typed value gets no column, so what was read before holds).
 */
async function settleColumns(
  db: Kysely<ReportDatabase>,
  t: Target,
  now: string,
  changes: CustomFieldChanges,
): Promise<{ altered: boolean; columns: Column[] }> {
  const d = sqlDialect(db);
  const types = capabilitiesOf(db).columnType;
  const observed = await observedTypes(db, d, t);
  const read = await catalog(db, t.kind);
  const known = new Map(read.map((c) => [c.key, c]));
  const taken = new Set([...known.values()].map((c) => c.column));
  let altered = false;
  const at = d.now(now);
  for (const [key, seen] of [...observed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const before = known.get(key);
    if (!before) {
      const column = columnNameFor(key, [t.idColumn], taken);
      taken.add(column);
      await sql
        .raw(
          `INSERT INTO rpt_custom_field_columns (entity_type, key, column_name, type, first_seen_at)
           VALUES (${lit(t.kind)}, ${lit(key)}, ${lit(column)}, ${seen.type === null ? 'NULL' : lit(seen.type)}, ${at})`,
        )
        .execute(db);
      if (seen.type !== null) {
        await sql.raw(`ALTER TABLE ${t.table} ADD COLUMN ${quoted(column)} ${types[seen.type]}`).execute(db);
        changes.added.push({ entityType: t.kind, key, column, type: seen.type });
        altered = true;
      }
      continue;
    }
    const next = joinTypes(before.type, seen.type);
    if (next === before.type) continue;
    const where = `entity_type = ${lit(t.kind)} AND key = ${lit(key)}`;
    if (before.type === null) {
      await sql.raw(`UPDATE rpt_custom_field_columns SET type = ${lit(next as string)} WHERE ${where}`).execute(db);
      await sql.raw(`ALTER TABLE ${t.table} ADD COLUMN ${quoted(before.column)} ${types[next as CustomFieldType]}`).execute(db);
      changes.added.push({ entityType: t.kind, key, column: before.column, type: next as CustomFieldType });
    } else {
      const value = [...seen.samples].find(([type]) => type !== before.type)?.[1] ?? '';
      await sql
        .raw(
          `UPDATE rpt_custom_field_columns SET type = 'text', widened_at = ${at}, widened_from = ${lit(before.type)},
           widened_value = ${lit(value)} WHERE ${where}`,
        )
        .execute(db);
      // Dropped and added again as text (both dialects alike), then filled by the whole-table rebuild below.
      await sql.raw(`ALTER TABLE ${t.table} DROP COLUMN ${quoted(before.column)}`).execute(db);
      await sql.raw(`ALTER TABLE ${t.table} ADD COLUMN ${quoted(before.column)} ${types.text}`).execute(db);
      changes.widened.push({ entityType: t.kind, key, column: before.column, from: before.type, value });
    }
    altered = true;
  }
  return { altered, columns: read };
}

/** Rebuilds the rows of the records in scope (every live record when `all`), with the catalog's `read` if unchanged since. */
async function fillRows(db: Kysely<ReportDatabase>, t: Target, all: boolean, now: string, read: Column[] | null): Promise<void> {
  const d = sqlDialect(db);
  const columns = (read ?? (await catalog(db, t.kind))).filter((c) => c.type !== null);
  const scoped = `${d.temp(t.scope)} sc CROSS JOIN ${t.records} r WHERE r.id = sc.id AND r.deleted_at IS NULL`;
  const names = [t.idColumn, ...columns.map((c) => quoted(c.column))].join(', ');
  const values = ['r.id', ...columns.map((c) => valueExpr(d, t, c))].join(',\n  ');
  const from = all ? `${t.records} r WHERE r.deleted_at IS NULL` : scoped;
  await runAll(d, db, [
    nowed(d, `DELETE FROM ${t.table}${all ? '' : ` WHERE ${t.idColumn} IN (SELECT id FROM ${d.temp(t.scope)})`}`, now),
    `INSERT INTO ${t.table} (${names})\nSELECT ${values}\nFROM ${from}`,
  ]);
}

/**
 * Refreshes one entity's custom field table for the records in its scope table (filled by the
 * caller; every record when `all`). Columns added or widened are reported in `changes`.
 */
export async function refreshCustomFields(
  db: Kysely<ReportDatabase>,
  kind: ReportedType,
  all: boolean,
  now: string,
  changes: CustomFieldChanges,
): Promise<void> {
  const t = TARGETS[kind];
  const { altered, columns } = await settleColumns(db, t, now, changes);
  await fillRows(db, t, all || altered, now, altered ? null : columns);
}

/** A column widened to text, as `status` lists it. */
export interface WidenedColumnRow {
  entityType: string;
  key: string;
  column: string;
  from: string;
  at: string;
  /** The first value that did not fit (cut to 200 characters). */
  value: string;
}

/** Every column widened to text so far, oldest first: what `status` shows (a mirror not migrated this far has none). */
export async function readWidenedColumns(store: Store): Promise<WidenedColumnRow[]> {
  const db = databaseOf(store);
  if ((await capabilitiesOf(db).tableExists('rpt_custom_field_columns').execute(db)).rows.length === 0) return [];
  const rows = await sql<{
    entity_type: string;
    key: string;
    column_name: string;
    widened_from: string;
    widened_at: unknown;
    widened_value: string;
  }>`
    SELECT entity_type, key, column_name, widened_from, widened_at, widened_value FROM rpt_custom_field_columns
    WHERE widened_at IS NOT NULL ORDER BY widened_at, entity_type, key`.execute(db);
  return rows.rows.map((r) => ({
    entityType: r.entity_type,
    key: r.key,
    column: r.column_name,
    from: r.widened_from,
    at: fromDbTimestamp(r.widened_at as string) ?? String(r.widened_at),
    value: r.widened_value,
  }));
}
